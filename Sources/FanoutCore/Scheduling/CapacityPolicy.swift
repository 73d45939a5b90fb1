/// CPU and memory are capacities of a machine, like its slots: a slot may start computing work only while the
/// machine has a core for it, and any work only while its memory holds it.
///
/// Slots may outnumber cores (tests that wait need no core), so without this rule eight computing tests on two
/// cores would each run at a quarter of a core, and the longest of them, which bounds the run, four times slower.
/// With it, computing work waits for a core while waiting work fills the other slots: waiting overlaps computing.
/// - Work expected to use under ``computingShare`` of a core (from its class's history, else unknown = waiting)
///   is waiting work: it always may start.
/// - Computing work may start when the machine's running units use (as measured now, else as expected) at most
///   `cores` − its share, with a quarter of a core to spare for rounding.
/// - Any work waits while the machine's running units and its own expected peak memory would pass
///   ``memoryHeadroom`` of the machine's memory: eight test processes of a few GB each are an out-of-memory kill,
///   not eight failures.
/// - A machine running nothing admits anything: work bigger than the machine must still run, alone.
public struct CapacityPolicy: Sendable, Hashable {
    /// Below this share of one core, work is waiting, not computing.
    public static let computingShare = 0.25
    /// The share of a machine's memory its test processes may use together.
    public var memoryHeadroom: Double

    public init(memoryHeadroom: Double = 0.8) {
        self.memoryHeadroom = memoryHeadroom
    }

    /// What a machine offers and what its running units use now.
    public struct Machine: Sendable, Hashable {
        public var cores: Int
        public var memoryBytes: Int64?
        /// Cores its running units use: measured where they report CPU time, else their classes' history.
        public var load: Double
        public var memoryInUse: Int64
        public var runningUnits: Int

        public init(cores: Int, memoryBytes: Int64?, load: Double, memoryInUse: Int64, runningUnits: Int) {
            self.cores = cores
            self.memoryBytes = memoryBytes
            self.load = load
            self.memoryInUse = memoryInUse
            self.runningUnits = runningUnits
        }

        /// True when a process computing on one core would have to share it now.
        public var isSaturated: Bool { load + 1 > Double(cores) + 0.25 }
    }

    /// Whether work expected to use `share` cores and `memory` bytes at its peak may start on `machine` now.
    public func admits(share: Double?, memory: Int64?, on machine: Machine) -> Bool {
        guard machine.runningUnits > 0 else { return true }
        if let memory, let total = machine.memoryBytes,
           Double(machine.memoryInUse + memory) > memoryHeadroom * Double(total) { return false }
        let share = share ?? 0
        guard share >= Self.computingShare else { return true }
        return machine.load + share <= Double(machine.cores) + 0.25
    }
}
