import CLibSSH2
import Foundation

/// Public key authentication during set-up, from a key file or through ssh-agent. A failure names the cause the
/// user can act on (no or a wrong passphrase, an RSA key that OpenSSH refuses from libssh2 1.10, a key format
/// libssh2 cannot read, sshd's MaxAuthTries) instead of passing on a bare libssh2 error code.
struct SessionAuthenticator {
    let context: SessionContext
    let waiter: SetUpWaiter

    private var endpoint: SSHEndpoint { context.endpoint }
    private var lastError: String { context.lastErrorMessage(fallback: "?") }

    func authenticate(_ session: OpaquePointer, with authentication: SSHAuthentication) throws(SSHError) {
        switch authentication {
        case let .keyFile(path, passphrase):
            try authenticateWithKeyFile(session, path: path, passphrase: passphrase)
        case let .certificate(keyPath, certificatePath, passphrase):
            try authenticateWithKeyFile(session, path: keyPath, passphrase: passphrase, certificate: certificatePath)
        case let .agent(socketPath):
            try authenticateWithAgent(session, socketPath: socketPath)
        }
    }

    /// With `certificate`, the certificate is offered as the public key (its type, e.g.
    /// ssh-ed25519-cert-v01@openssh.com, names the key type it signs with) and the key signs.
    private func authenticateWithKeyFile(
        _ session: OpaquePointer, path: String, passphrase: String?, certificate: String? = nil
    ) throws(SSHError) {
        if let certificate, !LibSSH2Version.supportsCertificates {
            throw .authenticationFailed(endpoint, method: "certificate \(certificate)",
                                        reason: "libssh2 \(LibSSH2Version.text), which Fanout runs with here, cannot "
                                            + "sign with OpenSSH certificates (libssh2 1.11 or later can). Install a "
                                            + "newer libssh2, or let the agent accept the key itself (authorized_keys)")
        }
        if let certificate, !FileManager.default.isReadableFile(atPath: certificate) {
            throw .keyFileUnusable(path: certificate, reason: "the certificate cannot be read. Check the path "
                + "(CertificateFile, or KEY-cert.pub beside the key) and its permissions.")
        }
        let info: PrivateKeyInfo
        switch PrivateKeyInfo.inspect(path: path) {
        case .failure(.unreadable(let reason)):
            throw .keyFileUnusable(path: path, reason: "cannot read it: \(reason). Check the path and permissions.")
        case .success(let inspected):
            info = inspected
        }
        if info.isEncrypted == true && (passphrase ?? "").isEmpty {
            throw .keyFileUnusable(path: path, reason: "it is protected by a passphrase and none was given. Give "
                + "the passphrase, or load the key into ssh-agent and authenticate through the agent.")
        }
        let user = endpoint.user
        let rc = try waiter.retry("authentication") {
            libssh2_userauth_publickey_fromfile_ex(session, user, UInt32(user.utf8.count), certificate, path, passphrase)
        }
        if rc == 0 { return }
        if let reason = context.connectionErrorReason(rc) {
            throw .connectionLost(endpoint, reason: "during authentication: \(reason)")
        }
        let message = context.lastErrorMessage(fallback: "error \(rc)")
        if rc == LIBSSH2_ERROR_FILE || rc == LIBSSH2_ERROR_KEYFILE_AUTH_FAILED {
            let reason = info.isEncrypted == true
                ? "wrong passphrase, or a key format libssh2 1.10 cannot read (\(message))."
                : "libssh2 1.10 cannot read it (\(message)). Use an OpenSSH-format ed25519 or ECDSA key "
                    + "(`ssh-keygen -t ed25519`)."
            throw .keyFileUnusable(path: path, reason: reason)
        }
        if let certificate {
            throw .authenticationFailed(endpoint, method: "certificate \(certificate) with key \(path)",
                                        reason: "the server refused it (\(message)). Check that its sshd trusts the "
                                            + "certificate's CA (TrustedUserCAKeys), that the certificate names "
                                            + "\(user) as a principal and has not expired (ssh-keygen -L -f "
                                            + "\(certificate))")
        }
        if info.isRSA {
            throw .rsaKeyRefused(endpoint, keyDescription: "\(path) (ssh-rsa)")
        }
        throw .authenticationFailed(endpoint, method: "public key \(path) (\(info.keyType ?? "unknown type"))",
                                    reason: "the server refused the key (\(message))")
    }

    private func authenticateWithAgent(
        _ session: OpaquePointer, socketPath: String?
    ) throws(SSHError) {
        let path = socketPath ?? ProcessInfo.processInfo.environment["SSH_AUTH_SOCK"]
        guard let path, !path.isEmpty else {
            throw .agentUnavailable(socketPath: nil, reason: "SSH_AUTH_SOCK is not set")
        }
        guard let agent = libssh2_agent_init(session) else {
            throw .agentUnavailable(socketPath: path, reason: "libssh2_agent_init failed")
        }
        defer {
            libssh2_agent_disconnect(agent)
            libssh2_agent_free(agent)
        }
        libssh2_agent_set_identity_path(agent, path)
        if libssh2_agent_connect(agent) != 0 {
            throw .agentUnavailable(socketPath: path, reason: "cannot connect to it (\(lastError))")
        }
        if libssh2_agent_list_identities(agent) != 0 {
            throw .agentUnavailable(socketPath: path, reason: "cannot list its keys (\(lastError))")
        }
        var previous: UnsafeMutablePointer<libssh2_agent_publickey>?
        var tried: [String] = []
        var onlyRSA = true
        var lastMessage = ""
        while true {
            var identity: UnsafeMutablePointer<libssh2_agent_publickey>?
            let found = libssh2_agent_get_identity(agent, &identity, previous)
            if found == 1 { break }
            guard found == 0, let identity else {
                throw .agentUnavailable(socketPath: path, reason: "cannot read its keys (\(lastError))")
            }
            previous = identity
            let blob = Array(UnsafeBufferPointer(start: identity.pointee.blob, count: Int(identity.pointee.blob_len)))
            let type = PrivateKeyInfo.keyType(ofPublicKeyBlob: blob) ?? "unknown"
            let comment = identity.pointee.comment.map { String(cString: $0) } ?? ""
            tried.append(comment.isEmpty ? type : "\(type) \(comment)")
            if type != "ssh-rsa" { onlyRSA = false }
            let user = endpoint.user
            let rc = try waiter.retry("authentication") { libssh2_agent_userauth(agent, user, identity) }
            if rc == 0 { return }
            if let reason = context.connectionErrorReason(rc) {
                let hint = tried.count > 1
                    ? " after \(tried.count) keys from the agent (sshd's MaxAuthTries, default 6, may have been hit: "
                        + "keep fewer keys in the agent, or use a key file)"
                    : ""
                throw .connectionLost(endpoint, reason: "during authentication\(hint): \(reason)")
            }
            lastMessage = context.lastErrorMessage(fallback: "error \(rc)")
        }
        if tried.isEmpty {
            throw .agentUnavailable(socketPath: path, reason: "the agent holds no keys")
        }
        if onlyRSA {
            throw .rsaKeyRefused(endpoint, keyDescription: "offered by ssh-agent (\(tried.joined(separator: "; ")))")
        }
        throw .authenticationFailed(endpoint, method: "ssh-agent at \(path)",
                                    reason: "the server refused all \(tried.count) key(s) "
                                        + "(\(tried.joined(separator: "; "))) (\(lastMessage))")
    }
}
