import FanoutSSH

/// One remote agent as the config describes it.
public struct SSHAgentSpec: Sendable, Hashable {
    public var name: String
    /// A host name, an address, or a Host alias of the user's OpenSSH client config (see `OpenSSHResolver`).
    public var host: String
    /// nil: the ssh config's Port, else 22.
    public var port: Int?
    /// nil: the ssh config's User, else the local user (as OpenSSH does).
    public var user: String?
    /// ProxyJump hops, `[user@]host[:port]` separated by commas (nil: the ssh config's ProxyJump, if any).
    public var proxyJump: String?
    /// A private key file (ed25519 or ECDSA, OpenSSH format); nil means ssh-agent (SSH_AUTH_SOCK).
    public var identity: String?
    /// The name of an environment variable that holds the key's passphrase (the passphrase itself is never stored).
    public var passphraseEnvironment: String?
    public var slots: Int
    /// Fanout's folder on the agent (bundles, runs). Absolute.
    public var workdir: String
    /// The `swift` command on the agent, for `fanout agents check` (default: found on PATH, else /opt/swift/usr/bin/swift).
    public var swift: String?
    /// What the agent is (`linux`, `gpu`, `big-memory`): destinations that require tags run only on agents with them.
    public var tags: [String]
    /// The destinations this agent serves, by name (nil: every destination whose required tags it has).
    public var destinations: [String]?
    /// Variables every test process and hook on this agent gets (`environment:`), over its destination's; values
    /// may use the worker identity (`${FANOUT_WORKER}`), expanded per process.
    public var environment: [String: String] = [:]

    public init(name: String, host: String, port: Int? = nil, user: String? = nil, proxyJump: String? = nil,
                identity: String? = nil,
                passphraseEnvironment: String? = nil, slots: Int = 2, workdir: String, swift: String? = nil,
                tags: [String] = [], destinations: [String]? = nil) {
        self.name = name
        self.host = host
        self.port = port
        self.user = user
        self.proxyJump = proxyJump
        self.identity = identity
        self.passphraseEnvironment = passphraseEnvironment
        self.slots = slots
        self.workdir = workdir
        self.swift = swift
        self.tags = tags
        self.destinations = destinations
    }
}

/// How agents' host keys are checked (FanoutSSH's policy, named here so the Coordinator can set it).
public typealias HostKeyPolicy = FanoutSSH.HostKeyPolicy

/// SSH settings shared by all agents.
public struct SSHSettings: Sendable, Hashable {
    public var knownHosts: String
    /// The OpenSSH client config to resolve agents' host aliases with (`ssh_config:`); nil: OpenSSH's own choice.
    public var sshConfig: String?
    /// The settings fanout.yml set itself (`known_hosts`, `connect_timeout`, `keepalive`): they win over the ssh
    /// config's UserKnownHostsFile, ConnectTimeout and ServerAliveInterval.
    public var explicit: Set<String> = []
    /// `.strict` (default: an unknown host is refused) or `.acceptNew` (record a new host's key). A changed key is
    /// always refused.
    public var hostKeyPolicy: HostKeyPolicy
    public var connectTimeout: Double
    public var keepaliveInterval: Int
    /// No byte from an agent for this long, keepalives unanswered: the agent is frozen or gone.
    public var deadAfter: Double
    /// Leave the run's folder (and anything in it) on the agents, for debugging.
    public var keepRemote: Bool
    /// How many product bundles each agent keeps in its cache.
    public var bundlesKept: Int
    /// The run's lease on each agent, in seconds: renewed every sixth of it while the coordinator lives. When the
    /// coordinator dies (SIGKILL, OOM, a cancelled CI job), the agent's watchdog kills the run's processes and removes
    /// its folder once the lease is this old. Longer than `deadAfter`, so a frozen-then-thawed agent is not reaped.
    public var leaseSeconds: Int

    public init(knownHosts: String = "~/.ssh/known_hosts", hostKeyPolicy: HostKeyPolicy = .strict, connectTimeout: Double = 5,
                keepaliveInterval: Int = 1, deadAfter: Double = 8, keepRemote: Bool = false, bundlesKept: Int = 3, leaseSeconds: Int = 30) {
        self.knownHosts = knownHosts
        self.hostKeyPolicy = hostKeyPolicy
        self.connectTimeout = connectTimeout
        self.keepaliveInterval = keepaliveInterval
        self.deadAfter = deadAfter
        self.keepRemote = keepRemote
        self.bundlesKept = bundlesKept
        self.leaseSeconds = leaseSeconds
    }
}
