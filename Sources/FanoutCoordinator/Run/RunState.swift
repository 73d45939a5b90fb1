import FanoutCore
import Foundation

/// A slot: one place on one agent where one test process runs at a time.
struct SlotRef: Sendable, Hashable {
    var agent: String
    var index: Int
}

/// One unit that ended, with everything the report needs about it.
struct FinishedUnit: Sendable {
    var unit: WorkUnit
    /// Stopped because its twin (a straggler or its backup) finished first: its results are not counted.
    var superseded = false
    /// Work stealing: the unit whose not-yet-started tests this unit took over, and how many tests this unit handed
    /// over to others.
    var takenFrom: Int?
    var handedOver = 0
    var slot: SlotRef
    var startedAt: Double
    var endedAt: Double
    var ending: UnitEnding
    var command: String
    var log: String
    var result: UnitResult
    /// What its processes consumed, when the agent measured it.
    var usage: ResourceUsage? = nil
}

extension FinishedUnit {
    /// What the report keeps of it.
    var record: UnitRecord {
        UnitRecord(unit: unit, agent: slot.agent, slot: slot.index, startedAt: startedAt, endedAt: endedAt,
                   ending: ending.description, superseded: superseded, takenFrom: takenFrom, handedOver: handedOver,
                   command: command, log: log, result: result, usage: usage)
    }
}

/// The mutable heart of a run: the queue, the results so far, and the slots waiting for work.
/// One actor owns it; slot tasks ask it for work and hand results back.
actor RunState {
    var scheduler: Scheduler
    private let expected: [ResultKey: (TestID, Framework)]
    private var attempts: [ResultKey: [Attempt]] = [:]
    var running: [Int: Running] = [:]
    private var cancellers: [Int: @Sendable () -> Void] = [:]
    private var superseded: Set<Int> = []
    private var overheads: [String: (sum: Double, count: Int)] = [:]
    private var timerArmed = false
    let straggler = StragglerPolicy()
    /// Work stealing (RunState+Stealing.swift): tests each running unit handed over, parts waiting for an idle slot,
    /// test times seen so far in this run (per destination and class), and every steal for the report.
    var handedOver: [Int: Set<TestID>] = [:]
    var stolenParts: [WorkUnit] = []
    var observed: [String: (sum: Double, count: Int)] = [:]
    var steals: [StealReport] = []
    /// Slots waiting for work right now, per agent.
    var idle: [String: Int] = [:]

    struct Running {
        var unit: WorkUnit
        var start: Double
        var agent: String
        /// The other copy of a straggler and its backup.
        var twin: Int?
        var isBackup: Bool
        /// Tests this process has started, and the one it runs now (since when).
        var started: Set<TestID> = []
        var current: (test: TestID, since: Double)?
        var takenFrom: Int?
        /// Cores it used between its last two CPU samples, the last sample, and its peak memory so far.
        var cpuRate: Double?
        var lastUsage: (cpu: Double, at: Double)?
        var peakMemory: Int64?

        init(unit: WorkUnit, start: Double, agent: String, twin: Int?, isBackup: Bool, takenFrom: Int? = nil) {
            self.unit = unit
            self.start = start
            self.agent = agent
            self.twin = twin
            self.isBackup = isBackup
            self.takenFrom = takenFrom
        }
    }
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private(set) var finished: [FinishedUnit] = []
    private(set) var warnings: [String] = []
    private(set) var measurements: [MeasurementRecord] = []
    private var stopped = false
    let requeueBudget: Int
    let progress: ProgressHandler
    private let slots: Int
    private var failures = 0
    private var doneCount = 0
    /// Test runs the run asks for: every test once, or once per repetition under `--repeat`.
    private let expectedRuns: Int
    /// `--repeat`: the run's seed (each unit's `FANOUT_SEED` derives from it), and whether the first failure stops
    /// the hunt; `huntOver` once it has.
    let runSeed: Int?
    private let untilFailure: Bool
    private(set) var huntOver = false

    struct ResultKey: Hashable, Sendable {
        var destination: String
        var test: TestID
    }

    /// The hardware class of each destination that runs on a device (its model and OS), whatever agent runs it.
    private let deviceClasses: [String: String]

    /// CPU-aware packing (see `CapacityPolicy`); nil: off.
    let capacity: CapacityPolicy?

    init(scheduler: Scheduler, items: [WorkItem], requeueBudget: Int, retries: Int, slots: Int,
         deviceClasses: [String: String] = [:], capacity: CapacityPolicy? = CapacityPolicy(), runSeed: Int? = nil,
         untilFailure: Bool = false, progress: @escaping ProgressHandler) {
        self.runSeed = runSeed
        self.untilFailure = untilFailure
        expectedRuns = items.reduce(0) { $0 + $1.tests.count }
        self.deviceClasses = deviceClasses
        self.capacity = capacity
        self.retries = retries
        self.scheduler = scheduler
        var expected: [ResultKey: (TestID, Framework)] = [:]
        for item in items {
            for id in item.testIDs { expected[ResultKey(destination: item.destination, test: id)] = (id, item.framework) }
        }
        self.expected = expected
        self.requeueBudget = requeueBudget
        self.slots = slots
        self.progress = progress
    }

    /// The next unit for a free slot. Waits while other units still run (they may give work back); nil when the
    /// run is over for this slot.
    func next(for slot: SlotRef, now: @Sendable () -> Double) async -> WorkUnit? {
        while true {
            if stopped || huntOver || Task.isCancelled { return nil }
            // Retries avoid the agent their test failed on while another agent is alive to take them.
            let alone = liveAgents.subtracting([slot.agent]).isEmpty
            let t = now()
            let destinations = serves[slot.agent] ?? []
            let mine = running.values.filter { $0.agent == slot.agent }
            // An exclusive unit has its agent to itself; it starts only on an agent with nothing running.
            let agentIsIdle = mine.isEmpty
            let exclusiveRunning = mine.contains { $0.unit.items.contains(where: \.exclusive) }
            if let part = takeStolenPart(for: slot, serving: destinations, now: t) { return part }
            let machine = machineState(of: slot.agent)
            let fits: (WorkItem) -> Bool = { [capacity] item in
                guard let capacity, let machine else { return true }
                // `feedback_first` work is waited for by a person: it may share a core, never overfill memory.
                return capacity.admits(share: item.startsFirst == true ? nil : item.cpuShare, memory: item.peakMemory,
                                       on: machine)
            }
            if !exclusiveRunning, let unit = scheduler.next(now: t, overhead: overhead(on: slot.agent), accepts: {
                destinations.contains($0.destination) && (alone || $0.avoidAgent != slot.agent)
                    && (!$0.exclusive || agentIsIdle) && fits($0)
            }) {
                running[unit.id] = Running(unit: unit, start: t, agent: slot.agent, twin: nil, isBackup: false)
                return unit
            }
            if running.isEmpty { return nil }
            // A machine whose cores are all busy gains nothing from another copy or piece of computing work.
            let saturated = capacity != nil && machine?.isSaturated == true
            if let part = steal(for: slot, serving: destinations, now: t, computingAllowed: !saturated) { return part }
            if !saturated, let backup = backUpStraggler(for: slot, now: t, alone: alone) { return backup }
            armTimer()
            idle[slot.agent, default: 0] += 1
            await withCheckedContinuation { waiters.append($0) }
            idle[slot.agent, default: 1] -= 1
        }
    }

    /// An idle slot with nothing queued: start a copy of a unit that runs far past its estimate, if it pays.
    private func backUpStraggler(for slot: SlotRef, now: Double, alone: Bool) -> WorkUnit? {
        // A unit that computes is making progress: a copy beside it on the same machine would only share its cores.
        // Until its first CPU samples say whether it computes, it gets no copy there either.
        let here = machine(of: slot.agent)
        let candidates = running.values.map {
            RunningUnit(id: $0.unit.id, start: $0.start, estimate: $0.unit.estimate, agent: $0.agent,
                        excluded: $0.twin != nil || $0.isBackup
                            || (capacity != nil && resources[$0.agent] != nil && machine(of: $0.agent) == here
                                && ($0.cpuRate == nil || isComputing($0))))
        }
        guard let id = straggler.pick(candidates, now: now, queueEmpty: scheduler.isEmpty, idleAgent: slot.agent,
                                      otherAgentsAlive: !alone),
              let original = running[id] else { return nil }
        let backup = scheduler.makeUnit(original.unit.items)
        running[backup.id] = Running(unit: backup, start: now, agent: slot.agent, twin: id, isBackup: true)
        running[id]?.twin = backup.id
        progress(.phase("unit \(id) on \(original.agent) runs \(formatSeconds(now - original.start)) against an estimate of \(formatSeconds(original.unit.estimate)): backup unit \(backup.id) on \(slot.agent)"))
        return backup
    }

    /// Idle slots look again from time to time: a straggler is a matter of time, not of an event.
    func armTimer() {
        guard !timerArmed, running.values.contains(where: { $0.twin == nil && !$0.isBackup }) else { return }
        timerArmed = true
        Task {
            try? await Task.sleep(for: .milliseconds(250))
            self.timerFired()
        }
    }

    private func timerFired() {
        timerArmed = false
        wakeAll()
    }

    /// Lets the twin of a unit stop it if the twin finishes first.
    func setCanceller(_ unit: Int, _ cancel: @escaping @Sendable () -> Void) {
        if superseded.contains(unit) { cancel() } else { cancellers[unit] = cancel }
    }

    /// Mean start-up cost of a test process measured on this agent (unit time minus the suites' own time).
    func overhead(on agent: String) -> Double? {
        guard let o = overheads[agent], o.count > 0 else { return nil }
        return o.sum / Double(o.count)
    }

    var measuredOverheads: [String: Double] {
        overheads.compactMapValues { $0.count > 0 ? $0.sum / Double($0.count) : nil }
    }

    private var liveAgents: Set<String> = []
    var serves: [String: Set<String>] = [:]
    private var hardware: [String: String] = [:]
    /// Each agent's cores and memory, as it reported them when it was admitted.
    private(set) var resources: [String: AgentResources] = [:]
    private let retries: Int

    /// Work is queued or running: a lost agent is worth re-admitting.
    var hasWork: Bool { !stopped && (!scheduler.isEmpty || !running.isEmpty || !stolenParts.isEmpty) }

    /// An agent is deployed, takes work for these destinations, and is of this hardware class.
    func agentReady(_ name: String, serves destinations: Set<String>, hardwareClass: String?,
                    resources: AgentResources? = nil) {
        liveAgents.insert(name)
        serves[name] = destinations
        if let hardwareClass { hardware[name] = hardwareClass }
        if let resources { self.resources[name] = resources }
        wakeAll()
    }

    /// An agent stopped taking work (unusable, lost, or done): waiting slots look again (a retry that avoided an
    /// agent may now have only that one left).
    func agentGone(_ name: String) {
        liveAgents.remove(name)
        wakeAll()
    }

    /// No more units will be handed out (interrupted).
    func stop() {
        stopped = true
        wakeAll()
    }

    func warn(_ text: String) {
        warnings.append(text)
        progress(.warning(text))
    }

    func recordTestEnded(_ id: TestID, _ attempt: Attempt, destination: String, unit: Int? = nil) {
        if let unit { testEnded(id, attempt, destination: destination, unit: unit) }
        if attempt.outcome.isFailure { failures += 1 }
        doneCount += 1
        progress(.testEnded(id, destination: destination, outcome: attempt.outcome, duration: attempt.duration,
                            issues: attempt.issues))
    }

    func complete(_ finishedUnit: FinishedUnit) {
        var done = finishedUnit
        let me = running.removeValue(forKey: done.unit.id)
        cancellers[done.unit.id] = nil
        done.takenFrom = me?.takenFrom
        done.handedOver = handedOver.removeValue(forKey: done.unit.id)?.count ?? 0
        if superseded.contains(done.unit.id) {
            var lost = done
            lost.superseded = true
            finished.append(lost)
            progress(.unitEnded(unit: done.unit.id, agent: done.slot.agent, ending: "stopped: its twin finished first",
                                duration: done.endedAt - done.startedAt))
            wakeAll()
            return
        }
        if let twin = me?.twin, running[twin] != nil {
            superseded.insert(twin)
            cancellers.removeValue(forKey: twin)?()
        }
        if case .exited = done.ending, !done.result.suiteDurations.isEmpty {
            let start = max(0, (done.endedAt - done.startedAt) - done.result.suiteDurations.values.reduce(0, +))
            overheads[done.slot.agent, default: (0, 0)].sum += start
            overheads[done.slot.agent, default: (0, 0)].count += 1
        }
        finished.append(done)
        let destination = done.unit.destination
        let seed = runSeed.map { done.unit.seed(run: $0) }
        func stamped(_ attempt: Attempt, _ id: TestID) -> Attempt {
            var a = attempt
            a.repetition = done.unit.repetition(of: id)
            a.seed = seed
            return a
        }
        for (id, found) in done.result.attempts.sorted(by: { $0.key < $1.key }) {
            let attempt = stamped(found, id)
            attempts[ResultKey(destination: destination, test: id), default: []].append(attempt)
            // Ended tests were reported live as their lines arrived; crashes and time-outs are known only now.
            if attempt.outcome == .crashed || attempt.outcome == .timedOut {
                recordTestEnded(id, attempt, destination: destination)
            }
        }
        for m in done.result.measurements {
            measurements.append(MeasurementRecord(destination: destination, agent: done.slot.agent, measurement: m,
                                                  hardwareClass: deviceClasses[destination] ?? hardware[done.slot.agent]))
        }
        if let problem = done.result.problem { warn("unit \(done.unit.id) on \(done.slot.agent): \(problem)") }
        let after = UnitAftermath(unit: done.unit, result: done.result, ending: done.ending, agent: done.slot.agent,
                                  stopping: stopped || huntOver, requeue: RequeuePolicy(budget: requeueBudget),
                                  retry: RetryPolicy(retries: retries))
        for n in after.missing {
            attempts[ResultKey(destination: destination, test: n.test), default: []].append(stamped(n.attempt, n.test))
            recordTestEnded(n.test, n.attempt, destination: destination)
        }
        for n in after.abandoned {
            attempts[ResultKey(destination: destination, test: n.test), default: []].append(stamped(n.attempt, n.test))
        }
        scheduler.requeue(after.requeue)
        // `--until-failure`: the first failure ends the hunt. Nothing new starts; the units running finish, so every
        // repetition before the failing one has run.
        if untilFailure, !huntOver, done.result.attempts.contains(where: { $0.value.outcome.isFailure }) {
            huntOver = true
            let dropped = scheduler.drain()
            stolenParts.removeAll()
            progress(.phase("--until-failure: a test failed in unit \(done.unit.id) on \(done.slot.agent); "
                + "\(dropped) queued item\(dropped == 1 ? "" : "s") will not run"))
        }
        progress(.unitEnded(unit: done.unit.id, agent: done.slot.agent, ending: done.ending.description,
                            duration: done.endedAt - done.startedAt))
        reportStatus()
        wakeAll()
    }

    func reportStatus() {
        let done = min(doneCount, expectedRuns)
        let runningWork = running.values.reduce(0.0) { $0 + $1.unit.estimate }
        let eta = (scheduler.remainingWork + runningWork) / Double(max(1, slots))
        progress(.status(done: done, total: expectedRuns, failures: failures, eta: eta))
    }

    func wakeAll() {
        let w = waiters
        waiters.removeAll()
        for c in w { c.resume() }
    }

    /// Every test that was asked for, exactly once, with all of its attempts. Tests that never got an attempt are
    /// not run, with the reason.
    func results(reasonForMissing: String) -> [TestResult] {
        let reason = huntOver ? "not run: --until-failure stopped the run at the first failure, before this test's "
            + "first repetition" : reasonForMissing
        return expected.map { key, value -> TestResult in
            var tries = attempts[key] ?? []
            if tries.isEmpty {
                tries = [Attempt(outcome: .notRun, duration: 0, issues: [Issue(kind: .other, message: reason)],
                                 unit: 0, agent: "")]
            }
            // A `--repeat` run's attempts in repetition order; its outcome over the repetitions.
            let stats = RepeatStats(tries)
            if stats != nil { tries.sort { ($0.repetition ?? 0) < ($1.repetition ?? 0) } }
            var result = TestResult(id: value.0, framework: value.1, destination: key.destination,
                                    outcome: stats == nil ? Self.finalOutcome(tries) : RepeatStats.outcome(tries),
                                    attempts: tries)
            result.repeats = stats
            return result
        }.sorted { ($0.destination, $0.id) < ($1.destination, $1.id) }
    }

    /// The last attempt decides; a pass after a failure is flaky.
    static func finalOutcome(_ attempts: [Attempt]) -> Outcome {
        guard let last = attempts.last?.outcome else { return .notRun }
        if last == .passed, attempts.dropLast().contains(where: { $0.outcome.isFailure }) { return .flaky }
        return last
    }
}
