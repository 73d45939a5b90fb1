/// What every account of a finished test process says of it: where it ran, what it held, how it ended and what it
/// used. The report's ``UnitReport`` adds the process itself (times, command, log, stealing); the history's unit adds
/// what its store keeps (the agent's cores). Both hold one of these, read its fields as their own and write them as
/// their own keys in JSON, so report.json and a history export keep their flat `units[]` entries.
public struct UnitSummary: Codable, Sendable, Hashable {
    public var id: Int
    public var destination: String
    public var framework: Framework
    public var agent: String
    public var slot: Int
    /// `Module.Class` of every class in the unit (with `(n tests)` when only some of its tests were selected).
    public var suites: [String]
    public var testCount: Int
    /// `exit 0`, `exit 1`, `signal 9`, `timed out`, `agent lost`, ...
    public var ending: String
    /// CPU seconds (user + system) of its processes, and the peak resident memory of the largest, in bytes.
    /// Absent when the agent could not measure them.
    public var cpuSeconds: Double?
    public var peakMemoryBytes: Int64?
    /// True when its process ran tests at the same time (Swift Testing): its tests' `position`s are the order they
    /// started, and a test's predecessors may have overlapped it. Absent: one test after another.
    public var concurrent: Bool?

    public init(id: Int, destination: String, framework: Framework, agent: String, slot: Int, suites: [String],
                testCount: Int, ending: String, cpuSeconds: Double? = nil, peakMemoryBytes: Int64? = nil,
                concurrent: Bool? = nil) {
        self.id = id
        self.destination = destination
        self.framework = framework
        self.agent = agent
        self.slot = slot
        self.suites = suites
        self.testCount = testCount
        self.ending = ending
        self.cpuSeconds = cpuSeconds
        self.peakMemoryBytes = peakMemoryBytes
        self.concurrent = concurrent
    }
}
