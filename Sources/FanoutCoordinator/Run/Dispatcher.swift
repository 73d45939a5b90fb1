import FanoutCore
import Foundation

/// The run's dispatcher: the queue, the units running and the slots waiting for work, twins of stragglers and
/// steals (Dispatcher+Stealing), CPU-aware admission (Dispatcher+Capacity). What the units produced goes to its
/// `RunLedger`. One actor owns both; slot tasks ask it for work and hand finished units back. It keeps time with
/// the run's `RunClock`: idle slots look again every `lookAgain` of it.
actor Dispatcher {
    // The queue and the units running.
    var scheduler: Scheduler
    var running: [Int: Running] = [:]
    /// Slots waiting for work: their continuations, and how many per agent.
    private var waiters: [CheckedContinuation<Void, Never>] = []
    var idle: [String: Int] = [:]
    private(set) var stopped = false
    private var timerArmed = false
    let clock: RunClock
    let progress: ProgressHandler
    private let slots: Int

    // What happens to a unit's leftovers.
    let requeueBudget: Int
    private let retries: Int
    /// `--repeat`: whether the first failure stops the hunt; `huntOver` once it has.
    private let untilFailure: Bool
    private(set) var huntOver = false

    // Stragglers: twins stop each other through their cancellers; a unit in `superseded` lost to its twin.
    let straggler = StragglerPolicy()
    private var cancellers: [Int: @Sendable () -> Void] = [:]
    private var superseded: Set<Int> = []

    /// Work stealing (Dispatcher+Stealing.swift): tests each running unit handed over, parts waiting for an idle
    /// slot, test times seen so far in this run (per destination and class), and every steal for the report.
    var handedOver: [Int: Set<TestID>] = [:]
    var stolenParts: [WorkUnit] = []
    var observed: [String: (sum: Double, count: Int)] = [:]
    var steals: [StealReport] = []

    /// Measured alone (Dispatcher+Measuring.swift): the units that ended on each agent while others there may still
    /// be measuring, and whether each unit's measurements were taken alone.
    var endedSpans: [String: [AgentSpan]] = [:]
    var measuredAlone: [Int: [TestID: Bool]] = [:]
    /// Tests run again alone after a measurement beside other work failed (once each).
    var remeasured: Set<TestID> = []

    // The agents: which are alive, what each serves, its hardware class, and its cores and memory as it reported
    // them when it was admitted.
    private var liveAgents: Set<String> = []
    var serves: [String: Set<String>] = [:]
    private var hardware: [String: String] = [:]
    private(set) var resources: [String: AgentResources] = [:]
    /// CPU-aware packing (Dispatcher+Capacity.swift, the rule is `CapacityPolicy`); nil: off.
    let capacity: CapacityPolicy?

    /// Queue mode (Dispatcher+Queue.swift): the build's queue may still give work (slots wait rather than end), and
    /// the tests of each queue item taken whose verdicts are not all in yet.
    var feedOpen = false
    var openQueueItems: [Int: [RunLedger.ResultKey]] = [:]
    /// Destinations no agent of this job serves (queue mode), with the reason their tests do not run; the agents that
    /// serve each destination, and those done for the run.
    var unservedDestinations: [String: String] = [:]
    var agentsServing: [String: Set<String>] = [:]
    var retiredAgents: Set<String> = []
    var unservedItems: Set<Int> = []
    /// Per queue item, the attempts each of its tests had here before the item came (a retry item this job took
    /// itself): the item's results are the attempts made for it, not those already recorded with another item.
    var attemptsBefore: [Int: [RunLedger.ResultKey: Int]] = [:]
    /// Every item taken from the queue (the job's share: its report's classes).
    var queueTaken: [WorkItem] = []

    /// What the units produced.
    var ledger: RunLedger

    /// Order checks (Dispatcher+OrderChecks.swift): check units waiting for a slot, what each check unit is for, the
    /// bisection steps awaiting their unit, the searches running per destination, the check units made per test, and the run-clock time
    /// at which in-run bisection stops (`bisectBudget` seconds after the first search began; 0: none).
    var pendingChecks: [WorkUnit] = []
    var checkUnits: [Int: OrderCheck] = [:]
    var stepWaiters: [Int: CheckedContinuation<Attempt?, Never>] = [:]
    var searching: [String: Int] = [:]
    var checksMade: [RunLedger.ResultKey: Int] = [:]
    var bisectDeadline: Double?
    let bisectBudget: Double

    /// A unit running on a slot, as the dispatcher tracks it.
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
        /// It printed a measurement: its agent takes nothing else until it ends.
        var measuring = false

        init(unit: WorkUnit, start: Double, agent: String, twin: Int?, isBackup: Bool, takenFrom: Int? = nil) {
            self.unit = unit
            self.start = start
            self.agent = agent
            self.twin = twin
            self.isBackup = isBackup
            self.takenFrom = takenFrom
        }
    }

    init(scheduler: Scheduler, items: [WorkItem], requeueBudget: Int, retries: Int, slots: Int, clock: RunClock,
         deviceClasses: [String: String] = [:], capacity: CapacityPolicy? = CapacityPolicy(), runSeed: Int? = nil,
         untilFailure: Bool = false, bisectBudget: Double = 0, progress: @escaping ProgressHandler) {
        self.bisectBudget = bisectBudget
        ledger = RunLedger(items: items, deviceClasses: deviceClasses, runSeed: runSeed, progress: progress)
        self.clock = clock
        self.untilFailure = untilFailure
        self.capacity = capacity
        self.retries = retries
        self.scheduler = scheduler
        self.requeueBudget = requeueBudget
        self.slots = slots
        self.progress = progress
    }

    /// The next unit for a free slot. Waits while other units still run (they may give work back); nil when the
    /// run is over for this slot.
    func next(for slot: SlotRef) async -> WorkUnit? {
        while true {
            if stopped || huntOver || Task.isCancelled { return nil }
            // Retries avoid the agent their test failed on while another agent is alive to take them.
            let alone = liveAgents.subtracting([slot.agent]).isEmpty
            let t = clock.now()
            let destinations = serves[slot.agent] ?? []
            let mine = running.values.filter { $0.agent == slot.agent }
            // An exclusive unit has its agent to itself; it starts only on an agent with nothing running. While it, or
            // a unit that has printed measurements, runs, nothing else starts there (Dispatcher+Measuring.swift).
            let agentIsIdle = mine.isEmpty
            let held = isHeldForMeasuring(slot.agent)
            if !held, let part = takeStolenPart(for: slot, serving: destinations, now: t) { return part }
            let machine = machineState(of: slot.agent)
            let fits: (WorkItem) -> Bool = { [capacity] item in
                guard let capacity, let machine else { return true }
                // `feedback_first` work is waited for by a person: it may share a core, never overfill memory.
                return capacity.admits(share: item.startsFirst == true ? nil : item.cpuShare, memory: item.peakMemory,
                                       on: machine)
            }
            if !held, let unit = scheduler.next(now: t, overhead: overhead(on: slot.agent), accepts: {
                destinations.contains($0.destination) && (alone || $0.avoidAgent != slot.agent)
                    && (!$0.exclusive || agentIsIdle) && fits($0)
            }) {
                running[unit.id] = Running(unit: unit, start: t, agent: slot.agent, twin: nil, isBackup: false)
                return unit
            }
            // Order checks and bisection steps come after the run's own work, before copies and steals of it.
            if !held, let check = takeOrderCheck(for: slot, serving: destinations, now: t) { return check }
            if running.isEmpty && !feedOpen && !checksPending(for: destinations) { return nil }
            // A machine whose cores are all busy gains nothing from another copy or piece of computing work.
            let saturated = capacity != nil && machine?.isSaturated == true
            if !held, let part = steal(for: slot, serving: destinations, now: t, computingAllowed: !saturated) { return part }
            if !held, !saturated, let backup = backUpStraggler(for: slot, now: t, alone: alone) { return backup }
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
                        excluded: $0.twin != nil || $0.isBackup || checkUnits[$0.unit.id] != nil
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

    /// How often idle slots look again while a unit runs that could still get a twin.
    static let lookAgain = Duration.milliseconds(250)

    /// Idle slots look again from time to time: a straggler is a matter of time, not of an event.
    func armTimer() {
        guard !timerArmed, running.values.contains(where: { $0.twin == nil && !$0.isBackup }) else { return }
        timerArmed = true
        Task { [clock] in
            await clock.pause(for: Self.lookAgain)
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
    func overhead(on agent: String) -> Double? { ledger.overhead(on: agent) }

    /// Work is queued or running: a lost agent is worth re-admitting.
    var hasWork: Bool {
        !stopped && (!scheduler.isEmpty || !running.isEmpty || !stolenParts.isEmpty || feedOpen
            || !pendingChecks.isEmpty || !searching.isEmpty)
    }

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
        abandonOrderChecks()
        wakeAll()
    }

    func warn(_ text: String) { ledger.warn(text) }

    /// A hook ended (nil: none was configured). Returns whether it passed (no hook passes too).
    @discardableResult
    func hookEnded(_ hook: HookReport?) -> Bool {
        guard let hook else { return true }
        ledger.hookEnded(hook)
        return hook.status == .passed
    }

    /// The scopes of set-up hooks that failed, one entry each: why tests no slot took are not run.
    var failedSetUps: [HookReport.Scope] {
        ledger.hooks.filter { $0.phase == .setUp && [.failed, .timedOut].contains($0.status) }.map(\.scope)
    }

    /// A test ended, as its line arrived: this run learns its time (stealing), and the ledger counts it.
    func recordTestEnded(_ id: TestID, _ attempt: Attempt, destination: String, unit: Int) {
        // An order check's tests run as context: not the run's results, nor its progress.
        guard checkUnits[unit] == nil else { return }
        testEnded(id, attempt, destination: destination, unit: unit)
        ledger.testEnded(id, attempt, destination: destination)
    }

    /// A unit ended: the ledger keeps what it produced; its leftovers go back to the queue (or are retried, or
    /// given up); its twin, if it still runs, is stopped; waiting slots look again.
    func complete(_ finishedUnit: UnitRecord) {
        var done = finishedUnit
        let me = running.removeValue(forKey: done.unit.id)
        cancellers[done.unit.id] = nil
        if let me { agentSpanEnded(done.unit.id, agent: me.agent, start: me.start, end: done.endedAt) }
        if let check = checkUnits.removeValue(forKey: done.unit.id) {
            measuredAlone[done.unit.id] = nil
            handedOver[done.unit.id] = nil
            orderCheckEnded(done, check)
            progress(.unitEnded(unit: done.unit.id, agent: done.agent, ending: done.ending.description,
                                duration: done.endedAt - done.startedAt))
            reportStatus()
            wakeAll()
            return
        }
        let alone = measuredAlone.removeValue(forKey: done.unit.id) ?? [:]
        done.takenFrom = me?.takenFrom
        done.handedOver = handedOver.removeValue(forKey: done.unit.id)?.count ?? 0
        if superseded.contains(done.unit.id) {
            ledger.superseded(done)
            wakeAll()
            return
        }
        if let twin = me?.twin, running[twin] != nil {
            superseded.insert(twin)
            cancellers.removeValue(forKey: twin)?()
        }
        // A measure test that failed XCTest's deviation rule beside other work runs again, alone (not a retry).
        let remeasure = stopped || huntOver ? [] : RemeasurePolicy().items(for: done.unit, result: done.result,
                                                                           measuredAlone: alone, alreadyRemeasured: remeasured)
        let contended = Set(remeasure.flatMap(\.testIDs))
        remeasured.formUnion(contended)
        ledger.record(done, agentHardwareClass: hardware[done.agent], measuredAlone: alone, contended: contended)
        let after = UnitAftermath(unit: done.unit, result: done.result, ending: done.ending, agent: done.agent,
                                  stopping: stopped || huntOver, requeue: RequeuePolicy(budget: requeueBudget),
                                  retry: RetryPolicy(retries: retries), remeasured: contended)
        ledger.record(after, of: done)
        scheduler.requeue(after.requeue + remeasure)
        // Order checks follow a run's own retries: none in queue mode (a failure goes back to the queue) or under
        // `--repeat` (retries are off there), whatever the retry numbers of the items.
        if !stopped && !huntOver && retries > 0 { scheduleOrderChecks(after: done) }
        for test in contended.sorted() {
            ledger.warn("\(test): its measurement failed XCTest's deviation rule while other work shared \(done.agent); "
                + "it runs again alone, and that run is its verdict (the first attempt is kept as context)")
        }
        // `--until-failure`: the first failure ends the hunt. Nothing new starts; the units running finish, so every
        // repetition before the failing one has run.
        if untilFailure, !huntOver, done.result.attempts.contains(where: { $0.value.outcome.isFailure }) {
            huntOver = true
            let dropped = scheduler.drain()
            stolenParts.removeAll()
            progress(.phase("--until-failure: a test failed in unit \(done.unit.id) on \(done.agent); "
                + "\(dropped) queued item\(dropped == 1 ? "" : "s") will not run"))
        }
        progress(.unitEnded(unit: done.unit.id, agent: done.agent, ending: done.ending.description,
                            duration: done.endedAt - done.startedAt))
        reportStatus()
        wakeAll()
    }

    /// The progress line, its ETA from the estimates of the work queued and running.
    func reportStatus() {
        let runningWork = running.values.reduce(0.0) { $0 + $1.unit.estimate }
        progress(ledger.status(work: scheduler.remainingWork + runningWork, slots: slots))
    }

    func wakeAll() {
        let w = waiters
        waiters.removeAll()
        for c in w { c.resume() }
    }

    /// Every test that was asked for, exactly once, with all of its attempts (see `RunLedger.results`).
    func results(reasonForMissing: String) -> [TestResult] {
        ledger.results(reasonForMissing: huntOver ? "not run: --until-failure stopped the run at the first failure, "
            + "before this test's first repetition" : reasonForMissing)
    }
}
