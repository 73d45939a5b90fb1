import FanoutCore
import Foundation

/// The run's dispatcher: the owner of Core's `DispatchState` (the queue rules as a plain value: what a free slot
/// takes, steals, twins of stragglers, CPU-aware admission, a unit's end) and of the slots waiting for work. What the
/// units produced goes to its `RunLedger`. One actor owns both; slot tasks ask it for work and hand finished units
/// back. It keeps time with the run's `RunClock`: idle slots look again every `lookAgain` of it.
actor Dispatcher {
    /// The queue, the units running, the agents taking work.
    var dispatch: DispatchState
    /// The units running, and the rules that read them (measuring holds, capacity, steal candidates).
    var running: RunningUnits {
        get { dispatch.running }
        _modify { yield &dispatch.running }
    }
    var scheduler: Scheduler { dispatch.scheduler }
    /// Slots waiting for work: their continuations.
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private(set) var stopped = false
    private var timerArmed = false
    let clock: RunClock
    let progress: ProgressHandler
    private let slots: Int

    // What happens to a unit's leftovers (the loss budget grows with the fleet: `RequeuePolicy.lossBudget`).
    let requeueBudget: Int
    private let agents: Int
    private let retries: Int
    /// `--repeat`: whether the first failure stops the hunt; `huntOver` once it has.
    private let untilFailure: Bool
    private(set) var huntOver = false

    /// Stragglers: twins stop each other through their cancellers.
    private var cancellers: [Int: @Sendable () -> Void] = [:]

    /// Every steal, for the report.
    var steals: [StealReport] { dispatch.steals }

    /// Tests run again alone after a measurement beside other work failed (once each).
    var remeasured: Set<TestID> = []

    /// Each agent's hardware class.
    private var hardware: [String: String] = [:]
    /// The agents' cores and memory as they reported them when admitted.
    var resources: [String: AgentResources] { running.resources }

    /// Queue mode (Dispatcher+Queue.swift): the build's queue may still give work (slots wait rather than end), and
    /// the items taken whose verdicts are not all in yet.
    var feedOpen = false
    var queueItems = QueueItems()
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

    typealias Running = RunningUnits.Entry

    init(scheduler: Scheduler, items: [WorkItem], requeueBudget: Int, retries: Int, slots: Int, agents: Int = 1, clock: RunClock,
         deviceClasses: [String: String] = [:], capacity: CapacityPolicy? = CapacityPolicy(), runSeed: Int? = nil,
         untilFailure: Bool = false, bisectBudget: Double = 0, progress: @escaping ProgressHandler) {
        self.bisectBudget = bisectBudget
        ledger = RunLedger(items: items, deviceClasses: deviceClasses, runSeed: runSeed, progress: progress)
        self.clock = clock
        self.untilFailure = untilFailure
        self.retries = retries
        dispatch = DispatchState(scheduler: scheduler, capacity: capacity)
        self.requeueBudget = requeueBudget
        self.slots = slots
        self.agents = agents
        self.progress = progress
    }

    /// The next unit for a free slot (the rules are Core's `DispatchState`; order checks come after the run's own
    /// work, before copies and steals of it). Waits while other units still run (they may give work back); nil when
    /// the run is over for this slot.
    func next(for slot: SlotRef) async -> WorkUnit? {
        while true {
            if stopped || huntOver || Task.isCancelled { return nil }
            let t = clock.now()
            let overhead = overhead(on: slot.agent)
            if let unit = dispatch.queued(for: slot.agent, now: t, overhead: overhead) { return unit }
            let destinations = dispatch.serving(slot.agent)
            if !running.isHeldForMeasuring(slot.agent), let check = takeOrderCheck(for: slot, serving: destinations, now: t) {
                return check
            }
            let choice = dispatch.spare(for: slot.agent, now: t, overhead: overhead,
                                        moreMayCome: feedOpen || checksPending(for: destinations), checks: Set(checkUnits.keys))
            say(dispatch.takeEvents())
            switch choice {
            case .run(let unit): return unit
            case .done: return nil
            case .wait: break
            }
            armTimer()
            dispatch.idle[slot.agent, default: 0] += 1
            await withCheckedContinuation { waiters.append($0) }
            dispatch.idle[slot.agent, default: 1] -= 1
        }
    }

    /// Tells what the queue did (a steal wakes the other idle slots: parts wait for them).
    private func say(_ events: [DispatchState.Event]) {
        for event in events {
            switch event {
            case let .stole(steal, agent):
                progress(.phase("unit \(steal.from) on \(agent): \(steal.tests) test\(steal.tests == 1 ? "" : "s") it had not started go to "
                    + "\(steal.to.count) idle slot\(steal.to.count == 1 ? "" : "s") (its work expected to end in "
                    + "\(formatSeconds(steal.expectedBefore)) → \(formatSeconds(steal.expectedAfter)))"))
                wakeAll()
            case let .backedUp(unit, agent, ranFor, estimate, backup, on):
                progress(.phase("unit \(unit) on \(agent) runs \(formatSeconds(ranFor)) against an estimate of \(formatSeconds(estimate)): backup unit \(backup) on \(on)"))
            }
        }
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
        if dispatch.superseded.contains(unit) { cancel() } else { cancellers[unit] = cancel }
    }

    /// Mean start-up cost of a test process measured on this agent (unit time minus the suites' own time).
    func overhead(on agent: String) -> Double? { ledger.overhead(on: agent) }

    /// Work is queued or running: a lost agent is worth re-admitting.
    var hasWork: Bool {
        !stopped && (dispatch.hasWork || feedOpen || !pendingChecks.isEmpty || !searching.isEmpty)
    }

    /// An agent is deployed, takes work for these destinations, and is of this hardware class.
    func agentReady(_ name: String, serves destinations: Set<String>, hardwareClass: String?,
                    resources: AgentResources? = nil) {
        dispatch.agentReady(name, serves: destinations, resources: resources)
        if let hardwareClass { hardware[name] = hardwareClass }
        wakeAll()
    }

    /// An agent stopped taking work (unusable, lost, or done): waiting slots look again (a retry that avoided an
    /// agent may now have only that one left).
    func agentGone(_ name: String) {
        dispatch.agentGone(name)
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
        let check = checkUnits.removeValue(forKey: done.unit.id)
        let ended = dispatch.ended(done.unit.id, at: done.endedAt, counts: check == nil)
        let (me, alone) = (ended.entry, ended.measuredAlone)
        cancellers[done.unit.id] = nil
        if let check {
            orderCheckEnded(done, check)
            progress(.unitEnded(unit: done.unit.id, agent: done.agent, ending: done.ending.description,
                                duration: done.endedAt - done.startedAt))
            reportStatus()
            wakeAll()
            return
        }
        done.takenFrom = me?.takenFrom
        done.handedOver = ended.handedOver.count
        if ended.superseded {
            ledger.superseded(done)
            wakeAll()
            return
        }
        if let twin = ended.twinToStop { cancellers.removeValue(forKey: twin)?() }
        // A measure test that failed XCTest's deviation rule beside other work runs again, alone (not a retry).
        let remeasure = stopped || huntOver ? [] : RemeasurePolicy().items(for: done.unit, result: done.result,
                                                                           measuredAlone: alone, alreadyRemeasured: remeasured)
        let contended = Set(remeasure.flatMap(\.testIDs))
        remeasured.formUnion(contended)
        ledger.record(done, agentHardwareClass: hardware[done.agent], measuredAlone: alone, contended: contended)
        let after = UnitAftermath(unit: done.unit, result: done.result, ending: done.ending, agent: done.agent,
                                  stopping: stopped || huntOver, requeue: RequeuePolicy(budget: requeueBudget, agents: agents),
                                  retry: RetryPolicy(retries: retries), remeasured: contended)
        ledger.record(after, of: done)
        dispatch.requeue(after.requeue + remeasure)
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
            let dropped = dispatch.drain()
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
        progress(ledger.status(work: dispatch.remainingWork, slots: slots))
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
