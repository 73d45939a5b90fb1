/// The lower bound of a finished run, from the durations it measured: no schedule of this run's tests on its slots
/// could have ended sooner, whatever it grouped, split or ran first. It depends on the tests alone, never on
/// Fanout's own choices (how classes were grouped into units), so efficiency = makespan / LB is an honest figure.
/// Nor on how it crowded the cores: a computing test counts its time with a core to itself (``uncontended(duration:cpu:sharing:)``).
///
/// Slots are not the only capacity: tests that compute share the cores of their machine, whatever the slots. When the
/// agents measured the CPU time of their units, the bound also holds CPU time / cores (``bound(_:slots:slotsServing:cpu:)``),
/// and says which term binds, so a CPU-bound run is never blamed on the schedule.
public enum MeasuredLowerBound {
    /// One test's measured time on one destination.
    public struct Work: Sendable, Hashable {
        public var destination: String
        public var seconds: Double

        public init(destination: String, seconds: Double) {
            self.destination = destination
            self.seconds = seconds
        }
    }

    /// CPU seconds the run spent on some machines, and the cores those machines have (each machine counted once).
    public struct CPU: Sendable, Hashable {
        public var seconds: Double
        public var cores: Int

        public init(seconds: Double, cores: Int) {
            self.seconds = seconds
            self.cores = cores
        }

        /// seconds / cores: the machines could not have done this work sooner.
        public var bound: Double { cores > 0 && seconds.isFinite && seconds > 0 ? seconds / Double(cores) : 0 }
    }

    /// The bound, and which of its terms binds.
    public struct Bound: Sendable, Hashable {
        public var seconds: Double
        /// `slots` (test time / slots), `longest test`, `destination NAME` (its test time / the slots serving it), or
        /// `cpu` (CPU time / cores): the term equal to ``seconds``. On a tie the first of this order is named.
        public var boundBy: String
        /// The CPU term, when CPU was measured (it may not be the binding one).
        public var cpu: Double?
    }

    public static let slotsTerm = "slots"
    public static let longestTestTerm = "longest test"
    public static let cpuTerm = "cpu"
    public static func destinationTerm(_ name: String) -> String { "destination \(name)" }

    /// max(total test time / slots, the longest single test, and for every destination its own test time / the
    /// slots that serve it): a destination's tests can only run on the slots that serve it, so when the fleet serves
    /// destinations separately, each destination bounds the run on its own.
    /// - Parameters:
    ///   - work: every test attempt that ran (retries are work the run had to do).
    ///   - slots: all slots of the run.
    ///   - slotsServing: slots that serve each destination; a destination missing here is served by all slots.
    public static func perTest(_ work: [Work], slots: Int, slotsServing: [String: Int] = [:]) -> Double {
        bound(work, slots: slots, slotsServing: slotsServing).seconds
    }

    /// ``perTest(_:slots:slotsServing:)`` and, when `cpu` is given, CPU seconds / cores: the cores of the machines
    /// that ran the tests could not have done their CPU work sooner, however many slots shared them. Without `cpu`
    /// (nothing measured) there is no CPU term at all, never a 0 pretending to be one.
    public static func bound(_ work: [Work], slots: Int, slotsServing: [String: Int] = [:], cpu: CPU? = nil) -> Bound {
        var byDestination: [String: Double] = [:]
        var total = 0.0, longest = 0.0
        for w in work where w.seconds.isFinite && w.seconds > 0 {
            byDestination[w.destination, default: 0] += w.seconds
            total += w.seconds
            longest = max(longest, w.seconds)
        }
        // Terms in the order that names a tie: the slots first, as the bound has always been read.
        var terms: [(String, Double)] = [(slotsTerm, slots > 0 ? total / Double(slots) : total),
                                         (longestTestTerm, longest)]
        for (destination, seconds) in byDestination.sorted(by: { $0.key < $1.key }) {
            let serving = slotsServing[destination] ?? slots
            if serving > 0 { terms.append((destinationTerm(destination), seconds / Double(serving))) }
        }
        if let cpu { terms.append((cpuTerm, cpu.bound)) }
        var best = terms[0]
        for term in terms.dropFirst() where term.1 > best.1 { best = term }
        return Bound(seconds: best.1, boundBy: best.0, cpu: cpu?.bound)
    }

    /// The CPU the run spent and the cores that spent it, from the agents of the run and the CPU seconds their units
    /// consumed (superseded twins included: that CPU was spent).
    ///
    /// Cores are summed over distinct machines: agents with the same `machine` share its cores and count once (four
    /// sshd agents on loopback on a 2-core machine have 2 cores, not 8); an agent without `machine` counts on its
    /// own. Only the machines of agents whose units' CPU was measured count: their CPU had to fit on their cores
    /// (a machine with unmeasured units adds no CPU, so adding its cores would only weaken the bound). The CPU of
    /// an agent whose cores are unknown is left out of the bound (it cannot be set against any cores).
    /// - Returns: nil when no unit's CPU was measured, or none of the agents that measured it knows its cores.
    public static func cpu(spent: [String: Double], agents: [AgentInfo]) -> CPU? {
        var seconds = 0.0
        var machines: [MachineKey: Int] = [:]
        var byName: [String: AgentInfo] = [:]
        for agent in agents where byName[agent.name] == nil { byName[agent.name] = agent }
        for (name, cpu) in spent where cpu.isFinite && cpu >= 0 {
            guard let agent = byName[name], let cores = agent.cores, cores > 0 else { continue }
            seconds += cpu
            let key = MachineKey(agent)
            machines[key] = max(machines[key] ?? 0, cores)
        }
        guard !machines.isEmpty else { return nil }
        return CPU(seconds: seconds, cores: machines.values.reduce(0, +))
    }

    /// A test's time with a core to itself, as far as its attempt tells: when `sharing` single-threaded tests may share
    /// each core of its machine (its slots over its cores), a test that ran `duration` seconds using `cpu` seconds
    /// of CPU waited for a core at most `(sharing - 1) × cpu` of them. The slots term counts this, not the wall
    /// duration, so that a schedule that crowds computing tests onto the cores does not raise its own bound (packing
    /// them well would otherwise look no better than crowding them). Never above the duration measured, never below
    /// its CPU time; the duration itself when CPU was not measured or the machine has a core per slot.
    public static func uncontended(duration: Double, cpu: Double?, sharing: Double) -> Double {
        guard let cpu, cpu > 0, cpu.isFinite, sharing > 1, duration > 0 else { return duration }
        return min(duration, max(cpu, duration - (sharing - 1) * cpu))
    }

    /// For each agent, how many slots share each core of its machine: the slots of all agents on that machine over
    /// its cores, at least 1 (1 when its cores are unknown).
    public static func sharing(of agents: [AgentInfo]) -> [String: Double] {
        var slots: [MachineKey: Int] = [:], cores: [MachineKey: Int] = [:]
        for agent in agents {
            let key = MachineKey(agent)
            slots[key, default: 0] += agent.slots
            if let c = agent.cores, c > 0 { cores[key] = max(cores[key] ?? 0, c) }
        }
        var out: [String: Double] = [:]
        for agent in agents {
            let key = MachineKey(agent)
            guard let c = cores[key], let s = slots[key] else { out[agent.name] = 1; continue }
            out[agent.name] = max(1, Double(s) / Double(c))
        }
        return out
    }

    /// Cores of the distinct machines of these agents (same `machine`: counted once; no `machine`: on its own);
    /// nil when none knows its cores.
    public static func cores(of agents: [AgentInfo]) -> Int? {
        var machines: [MachineKey: Int] = [:]
        for agent in agents {
            guard let cores = agent.cores, cores > 0 else { continue }
            let key = MachineKey(agent)
            machines[key] = max(machines[key] ?? 0, cores)
        }
        return machines.isEmpty ? nil : machines.values.reduce(0, +)
    }

    /// A machine: its identity when the agent knows it, else the agent itself.
    private enum MachineKey: Hashable {
        case machine(String)
        case agent(String)

        init(_ agent: AgentInfo) {
            self = agent.machine.map { .machine($0) } ?? .agent(agent.name)
        }
    }
}
