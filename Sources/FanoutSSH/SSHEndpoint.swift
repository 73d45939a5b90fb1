import CLibSSH2

/// Where an agent's sshd listens and as whom we log in.
public struct SSHEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String

    public init(host: String, port: Int = 22, user: String) {
        self.host = host
        self.port = port
        self.user = user
    }

    /// `user@host:port`, the form every error message uses.
    public var description: String { "\(user)@\(host):\(port)" }

    /// The host as OpenSSH writes it into known_hosts: `host` for port 22, `[host]:port` otherwise.
    public var knownHostsName: String { port == 22 ? host : "[\(host)]:\(port)" }
}

/// How we prove who we are to the agent.
public enum SSHAuthentication: Sendable {
    /// Keys held by an ssh-agent. `nil` uses `SSH_AUTH_SOCK`.
    case agent(socketPath: String?)
    /// An OpenSSH-format private key file (ed25519 or ECDSA). The passphrase is never logged or shown.
    case keyFile(path: String, passphrase: String?)
    /// An OpenSSH user certificate (`KEY-cert.pub`, signed by a CA the server trusts) with its private key.
    case certificate(keyPath: String, certificatePath: String, passphrase: String?)
}

/// What to do with a host whose key known_hosts does not hold yet. A key that CHANGED is refused under every policy.
public enum HostKeyPolicy: String, Sendable, CaseIterable {
    /// Refuse unknown hosts; the error gives the fingerprint and the known_hosts line to add.
    case strict
    /// Record the key of a host that known_hosts does not mention yet (like OpenSSH `StrictHostKeyChecking=accept-new`).
    case acceptNew = "accept-new"
}

/// Tunables of one connection. Durations are in seconds.
public struct SSHOptions: Sendable {
    /// The OpenSSH known_hosts file to check host keys against (and, under `.acceptNew`, to append to).
    public var knownHostsPath: String
    public var hostKeyPolicy: HostKeyPolicy
    /// Budget for the TCP connect, and again for handshake + host key check + authentication.
    public var connectTimeout: Double
    /// Seconds between keepalive requests, sent only after authentication (before, they travel in clear text and
    /// sshd drops the connection).
    public var keepaliveInterval: Int
    /// When nothing at all arrives from the server for this long while we are waiting for a reply (keepalives
    /// included), the connection is declared dead. A silent remote command is not a silent server: keepalive
    /// replies keep arriving. Also used as TCP_USER_TIMEOUT. At least 3 s, and at least 3 keepalive intervals
    /// (the interval is shortened otherwise). Used only while keepalives are on (`keepaliveInterval` > 0).
    public var deadPeerTimeout: Double

    public init(
        knownHostsPath: String,
        hostKeyPolicy: HostKeyPolicy = .strict,
        connectTimeout: Double = 5,
        keepaliveInterval: Int = 1,
        deadPeerTimeout: Double = 8
    ) {
        self.knownHostsPath = knownHostsPath
        self.hostKeyPolicy = hostKeyPolicy
        self.connectTimeout = connectTimeout
        self.keepaliveInterval = keepaliveInterval
        self.deadPeerTimeout = deadPeerTimeout
    }
}

/// The libssh2 this process runs with.
public enum LibSSH2Version {
    /// As libssh2 reports it, e.g. "1.10.0".
    public static var text: String {
        guard let raw = libssh2_version(0) else { return "unknown" }
        return String(cString: raw)
    }

    /// OpenSSH user certificates (`*-cert-v01@openssh.com`): libssh2 1.10 offers them but cannot sign with them
    /// (the server accepts the certificate, then libssh2's signing callback fails); 1.11 added them.
    public static var supportsCertificates: Bool {
        let parts = text.split(separator: ".").compactMap { Int($0) }
        guard parts.count >= 2 else { return false }
        return parts[0] > 1 || (parts[0] == 1 && parts[1] >= 11)
    }
}
