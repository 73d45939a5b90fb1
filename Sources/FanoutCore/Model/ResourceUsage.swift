/// What a unit's processes have consumed so far: the CPU time of every process in its group (user + system, all
/// threads, children it waited for included) and the largest resident set any of them reached.
///
/// Transports report it as they sample (``cpuSeconds`` only grows); the last one a unit reports is its total.
public struct ResourceUsage: Codable, Sendable, Hashable {
    /// CPU seconds (user + system) consumed so far.
    public var cpuSeconds: Double
    /// The peak resident memory of the largest process, in bytes (nil: unknown on this agent).
    public var peakMemoryBytes: Int64?

    public init(cpuSeconds: Double, peakMemoryBytes: Int64? = nil) {
        self.cpuSeconds = cpuSeconds
        self.peakMemoryBytes = peakMemoryBytes
    }
}

/// What an agent's machine offers the tests: its CPUs and memory. Several agents may share one machine (a fleet of
/// sshd agents on loopback): ``machine`` tells them apart, so a machine's cores are counted once.
public struct AgentResources: Codable, Sendable, Hashable {
    /// Online CPUs.
    public var cores: Int
    /// Physical memory, in bytes (nil: unknown).
    public var memoryBytes: Int64?
    /// An identity of the machine (`/etc/machine-id`, else the host name); nil when unknown.
    public var machine: String?

    public init(cores: Int, memoryBytes: Int64? = nil, machine: String? = nil) {
        self.cores = cores
        self.memoryBytes = memoryBytes
        self.machine = machine
    }
}
