/// The queue rules of a run as a state machine on plain values: what a free slot takes next (a stolen part, queued
/// work its agent may take now, a piece of a running unit's unstarted tail, a copy of a straggler), what a unit's
/// end does (its twin stopped, its leftovers re-queued), and the agents that take work. The Coordinator's
/// `Dispatcher` (an actor) owns one and adds what needs processes or waiting: slots that wait, the ledger, order
/// checks, queue mode's feed. Times and overheads are handed in; every rule is tested without an actor or a clock.
public struct DispatchState: Sendable {
    /// The work not started yet (longest first, shrinking batches).
    public private(set) var scheduler: Scheduler
    /// The units running and the rules that read them (measuring holds, capacity, steal candidates).
    public var running = RunningUnits()
    /// Parts cut from a running unit that wait for a slot of an agent serving their destination.
    public private(set) var stolenParts: [WorkUnit] = []
    /// Every steal, for the report.
    public private(set) var steals: [StealReport] = []
    /// Units stopped because their twin (a straggler or its backup) finished first: their results do not count.
    public private(set) var superseded: Set<Int> = []
    /// Slots waiting for work, per agent (the owner counts them as its slots wait).
    public var idle: [String: Int] = [:]
    /// CPU-aware packing (``CapacityPolicy``); nil: off.
    public let capacity: CapacityPolicy?
    public let straggler = StragglerPolicy()
    private var liveAgents: Set<String> = []
    private var serves: [String: Set<String>] = [:]
    private var events: [Event] = []

    /// What happened that a person watching the run is told (the owner says it).
    public enum Event: Sendable, Hashable {
        /// A running unit's unstarted tests went to idle slots.
        case stole(StealReport, agent: String)
        /// A straggler got a copy on an idle slot.
        case backedUp(unit: Int, agent: String, ranFor: Double, estimate: Double, backup: Int, on: String)
    }

    /// What a free slot does.
    public enum Choice: Sendable, Hashable {
        case run(WorkUnit)
        /// Nothing for it now: wait (a running unit may give work back, the queue may get more).
        case wait
        /// Nothing will come: the slot is done for the run.
        case done
    }

    public init(scheduler: Scheduler, capacity: CapacityPolicy? = CapacityPolicy()) {
        self.scheduler = scheduler
        self.capacity = capacity
    }

    // MARK: - Agents

    /// An agent is deployed and takes work for these destinations.
    public mutating func agentReady(_ name: String, serves destinations: Set<String>, resources: AgentResources? = nil) {
        liveAgents.insert(name)
        serves[name] = destinations
        if let resources { running.resources[name] = resources }
    }

    /// An agent stopped taking work (unusable, lost, or done).
    public mutating func agentGone(_ name: String) { liveAgents.remove(name) }

    /// The destinations an agent serves (none before it is ready).
    public func serving(_ agent: String) -> Set<String> { serves[agent] ?? [] }

    // MARK: - What a free slot takes

    /// The work a free slot of `agent` takes first: a part stolen earlier, else queued work its agent may take now.
    /// Nothing while the agent is held by a unit that measures. Queued work must be for a destination the agent
    /// serves; a retry avoids the agent its test failed on while another agent is alive; an exclusive unit (a class
    /// known to measure) starts only on an agent with nothing running; and with CPU-aware packing, work must fit
    /// the machine's free cores and memory (`feedback_first` work may share a core, never overfill memory).
    public mutating func queued(for agent: String, now: Double, overhead: Double?) -> WorkUnit? {
        guard !running.isHeldForMeasuring(agent) else { return nil }
        let destinations = serving(agent)
        if let i = stolenParts.firstIndex(where: { destinations.contains($0.destination) }) {
            let part = stolenParts.remove(at: i)
            let from = steals.last { $0.to.contains(part.id) }?.from
            running.start(.init(unit: part, start: now, agent: agent, takenFrom: from))
            return part
        }
        let alone = liveAgents.subtracting([agent]).isEmpty
        let agentIsIdle = !running.values.contains { $0.agent == agent }
        let machine = running.machineState(of: agent)
        let fits: (WorkItem) -> Bool = { [capacity] item in
            guard let capacity, let machine else { return true }
            return capacity.admits(share: item.startsFirst == true ? nil : item.cpuShare, memory: item.peakMemory,
                                   on: machine)
        }
        guard let unit = scheduler.next(now: now, overhead: overhead, pace: scheduler.firstRun ? running.paces(now: now) : [:], accepts: {
            destinations.contains($0.destination) && (alone || $0.avoidAgent != agent)
                && (!$0.exclusive || agentIsIdle) && fits($0)
        }) else { return nil }
        running.start(.init(unit: unit, start: now, agent: agent))
        return unit
    }

    /// When nothing is queued for a free slot of `agent` (and the owner had nothing of its own, e.g. order checks):
    /// done when nothing runs and nothing more can come (`moreMayCome`: the owner may still get work, a queue's feed
    /// or order checks); else a piece of a running unit's unstarted tail (not computing work on a machine whose
    /// cores are all busy), else a copy of a straggler, else wait. Nothing while the agent is held by a unit that
    /// measures. `checks`: units that are order checks (never cut or copied).
    public mutating func spare(for agent: String, now: Double, overhead: Double?, moreMayCome: Bool,
                               checks: Set<Int> = []) -> Choice {
        if running.isEmpty && !moreMayCome { return .done }
        guard !running.isHeldForMeasuring(agent) else { return .wait }
        let saturated = capacity != nil && running.machineState(of: agent)?.isSaturated == true
        if let part = steal(for: agent, now: now, overhead: overhead, computingAllowed: !saturated) { return .run(part) }
        if !saturated, let backup = backUpStraggler(for: agent, now: now, checks: checks) { return .run(backup) }
        return .wait
    }

    /// What happened since the last call (steals, backups), for the owner to say.
    public mutating func takeEvents() -> [Event] {
        defer { events = [] }
        return events
    }

    /// Cuts the most worthwhile running unit for this slot and the other idle slots of its destination; this slot
    /// gets the first part, the rest wait in ``stolenParts`` for the other idle slots.
    mutating func steal(for agent: String, now: Double, overhead: Double?, computingAllowed: Bool) -> WorkUnit? {
        var best: StealPolicy.Steal?
        for destination in serving(agent) {
            let idleSlots = 1 + idle.filter { serves[$0.key]?.contains(destination) == true }.values.reduce(0, +)
            let policy = StealPolicy(overhead: overhead ?? StealPolicy().overhead)
            let candidates = self.running.values.filter {
                $0.unit.destination == destination && (computingAllowed || !RunningUnits.isComputing($0))
            }.map { self.running.stealCandidate($0, now: now) }
            if let s = policy.steal(from: candidates, idleSlots: idleSlots), s.gain > (best?.gain ?? 0) { best = s }
        }
        guard let steal = best, let original = self.running[steal.unit] else { return nil }
        let before = self.running
        var parts = steal.parts.map { part in
            scheduler.makeUnit(RunningUnits.items(of: original.unit, taking: part, estimate: { before.estimate($0, in: original.unit) }))
        }
        let stolen = Set(steal.stolen)
        self.running.handOver(stolen, from: steal.unit)
        let report = StealReport(from: steal.unit, to: parts.map(\.id), tests: stolen.count, at: now,
                                 expectedBefore: steal.before, expectedAfter: steal.after)
        steals.append(report)
        events.append(.stole(report, agent: original.agent))
        let first = parts.removeFirst()
        stolenParts += parts
        self.running.start(.init(unit: first, start: now, agent: agent, takenFrom: steal.unit))
        return first
    }

    /// An idle slot with nothing queued: a copy of a unit that runs far past its estimate, if it pays. A unit that
    /// computes gets no copy on its own machine (it is making progress; a copy would only share its cores), nor one
    /// whose CPU is not sampled yet there; twins, backups and order checks get none.
    mutating func backUpStraggler(for agent: String, now: Double, checks: Set<Int>) -> WorkUnit? {
        let alone = liveAgents.subtracting([agent]).isEmpty
        let here = running.machine(of: agent)
        let candidates = running.values.map {
            RunningUnit(id: $0.unit.id, start: $0.start, estimate: $0.unit.estimate, agent: $0.agent,
                        excluded: $0.twin != nil || $0.isBackup || checks.contains($0.unit.id)
                            || (capacity != nil && running.resources[$0.agent] != nil && running.machine(of: $0.agent) == here
                                && ($0.cpuRate == nil || RunningUnits.isComputing($0))))
        }
        guard let id = straggler.pick(candidates, now: now, queueEmpty: scheduler.isEmpty, idleAgent: agent,
                                      otherAgentsAlive: !alone),
              let original = running[id] else { return nil }
        let backup = scheduler.makeUnit(original.unit.items)
        running.start(.init(unit: backup, start: now, agent: agent, twin: id, isBackup: true))
        running[id]?.twin = backup.id
        events.append(.backedUp(unit: id, agent: original.agent, ranFor: now - original.start,
                                estimate: original.unit.estimate, backup: backup.id, on: agent))
        return backup
    }

    // MARK: - A unit's end

    /// What a unit's end means for the queue.
    public struct Ended: Sendable {
        /// The unit as it ran (nil: it was not running).
        public var entry: RunningUnits.Entry?
        /// The tests it handed over to other units, and whether each of its measurements was taken alone.
        public var handedOver: Set<TestID>
        public var measuredAlone: [TestID: Bool]
        /// Its twin finished first: its results do not count.
        public var superseded: Bool
        /// Its twin still runs and is now superseded: the owner stops it.
        public var twinToStop: Int?
    }

    /// A unit ended at `end` (`counts`: false for a unit whose results are not the run's, e.g. an order check: it
    /// supersedes nothing).
    public mutating func ended(_ id: Int, at end: Double, counts: Bool = true) -> Ended {
        let (entry, handed, alone) = running.end(id, at: end)
        var result = Ended(entry: entry, handedOver: handed, measuredAlone: alone, superseded: superseded.contains(id))
        guard counts, !result.superseded else { return result }
        if let twin = entry?.twin, running[twin] != nil {
            superseded.insert(twin)
            result.twinToStop = twin
        }
        return result
    }

    /// A unit of these items with the next unit number (order checks, made outside the queue).
    public mutating func makeUnit(_ items: [WorkItem]) -> WorkUnit { scheduler.makeUnit(items) }

    /// Work goes back to the queue (a unit's leftovers, retries, re-measures alone, queue mode's work).
    public mutating func requeue(_ items: [WorkItem]) { scheduler.requeue(items) }

    /// Nothing queued or waiting starts any more (`--until-failure`); returns how many queued items were dropped.
    public mutating func drain() -> Int {
        stolenParts.removeAll()
        return scheduler.drain()
    }

    /// Takes every queued item and waiting part of a destination out (queue mode: no agent is left to serve it).
    public mutating func remove(destination: String) -> [WorkItem] {
        let parts = stolenParts.filter { $0.destination == destination }
        stolenParts.removeAll { $0.destination == destination }
        return scheduler.remove(where: { $0.destination == destination }) + parts.flatMap(\.items)
    }

    /// Work is queued, waiting as a part, or running.
    public var hasWork: Bool { !scheduler.isEmpty || !running.isEmpty || !stolenParts.isEmpty }

    /// Seconds of work estimated to be left: queued and running.
    public var remainingWork: Double { scheduler.remainingWork + running.values.reduce(0.0) { $0 + $1.unit.estimate } }
}
