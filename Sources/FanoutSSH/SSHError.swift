import Foundation

/// Everything that can go wrong in the SSH layer. Every description says what happened and how to fix it.
/// Passphrases never appear in any of them.
public enum SSHError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host name did not resolve.
    case resolveFailed(SSHEndpoint, reason: String)
    /// The TCP connection was refused or failed (nothing listens, host unreachable, ...).
    case connectFailed(SSHEndpoint, reason: String)
    /// A bastion (ProxyJump hop) could not open a connection onward to `target` (host:port as the bastion sees it).
    case tunnelFailed(via: SSHEndpoint, target: String, reason: String)
    /// The TCP connect or the SSH setup did not finish within `connectTimeout`.
    case connectTimedOut(SSHEndpoint, phase: String, seconds: Double)
    /// The SSH handshake (banner, key exchange) failed.
    case handshakeFailed(SSHEndpoint, reason: String)
    /// known_hosts could not be read or written.
    case knownHostsFailed(path: String, reason: String)
    /// The host is not in known_hosts and the policy is `.strict`.
    case unknownHostKey(SSHEndpoint, fingerprint: String, keyType: String, knownHostsPath: String, lineToAdd: String)
    /// known_hosts holds a DIFFERENT key of this type for this host. Refused under every policy.
    case hostKeyChanged(SSHEndpoint, fingerprint: String, keyType: String, knownHostsPath: String, offendingLine: Int?)
    /// The server's host key is listed as @revoked in known_hosts.
    case hostKeyRevoked(SSHEndpoint, fingerprint: String, knownHostsPath: String)
    /// known_hosts holds keys for this host, but the server offers none of those key types.
    case hostKeyTypeNotOffered(SSHEndpoint, knownTypes: [String], knownHostsPath: String, reason: String)
    /// The key file is missing, unreadable, encrypted without a passphrase, or in a format libssh2 cannot read.
    case keyFileUnusable(path: String, reason: String)
    /// ssh-agent could not be reached or holds no keys.
    case agentUnavailable(socketPath: String?, reason: String)
    /// The server refused every key we offered.
    case authenticationFailed(SSHEndpoint, method: String, reason: String)
    /// Only RSA keys were available: libssh2 1.10 signs with ssh-rsa (SHA-1), which OpenSSH >= 8.8 refuses.
    case rsaKeyRefused(SSHEndpoint, keyDescription: String)
    /// The server would not open another channel (sshd's MaxSessions) or refused the exec request.
    case channelFailed(SSHEndpoint, command: String, reason: String)
    /// The connection broke: server killed, frozen (no data for `deadPeerTimeout` although keepalives were sent),
    /// or the network path is gone. Running commands' outcomes are unknown and their remote processes may live on.
    case connectionLost(SSHEndpoint, reason: String)
    /// `close()` was called on the connection (or it was released) before or while this operation ran.
    case connectionClosed(SSHEndpoint)
    /// A command run through `run(_:timeout:)` did not end in time; its channel was closed.
    case commandTimedOut(SSHEndpoint, command: String, seconds: Double)
    /// An SFTP request failed.
    case sftpFailed(SSHEndpoint, operation: String, path: String, reason: String)
    /// A local file to upload could not be read.
    case localFileFailed(path: String, reason: String)
    /// The task awaiting the operation was cancelled.
    case cancelled
    /// libssh2 reported an error not covered above.
    case libssh2(SSHEndpoint, operation: String, code: Int32, message: String)

    public var description: String {
        switch self {
        case let .resolveFailed(endpoint, reason):
            return "cannot resolve host '\(endpoint.host)' (for \(endpoint)): \(reason). "
                + "Check the host name in the fleet configuration, or use an IP address."
        case let .connectFailed(endpoint, reason):
            return "cannot connect to \(endpoint.host):\(endpoint.port) (for \(endpoint)): \(reason). "
                + "Check that the agent's sshd is running and listens on port \(endpoint.port) "
                + "(e.g. `ss -ltn` on the agent), and that no firewall blocks it."
        case let .tunnelFailed(via, target, reason):
            return "the bastion \(via) could not open a connection to \(target): \(reason). Check that the target's "
                + "HostName and Port are right as the bastion sees them, that its sshd is up, and that the bastion's "
                + "sshd allows forwarding (AllowTcpForwarding)"
        case let .connectTimedOut(endpoint, phase, seconds):
            return "\(phase) to \(endpoint) did not finish within \(formatSeconds(seconds)). "
                + "The host may be down, unreachable or overloaded; check it with `ssh -p \(endpoint.port) "
                + "\(endpoint.user)@\(endpoint.host) true`, or raise the connect timeout."
        case let .handshakeFailed(endpoint, reason):
            return "SSH handshake with \(endpoint) failed: \(reason). "
                + "Check that the port is an OpenSSH server and that it offers algorithms libssh2 1.10 supports "
                + "(curve25519/ecdh key exchange, aes-ctr ciphers, ed25519 or ECDSA host keys)."
        case let .knownHostsFailed(path, reason):
            return "known_hosts file \(path): \(reason). Check the path and its permissions."
        case let .unknownHostKey(endpoint, fingerprint, keyType, path, line):
            return "host key of \(endpoint.knownHostsName) is unknown (not in \(path)); refusing to connect "
                + "(host key policy: strict). Its \(keyType) key fingerprint is \(fingerprint). "
                + "If that is the right key (compare with `ssh-keygen -lf` on the agent's host key .pub file), "
                + "add this line to \(path):\n\(line)\n"
                + "or connect once with host key policy accept-new to record it."
        case let .hostKeyChanged(endpoint, fingerprint, keyType, path, offendingLine):
            let lineInfo = offendingLine.map { " (line \($0))" } ?? ""
            return "WARNING: HOST KEY OF \(endpoint.knownHostsName) HAS CHANGED! The server now presents a \(keyType) "
                + "key with fingerprint \(fingerprint), but \(path)\(lineInfo) holds a different \(keyType) key for "
                + "it. Someone could be intercepting the connection (man-in-the-middle), or the agent was "
                + "reinstalled. Refusing to connect under every host key policy. If the change is legitimate, "
                + "remove the old entry with `ssh-keygen -R '\(endpoint.knownHostsName)' -f \(path)` and connect "
                + "again."
        case let .hostKeyRevoked(endpoint, fingerprint, path):
            return "host key \(fingerprint) of \(endpoint.knownHostsName) is marked @revoked in \(path); refusing "
                + "to connect. Give the agent a new host key and record it in known_hosts."
        case let .hostKeyTypeNotOffered(endpoint, knownTypes, path, reason):
            return "\(path) holds \(knownTypes.joined(separator: ", ")) key(s) for \(endpoint.knownHostsName), but the "
                + "server offers none of these key types (\(reason)). The agent's host keys may have been "
                + "replaced: verify the new key out of band, remove the old entry with "
                + "`ssh-keygen -R '\(endpoint.knownHostsName)' -f \(path)`, and connect again."
        case let .keyFileUnusable(path, reason):
            return "private key \(path) cannot be used: \(reason)"
        case let .agentUnavailable(socketPath, reason):
            let sock = socketPath ?? "$SSH_AUTH_SOCK"
            return "ssh-agent at \(sock) cannot be used: \(reason). Start one with `eval $(ssh-agent)` and add a "
                + "key with `ssh-add ~/.ssh/id_ed25519`, or authenticate with a key file instead."
        case let .authenticationFailed(endpoint, method, reason):
            return "authentication as \(endpoint) with \(method) failed: \(reason). Typical fixes: add the public "
                + "key to ~\(endpoint.user)/.ssh/authorized_keys on the agent (or the file sshd's "
                + "AuthorizedKeysFile names); check that the user name '\(endpoint.user)' is right; make sure the "
                + "home directory, ~/.ssh and authorized_keys are not group/world-writable (sshd StrictModes); "
                + "`ssh -v -p \(endpoint.port) \(endpoint.user)@\(endpoint.host)` shows what the server accepts."
        case let .rsaKeyRefused(endpoint, keyDescription):
            return "authentication as \(endpoint) failed: the key \(keyDescription) is an RSA key. libssh2 1.10 can "
                + "only sign with ssh-rsa (SHA-1), which OpenSSH 8.8 and later refuse by default, so RSA keys "
                + "cannot work here. Create an ed25519 key with `ssh-keygen -t ed25519`, add its .pub to the "
                + "agent's authorized_keys, and use it instead (ECDSA keys work too)."
        case let .channelFailed(endpoint, command, reason):
            return "cannot start `\(abbreviate(command))` on \(endpoint): \(reason). If too many commands run at "
                + "once on one connection, raise sshd's MaxSessions on the agent (default 10; every command, the "
                + "SFTP session and one internal channel each use one) or run fewer at a time."
        case let .connectionLost(endpoint, reason):
            return "connection to \(endpoint) lost: \(reason). Commands that were running have an unknown "
                + "outcome and may still run on the agent; reconnect and kill them by process group."
        case let .connectionClosed(endpoint):
            return "connection to \(endpoint) was closed by this process before the operation finished."
        case let .commandTimedOut(endpoint, command, seconds):
            return "`\(abbreviate(command))` on \(endpoint) did not finish within \(formatSeconds(seconds)); its "
                + "channel was closed (the remote process may live on: kill it by process group)."
        case let .sftpFailed(endpoint, operation, path, reason):
            return "SFTP \(operation) of \(path) on \(endpoint) failed: \(reason). Check that the directory exists "
                + "and that \(endpoint.user) may write there, and that sshd has `Subsystem sftp internal-sftp` "
                + "(or sftp-server) configured."
        case let .localFileFailed(path, reason):
            return "cannot read local file \(path): \(reason)."
        case .cancelled:
            return "the SSH operation was cancelled."
        case let .libssh2(endpoint, operation, code, message):
            return "\(operation) on \(endpoint) failed: libssh2 error \(code) (\(message))."
        }
    }
}

/// Seconds for people, as everywhere in Fanout (`0.42 s`, `12.3 s`, `2 m 05 s`: Core's `formatSeconds`, which this
/// module cannot import; a test holds the two to the same output).
func formatSeconds(_ s: Double) -> String {
    guard s.isFinite else { return "?" }
    if s < 10 { return String(format: "%.2f s", s) }
    if s < 120 { return String(format: "%.1f s", s) }
    let total = Int(s.rounded())
    return String(format: "%d m %02d s", total / 60, total % 60)
}

func abbreviate(_ command: String, limit: Int = 120) -> String {
    command.count <= limit ? command : String(command.prefix(limit)) + "…"
}
