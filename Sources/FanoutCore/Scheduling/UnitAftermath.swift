/// How often leftovers of a unit may go back to the queue. Each loss of an agent spends the budget (the collector
/// has already charged units that ended before finishing any test), except a loss before the unit's process started
/// any test, which spends the loss budget: so no unit cycles forever.
public struct RequeuePolicy: Sendable, Hashable {
    /// Re-queues allowed per item before its tests are reported not run.
    public var budget: Int
    /// Losses of an agent before the work's process started any test, allowed per item (``WorkItem/lostBeforeStart``):
    /// the re-queue budget plus one per agent of the fleet, so that work handed in turn to every agent behind a
    /// bastion that just went down is not given up, and a binary that takes every agent down as it loads still ends.
    public var lossBudget: Int

    public init(budget: Int, agents: Int = 1) {
        self.budget = budget
        lossBudget = budget + max(1, agents)
    }

    /// A leftover item goes back to the queue, or its tests are not run, for this reason.
    public enum Fate: Sendable, Hashable {
        case requeue(WorkItem)
        case notRun(String)
    }

    /// - Parameters:
    ///   - leftover: tests of the unit its process did not reach (from `UnitResult.leftovers`).
    ///   - agentLost: the unit ended because its agent was lost.
    ///   - madeProgress: the unit finished at least one test.
    ///   - stopping: the run is being interrupted (or the unit was cancelled): nothing goes back.
    public func fate(of leftover: WorkItem, agentLost: Bool, madeProgress: Bool, stopping: Bool) -> Fate {
        var item = leftover
        if agentLost, madeProgress { item.requeues += 1 }
        if stopping { return .notRun("the run was interrupted before this test ran") }
        if let lost = item.lostBeforeStart, lost > lossBudget {
            return .notRun("not run: its agent was lost \(lost) times before its process started a test (every agent it "
                + "was given was unreachable, or the process takes its agent down as it starts; budget \(lossBudget))")
        }
        guard item.requeues <= budget else {
            return .notRun("not run: its unit was started \(item.requeues) times without finishing (agent lost or the process died before any test ended; budget \(budget) re-queues)")
        }
        return .requeue(item)
    }
}

/// Re-runs of failed, crashed or timed-out tests, preferring another agent than the one they failed on.
public struct RetryPolicy: Sendable, Hashable {
    /// How many times a test may run again.
    public var retries: Int

    public init(retries: Int) {
        self.retries = retries
    }

    /// The failed tests of this unit that have retries left, one item per class, to avoid `agent`. Only those tests
    /// run again; the rest of their class is not repeated. `excluding`: tests that run again anyway (alone, by
    /// `RemeasurePolicy`), not on a retry.
    public func items(for unit: WorkUnit, result: UnitResult, agent: String, excluding: Set<TestID> = []) -> [WorkItem] {
        guard retries > 0 else { return [] }
        var items: [WorkItem] = []
        for item in unit.items {
            let failed = item.tests.filter { name in
                let id = TestID(suite: item.suite, name: name)
                return result.attempts[id]?.outcome.isFailure == true && !excluding.contains(id)
            }
            guard !failed.isEmpty, item.retry < retries else { continue }
            let seconds = failed.reduce(0.0) { $0 + (result.attempts[TestID(suite: item.suite, name: $1)]?.duration ?? 0) }
            var again = WorkItem(suite: item.suite, framework: item.framework, destination: item.destination,
                                 tests: failed, isWholeSuite: false, estimate: max(seconds, 0.01), source: item.source,
                                 retry: item.retry + 1, avoidAgent: agent)
            // A performance class's retry is measured alone too.
            again.exclusive = item.exclusive
            again.shared = item.shared
            // Queue mode: the retry belongs to the queue item of the try it repeats (the item is not done before it).
            again.queueItem = item.queueItem
            items.append(again)
        }
        return items
    }
}

/// What becomes of an ended unit's tests beyond those it reported: its collector (`UnitCollector.finish`) has
/// already judged the tests that were running (crashed, timed out) and split the rest into those the binary will
/// never run (missing) and those it did not reach (leftovers). Here: missing tests are not run; leftovers go back
/// to the queue within the re-queue budget, else are not run; failed tests with retries left run again elsewhere.
public struct UnitAftermath: Sendable, Hashable {
    /// A test that will not run, with the attempt that says why.
    public struct NotRun: Sendable, Hashable {
        public var test: TestID
        public var attempt: Attempt
    }

    /// Tests the binary was asked for and did not run although it ended normally.
    public var missing: [NotRun]
    /// Leftover tests that will not run: the run is stopping, or their unit spent its re-queue budget.
    public var abandoned: [NotRun]
    /// Work for the queue: leftovers within the budget, then retries.
    public var requeue: [WorkItem]

    /// - Parameters:
    ///   - stopping: the run is being interrupted: nothing is re-queued or retried.
    public init(unit: WorkUnit, result: UnitResult, ending: UnitEnding, agent: String, stopping: Bool,
                requeue policy: RequeuePolicy, retry: RetryPolicy, remeasured: Set<TestID> = []) {
        let stoppingHere = stopping || ending == .cancelled
        missing = result.missing.map { id in
            NotRun(test: id, attempt: Attempt(
                outcome: .notRun, duration: 0,
                issues: [Issue(kind: .other, message: result.problem ?? "the test binary did not run this test")],
                unit: unit.id, agent: agent))
        }
        let agentLost: Bool = if case .agentLost = ending { true } else { false }
        var abandoned: [NotRun] = []
        var back: [WorkItem] = []
        for item in result.leftovers {
            switch policy.fate(of: item, agentLost: agentLost, madeProgress: !result.attempts.isEmpty,
                               stopping: stoppingHere) {
            case .requeue(let again):
                back.append(again)
            case .notRun(let why):
                abandoned += item.testIDs.map {
                    NotRun(test: $0, attempt: Attempt(outcome: .notRun, duration: 0, issues: [Issue(kind: .other, message: why)],
                                                      unit: unit.id, agent: agent))
                }
            }
        }
        self.abandoned = abandoned
        requeue = back + (stopping ? [] : retry.items(for: unit, result: result, agent: agent, excluding: remeasured))
    }
}
