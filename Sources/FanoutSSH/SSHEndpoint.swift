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
