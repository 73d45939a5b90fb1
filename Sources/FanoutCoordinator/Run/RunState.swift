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
    var slot: SlotRef
    var startedAt: Double
    var endedAt: Double
    var ending: UnitEnding
    var command: String
    var log: String
    var result: UnitResult
}

/// The mutable heart of a run: the queue, the results so far, and the slots waiting for work.
/// One actor owns it; slot tasks ask it for work and hand results back.
actor RunState {
    private var scheduler: Scheduler
    private let expected: [ResultKey: (TestID, Framework)]
    private var attempts: [ResultKey: [Attempt]] = [:]
    private var running: [Int: (WorkUnit, Double)] = [:]
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private(set) var finished: [FinishedUnit] = []
    private(set) var warnings: [String] = []
    private(set) var measurements: [MeasurementRecord] = []
    private var stopped = false
    let requeueBudget: Int
    private let progress: ProgressHandler
    private let slots: Int
    private var failures = 0
    private var doneCount = 0

    struct ResultKey: Hashable, Sendable {
        var destination: String
        var test: TestID
    }

    init(scheduler: Scheduler, items: [WorkItem], requeueBudget: Int, retries: Int, slots: Int,
         progress: @escaping ProgressHandler) {
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
            if stopped || Task.isCancelled { return nil }
            // Retries avoid the agent their test failed on while another agent is alive to take them.
            let alone = liveAgents.subtracting([slot.agent]).isEmpty
            if let unit = scheduler.next(now: now(), accepts: { alone || $0.avoidAgent != slot.agent }) {
                running[unit.id] = (unit, now())
                return unit
            }
            if running.isEmpty { return nil }
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    private var liveAgents: Set<String> = []
    private let retries: Int

    /// Work is queued or running: a lost agent is worth re-admitting.
    var hasWork: Bool { !stopped && (!scheduler.isEmpty || !running.isEmpty) }

    /// An agent is deployed and takes work.
    func agentReady(_ name: String) {
        liveAgents.insert(name)
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

    func recordTestEnded(_ id: TestID, _ attempt: Attempt, destination: String) {
        if attempt.outcome.isFailure { failures += 1 }
        doneCount += 1
        progress(.testEnded(id, destination: destination, outcome: attempt.outcome, duration: attempt.duration,
                            issues: attempt.issues))
    }

    func complete(_ done: FinishedUnit) {
        running[done.unit.id] = nil
        finished.append(done)
        let destination = done.unit.destination
        for (id, attempt) in done.result.attempts.sorted(by: { $0.key < $1.key }) {
            attempts[ResultKey(destination: destination, test: id), default: []].append(attempt)
            // Ended tests were reported live as their lines arrived; crashes and time-outs are known only now.
            if attempt.outcome == .crashed || attempt.outcome == .timedOut {
                recordTestEnded(id, attempt, destination: destination)
            }
        }
        for m in done.result.measurements {
            measurements.append(MeasurementRecord(destination: destination, agent: done.slot.agent, measurement: m))
        }
        if let problem = done.result.problem { warn("unit \(done.unit.id) on \(done.slot.agent): \(problem)") }
        for id in done.result.missing {
            let attempt = Attempt(
                outcome: .notRun, duration: 0,
                issues: [Issue(kind: .other, message: done.result.problem ?? "the test binary did not run this test")],
                unit: done.unit.id, agent: done.slot.agent)
            attempts[ResultKey(destination: destination, test: id), default: []].append(attempt)
            recordTestEnded(id, attempt, destination: destination)
        }
        let lostAgent: Bool = if case .agentLost = done.ending { true } else { false }
        var back: [WorkItem] = []
        for var item in done.result.leftovers {
            // Each loss of an agent spends the budget, so no unit cycles forever (the collector has already charged
            // units that ended before finishing any test).
            if lostAgent, !done.result.attempts.isEmpty { item.requeues += 1 }
            if item.requeues > requeueBudget || isStopping(done.ending) {
                let why = isStopping(done.ending)
                    ? "the run was interrupted before this test ran"
                    : "not run: its unit was started \(item.requeues) times without finishing (agent lost or the process died before any test ended; budget \(requeueBudget) re-queues)"
                for id in item.testIDs {
                    attempts[ResultKey(destination: destination, test: id), default: []].append(Attempt(
                        outcome: .notRun, duration: 0, issues: [Issue(kind: .other, message: why)],
                        unit: done.unit.id, agent: done.slot.agent))
                }
            } else {
                back.append(item)
            }
        }
        scheduler.requeue(back + retryItems(for: done))
        progress(.unitEnded(unit: done.unit.id, agent: done.slot.agent, ending: done.ending.description,
                            duration: done.endedAt - done.startedAt))
        reportStatus()
        wakeAll()
    }

    /// Failed, crashed or timed-out tests of this unit that have retries left, one item per class, preferring
    /// another agent. Only those tests run again; the rest of their class is not repeated.
    private func retryItems(for done: FinishedUnit) -> [WorkItem] {
        guard retries > 0, !stopped else { return [] }
        var items: [WorkItem] = []
        for item in done.unit.items {
            let failed = item.tests.filter { name in
                let id = TestID(suite: item.suite, name: name)
                return done.result.attempts[id]?.outcome.isFailure == true
            }
            guard !failed.isEmpty, item.retry < retries else { continue }
            let seconds = failed.reduce(0.0) { $0 + (done.result.attempts[TestID(suite: item.suite, name: $1)]?.duration ?? 0) }
            items.append(WorkItem(suite: item.suite, framework: item.framework, destination: item.destination,
                                  tests: failed, isWholeSuite: false, estimate: max(seconds, 0.01), source: item.source,
                                  retry: item.retry + 1, avoidAgent: done.slot.agent))
        }
        return items
    }

    private func isStopping(_ ending: UnitEnding) -> Bool {
        if stopped { return true }
        if case .cancelled = ending { return true }
        return false
    }

    func reportStatus() {
        let done = min(doneCount, expected.count)
        let runningWork = running.values.reduce(0.0) { $0 + $1.0.estimate }
        let eta = (scheduler.remainingWork + runningWork) / Double(max(1, slots))
        progress(.status(done: done, total: expected.count, failures: failures, eta: eta))
    }

    private func wakeAll() {
        let w = waiters
        waiters.removeAll()
        for c in w { c.resume() }
    }

    /// Every test that was asked for, exactly once, with all of its attempts. Tests that never got an attempt are
    /// not run, with the reason.
    func results(reasonForMissing: String) -> [TestResult] {
        expected.map { key, value -> TestResult in
            var tries = attempts[key] ?? []
            if tries.isEmpty {
                tries = [Attempt(outcome: .notRun, duration: 0, issues: [Issue(kind: .other, message: reasonForMissing)],
                                 unit: 0, agent: "")]
            }
            return TestResult(id: value.0, framework: value.1, destination: key.destination,
                              outcome: Self.finalOutcome(tries), attempts: tries)
        }.sorted { ($0.destination, $0.id) < ($1.destination, $1.id) }
    }

    /// The last attempt decides; a pass after a failure is flaky.
    static func finalOutcome(_ attempts: [Attempt]) -> Outcome {
        guard let last = attempts.last?.outcome else { return .notRun }
        if last == .passed, attempts.dropLast().contains(where: { $0.outcome.isFailure }) { return .flaky }
        return last
    }
}
