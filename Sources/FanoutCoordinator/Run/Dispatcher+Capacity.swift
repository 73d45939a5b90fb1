import FanoutCore

/// CPU-aware packing (the rule is Core's `CapacityPolicy`): each machine's cores and memory are capacities, like
/// slots. Agents that share a machine (a fleet on one host, or local slots beside it) share its cores.
extension Dispatcher {
    /// The machine an agent runs on: its reported identity, else the agent itself.
    func machine(of agent: String) -> String { resources[agent]?.machine ?? "agent:" + agent }

    /// What the agent's machine offers and what its running units use now; nil when the agent did not report its
    /// cores (then nothing is held back).
    func machineState(of agent: String) -> CapacityPolicy.Machine? {
        guard let own = resources[agent] else { return nil }
        let name = machine(of: agent)
        let mine = running.values.filter { machine(of: $0.agent) == name }
        return CapacityPolicy.Machine(
            cores: own.cores, memoryBytes: own.memoryBytes,
            load: mine.reduce(0) { $0 + (cpuLoad(of: $1) ?? 0) },
            memoryInUse: mine.reduce(0) { $0 + ($1.peakMemory ?? Self.expectedPeak($1.unit) ?? 0) },
            runningUnits: mine.count)
    }

    /// Cores a running unit uses: as measured between its last two samples, else as its classes used before.
    func cpuLoad(of r: Running) -> Double? { r.cpuRate ?? Self.expectedShare(r.unit) }

    /// Whether a running unit computes (rather than waits).
    func isComputing(_ r: Running) -> Bool { (cpuLoad(of: r) ?? 0) >= CapacityPolicy.computingShare }

    /// The cores a unit is expected to use: its items' shares weighted by their estimates (nil: none measured).
    static func expectedShare(_ unit: WorkUnit) -> Double? {
        let known = unit.items.filter { $0.cpuShare != nil }
        guard !known.isEmpty else { return nil }
        let weight = known.reduce(0) { $0 + max($1.estimate, 0.001) }
        return known.reduce(0) { $0 + ($1.cpuShare ?? 0) * max($1.estimate, 0.001) } / weight
    }

    static func expectedPeak(_ unit: WorkUnit) -> Int64? {
        unit.items.compactMap(\.peakMemory).max()
    }

    /// A running unit's CPU time and memory so far, as its transport sampled them.
    func unitUsage(_ id: Int, _ usage: ResourceUsage, at t: Double) {
        guard var r = running[id] else { return }
        let wasComputing = isComputing(r)
        if let last = r.lastUsage, t - last.at >= 0.5 {
            r.cpuRate = max(0, usage.cpuSeconds - last.cpu) / (t - last.at)
            r.lastUsage = (usage.cpuSeconds, t)
        } else if r.lastUsage == nil {
            r.lastUsage = (usage.cpuSeconds, t)
        }
        if let peak = usage.peakMemoryBytes { r.peakMemory = max(r.peakMemory ?? 0, peak) }
        running[id] = r
        // A unit that stopped computing frees a core: slots held back for one look again.
        if wasComputing, !isComputing(r) { wakeAll() }
    }
}
