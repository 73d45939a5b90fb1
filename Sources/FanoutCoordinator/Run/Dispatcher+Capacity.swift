import FanoutCore

/// CPU-aware packing (the rules are Core's `CapacityPolicy` and `RunningUnits`): each machine's cores and memory are
/// capacities, like slots. Agents that share a machine (a fleet on one host, or local slots beside it) share its
/// cores.
extension Dispatcher {
    /// A running unit's CPU time and memory so far, as its transport sampled them.
    func unitUsage(_ id: Int, _ usage: ResourceUsage, at t: Double) {
        // A unit that stopped computing frees a core: slots held back for one look again.
        if running.usage(id, usage, at: t) { wakeAll() }
    }
}
