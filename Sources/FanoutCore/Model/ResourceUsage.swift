/// What a unit's processes have consumed so far: the CPU time of every process in its group (user + system, all
/// threads, children it waited for included) and the largest resident set any of them reached.
///
/// Transports report it as they sample (``cpuSeconds`` only grows); the last one a unit reports is its total.
public struct ResourceUsage: Codable, Sendable, Hashable {
    /// CPU seconds (user + system) consumed so far.
    public var cpuSeconds: Double
    /// The peak resident memory of the largest process, in bytes (nil: unknown on this agent).
    public var peakMemoryBytes: Int64?
    /// Seconds its threads were ready to run but waited for a core, summed over the live threads of its processes
    /// (Linux: the run-queue delay, the second field of /proc/<pid>/task/<tid>/schedstat; nil where the agent
    /// cannot tell). A test starved of CPU by other work is runnable all along: this grows about as fast as the
    /// wall clock while its CPU time stands still, which tells it from a blocked test (asleep: neither grows).
    /// Only grows, like ``cpuSeconds``, but a thread that exited takes its share out of later samples.
    public var cpuWaitSeconds: Double?
    /// How many of its processes' threads were ready to run (Linux: state `R`) when this sample was taken; nil
    /// where the agent cannot tell. Not a total: each sample says it anew. The kernel adds to a thread's wait
    /// (``cpuWaitSeconds``) only when the thread gets a core again, so a test that gets no core at all for a while
    /// shows only here.
    public var readyThreads: Int?

    public init(cpuSeconds: Double, peakMemoryBytes: Int64? = nil, cpuWaitSeconds: Double? = nil,
                readyThreads: Int? = nil) {
        self.cpuSeconds = cpuSeconds
        self.peakMemoryBytes = peakMemoryBytes
        self.cpuWaitSeconds = cpuWaitSeconds
        self.readyThreads = readyThreads
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
