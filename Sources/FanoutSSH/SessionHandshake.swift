import CLibSSH2
import Foundation

/// What a successful connect hands back to the caller's task.
struct ConnectInfo: Sendable {
    var fingerprint: String
    var keyType: String
    var notes: [String]
    var timings: SSHConnectTimings
}

/// Set-up of one connection, in blocking style on its I/O thread with deadlines: TCP connect, SSH handshake, the
/// host key check against known_hosts, authentication, and the session's internal channel. What it creates (socket,
/// session) goes into the context at once, so that the loop's teardown frees it whichever step fails.
struct SessionHandshake {
    let context: SessionContext
    let authentication: SSHAuthentication
    let options: SSHOptions
    let mailbox: LoopMailbox
    /// Already connected (a tunnel through a bastion): no TCP connect.
    var socket: Int32? = nil

    private var endpoint: SSHEndpoint { context.endpoint }

    /// Returns the connection's description and its open internal channel (see `InternalChannel`).
    func run() throws(SSHError) -> (info: ConnectInfo, internalChannel: OpaquePointer) {
        guard ensureLibSSH2Initialized() else {
            throw .libssh2(endpoint, operation: "libssh2_init", code: -1, message: "libssh2 could not be initialised")
        }
        guard mailbox.wakeUp.isOpen else {
            let code = mailbox.wakeUp.openError
            throw .libssh2(endpoint, operation: "wake-up signal (eventfd or pipe)", code: code,
                           message: LocalFiles.errorText(code))
        }
        let start = monotonicNanos()
        let fd: Int32
        if let socket {
            fd = socket
        } else {
            fd = try TCPConnector.connect(endpoint: endpoint, timeout: options.connectTimeout,
                                          userTimeout: options.deadPeerTimeout, cancelled: { [mailbox] in
                mailbox.connectCancelled
            })
        }
        context.fd = fd
        let connected = monotonicNanos()
        let io = SocketIO(fd: fd)
        context.io = io
        guard let session = fanout_session_init(io.abstractPointer) else {
            throw .libssh2(endpoint, operation: "libssh2_session_init", code: -6, message: "out of memory")
        }
        context.session = session
        installIOCallbacks(on: session)
        libssh2_session_set_blocking(session, 0)

        let waiter = SetUpWaiter(context: context, mailbox: mailbox,
                                 deadline: Deadline(after: options.connectTimeout, now: connected),
                                 timeout: options.connectTimeout)
        var notes: [String] = []
        let knownHosts = try KnownHosts(path: options.knownHostsPath, session: session)
        if !knownHosts.skippedLines.isEmpty {
            notes.append("known_hosts \(options.knownHostsPath): skipped lines libssh2 cannot parse: "
                + knownHosts.skippedLines.map(String.init).joined(separator: ", "))
        }

        // Ask only for host key types known_hosts holds for this host (libssh2 would otherwise pick ECDSA on a
        // host that also has an ed25519 key, and an ed25519-only known_hosts would call it unknown).
        let knownTypes = knownHosts.knownKeyTypes(host: endpoint.host, port: endpoint.port)
        let preferred = knownTypes.isEmpty ? HostKeyType.preferenceForUnknownHosts : knownTypes
        if libssh2_session_method_pref(session, LIBSSH2_METHOD_HOSTKEY, preferred.map(\.name).joined(separator: ",")) != 0 {
            throw .hostKeyTypeNotOffered(endpoint, knownTypes: knownTypes.map(\.name),
                                         knownHostsPath: options.knownHostsPath,
                                         reason: "libssh2 1.10 supports none of these key types")
        }

        let rc = try waiter.retry("SSH handshake") { libssh2_session_handshake(session, fd) }
        if rc != 0 {
            let message = context.lastErrorMessage(fallback: "error \(rc)")
            if io.sawEOF {
                throw .handshakeFailed(endpoint, reason: "the server closed the connection during the handshake "
                    + "(sshd refusing connections: MaxStartups, or not an SSH server?) (\(message))")
            }
            if !knownTypes.isEmpty && (rc == LIBSSH2_ERROR_KEX_FAILURE || rc == LIBSSH2_ERROR_METHOD_NONE) {
                throw .hostKeyTypeNotOffered(endpoint, knownTypes: knownTypes.map(\.name),
                                             knownHostsPath: options.knownHostsPath, reason: message)
            }
            throw .handshakeFailed(endpoint, reason: message)
        }
        let handshaken = monotonicNanos()

        let hostKey = try verifyHostKey(session, knownHosts, notes: &notes)
        let verified = monotonicNanos()
        try SessionAuthenticator(context: context, waiter: waiter).authenticate(session, with: authentication)
        let authenticated = monotonicNanos()

        // Keepalive only now: sent before the handshake completes it travels in clear text and sshd hangs up.
        if options.keepaliveInterval > 0 {
            libssh2_keepalive_config(session, 1, UInt32(options.keepaliveInterval))
        }
        guard let channel = try waiter.retryPointer("opening the session's internal channel", {
            fanout_channel_open_session(session)
        }) else {
            throw .channelFailed(endpoint, command: "(internal keepalive channel)",
                                 reason: context.lastErrorMessage(fallback: "channel open failed"))
        }
        let ready = monotonicNanos()
        let timings = SSHConnectTimings(
            tcpConnect: secondsElapsed(from: start, to: connected),
            handshake: secondsElapsed(from: connected, to: handshaken),
            hostKeyCheck: secondsElapsed(from: handshaken, to: verified),
            authentication: secondsElapsed(from: verified, to: authenticated),
            firstChannel: secondsElapsed(from: authenticated, to: ready),
            total: secondsElapsed(from: start, to: ready))
        let info = ConnectInfo(fingerprint: hostKey.fingerprint, keyType: hostKey.type, notes: notes, timings: timings)
        return (info, channel)
    }

    private func verifyHostKey(
        _ session: OpaquePointer, _ knownHosts: KnownHosts, notes: inout [String]
    ) throws(SSHError) -> (fingerprint: String, type: String) {
        var length = 0
        var rawType: Int32 = 0
        guard let keyPointer = libssh2_session_hostkey(session, &length, &rawType),
              let type = HostKeyType(sessionHostKeyType: rawType) else {
            throw .handshakeFailed(endpoint, reason: "the server's host key is missing or of a type libssh2 1.10 "
                + "does not know")
        }
        let key = Array(UnsafeRawBufferPointer(start: keyPointer, count: length))
        guard let hash = libssh2_hostkey_hash(session, LIBSSH2_HOSTKEY_HASH_SHA256) else {
            throw .handshakeFailed(endpoint, reason: "libssh2 could not hash the host key")
        }
        let digest = Array(UnsafeRawBufferPointer(start: hash, count: 32))
        let fingerprint = "SHA256:" + Base64.encode(digest, padding: false)
        let path = options.knownHostsPath
        switch knownHosts.verify(host: endpoint.host, port: endpoint.port, key: key, type: type) {
        case .match:
            break
        case .revoked:
            throw .hostKeyRevoked(endpoint, fingerprint: fingerprint, knownHostsPath: path)
        case .mismatch(let line):
            throw .hostKeyChanged(endpoint, fingerprint: fingerprint, keyType: type.name, knownHostsPath: path,
                                  offendingLine: line)
        case .failure(let message):
            throw .knownHostsFailed(path: path, reason: message)
        case .notFound:
            let line = KnownHosts.line(for: endpoint, type: type, key: key)
            switch options.hostKeyPolicy {
            case .strict:
                throw .unknownHostKey(endpoint, fingerprint: fingerprint, keyType: type.name, knownHostsPath: path,
                                      lineToAdd: line)
            case .acceptNew:
                try knownHosts.append(line)
                notes.append("recorded the new \(type.name) host key \(fingerprint) of \(endpoint.knownHostsName) "
                    + "in \(path) (host key policy accept-new)")
            }
        }
        return (fingerprint, type.name)
    }
}
