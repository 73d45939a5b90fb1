import FanoutSSH

/// Where a value of an agent's route came from, as `fanout agents check` prints it.
public enum RouteSource: Sendable, Hashable, CustomStringConvertible {
    case fanoutYML
    /// The user's OpenSSH client config (the file `ssh -G` read).
    case sshConfig(String)
    /// OpenSSH's own default (what `ssh -G` says with no config file).
    case openSSHDefault
    /// Fanout's default (no OpenSSH client, or a value OpenSSH has no say in).
    case fanoutDefault

    public var description: String {
        switch self {
        case .fanoutYML: "fanout.yml"
        case .sshConfig(let path): path
        case .openSSHDefault: "OpenSSH default"
        case .fanoutDefault: "Fanout default"
        }
    }
}

/// One SSH server on the way to an agent, a ProxyJump hop or the agent itself, resolved as OpenSSH resolves it.
public struct SSHHop: Sendable, Hashable {
    /// The name as written: the agent's `host:` or a ProxyJump entry.
    public var name: String
    public var endpoint: SSHEndpoint
    public var authentication: HopAuthentication
    /// The known_hosts file this hop's host key is checked against.
    public var knownHosts: String
    public var connectTimeout: Double
    public var keepaliveInterval: Int
    /// Each shown value with where it came from, in the order `agents check` prints them.
    public var sources: [(key: String, value: String, source: RouteSource)]
    /// Things worth saying (a weaker StrictHostKeyChecking that was not followed).
    public var notes: [String]

    public static func == (a: SSHHop, b: SSHHop) -> Bool { a.key == b.key }
    public func hash(into h: inout Hasher) { h.combine(key) }

    /// What makes two hops the same server to reuse one connection for: who logs in where, how, checked against what.
    var key: String { "\(endpoint)|\(authentication)|\(knownHosts)" }
}

/// How a hop proves who we are.
public enum HopAuthentication: Sendable, Hashable, CustomStringConvertible {
    /// A private key file, with an OpenSSH certificate beside it (`CertificateFile` or `KEY-cert.pub`) if any.
    case keyFile(path: String, certificate: String?, passphraseEnvironment: String?)
    /// ssh-agent at this socket (nil: SSH_AUTH_SOCK).
    case agent(socket: String?)

    public var description: String {
        switch self {
        case let .keyFile(path, certificate, _): certificate.map { "key \(path) with certificate \($0)" } ?? "key \(path)"
        case .agent(let socket): "ssh-agent" + (socket.map { " at \($0)" } ?? "")
        }
    }
}

/// How to reach one agent: the ProxyJump hops in order (the first is reached directly), then the agent.
public struct SSHRoute: Sendable, Hashable, CustomStringConvertible {
    public var jumps: [SSHHop]
    public var target: SSHHop

    /// `alias → user@host:port via b1 (user@host:port) → b2 (…)`
    public var description: String {
        var text = target.name == target.endpoint.host ? "\(target.endpoint)" : "\(target.name) → \(target.endpoint)"
        if !jumps.isEmpty {
            text += " via " + jumps.map { hop in
                hop.name == hop.endpoint.host ? "\(hop.endpoint)" : "\(hop.name) (\(hop.endpoint))"
            }.joined(separator: " → ")
        }
        return text
    }

    /// The hop a failure belongs to, for messages: "hop 1 of 2, bastion b1 (user@host:port)".
    func describeHop(_ index: Int) -> String {
        let hop = index < jumps.count ? jumps[index] : target
        let role = index < jumps.count ? "bastion \(hop.name)" : "the agent \(hop.name)"
        return "hop \(index + 1) of \(jumps.count + 1), \(role) (\(hop.endpoint))"
    }
}
