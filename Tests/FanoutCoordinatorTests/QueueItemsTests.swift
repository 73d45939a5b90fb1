@testable import FanoutCoordinator
import FanoutCore
import Testing

/// Queue mode's bookkeeping on plain values (no dispatcher, no clock): when a queue item is settled, with which
/// results, and what an unserved destination's items settle as.
@Suite struct QueueItemsTests {
    static func item(_ name: String, number: Int, destination: String = "local", tests: Int = 2) -> WorkItem {
        var item = WorkItem(suite: SuiteID(module: "M", name: name), framework: .xctest, destination: destination,
                            tests: (0..<tests).map { "t\($0)" }, isWholeSuite: true, estimate: 1,
                            source: .history(samples: 1))
        item.queueItem = number
        return item
    }

    static func ledger(_ items: [WorkItem]) -> RunLedger {
        RunLedger(items: items, deviceClasses: [:], runSeed: nil, progress: { _ in })
    }

    static func attempt(_ outcome: Outcome, unit: Int) -> Attempt {
        Attempt(outcome: outcome, duration: 0.1, issues: outcome == .failed ? [Issue(kind: .assertion, message: "no")] : [],
                unit: unit, agent: "a")
    }

    @Test func anItemSettlesOnlyWhenNoneOfItsWorkIsBusyAndOnlyOnce() {
        let items = [Self.item("A", number: 1), Self.item("B", number: 2)]
        var queue = QueueItems()
        var ledger = Self.ledger(items)
        #expect(queue.offer(items, attempts: { _ in 0 }).map(\.queueItem) == [1, 2], "all served: all queued here")
        for item in items { for id in item.testIDs { ledger.count(Self.attempt(.passed, unit: 1), of: id, destination: "local") } }

        let first = queue.settle(busy: [2], ledger: ledger)
        #expect(first.map(\.item) == [1], "item 2 still has work here")
        #expect(first.first?.results.map(\.outcome) == [.passed, .passed])
        #expect(queue.settle(busy: [2], ledger: ledger).isEmpty, "a settled item is no longer open")
        #expect(queue.settle(busy: [], ledger: ledger).map(\.item) == [2])
        #expect(queue.open.isEmpty)
    }

    @Test func anItemsResultsAreTheAttemptsMadeForIt() {
        // The job failed a test in item 1, then took the retry item 2 for it itself: item 2 reports only the retry.
        let first = Self.item("A", number: 1, tests: 1)
        var queue = QueueItems()
        var ledger = Self.ledger([first])
        _ = queue.offer([first], attempts: { ledger.attemptCount(of: $0) })
        let id = first.testIDs[0]
        ledger.count(Self.attempt(.failed, unit: 1), of: id, destination: "local")
        #expect(queue.settle(busy: [], ledger: ledger).first?.results.first?.outcome == .failed)

        let retry = Self.item("A", number: 2, tests: 1)
        _ = queue.offer([retry], attempts: { ledger.attemptCount(of: $0) })
        ledger.count(Self.attempt(.passed, unit: 2), of: id, destination: "local")
        let settled = queue.settle(busy: [], ledger: ledger)
        let result = try? #require(settled.first?.results.first)
        #expect(settled.map(\.item) == [2])
        #expect(result?.attempts.map(\.unit) == [2], "not the attempt item 1 already reported")
        #expect(result?.outcome == .passed, "its verdict from its own attempts: passed, not flaky")
    }

    @Test func aRetryItemWithNoAttemptOfItsOwnIsNotRunNeverTheEarlierVerdict() {
        let own = QueueItems.ownAttempts(
            TestResult(id: TestID(module: "M", suite: "A", name: "t0"), framework: .xctest, destination: "local",
                       outcome: .failed, attempts: [Self.attempt(.failed, unit: 1)]),
            skipping: 1, reason: "the run was interrupted before this test ran")
        #expect(own.outcome == .notRun)
        #expect(own.attempts.first?.issues.first?.message == "the run was interrupted before this test ran")
        let kept = QueueItems.ownAttempts(
            TestResult(id: TestID(module: "M", suite: "A", name: "t0"), framework: .xctest, destination: "local",
                       outcome: .flaky, attempts: [Self.attempt(.failed, unit: 1), Self.attempt(.passed, unit: 2)]),
            skipping: 0, reason: "-")
        #expect(kept.outcome == .flaky && kept.attempts.count == 2, "nothing before it: the result as it is")
    }

    @Test func itemsOfAnUnservedDestinationSettleAsNotRunWithTheReason() {
        let items = [Self.item("A", number: 1, destination: "ios"), Self.item("B", number: 2)]
        var queue = QueueItems(unserved: ["ios": "no agent of this job serves destination ios"])
        let ledger = Self.ledger(items)
        #expect(queue.offer(items, attempts: { _ in 0 }).map(\.queueItem) == [2], "only the served item is queued")
        let settled = queue.settle(busy: [2], ledger: ledger)
        #expect(settled.map(\.item) == [1])
        #expect(settled.first?.results.map(\.outcome) == [.notRun, .notRun])
        #expect(settled.first?.results.first?.attempts.first?.issues.first?.message
                == "no agent of this job serves destination ios")
    }

    @Test func anAgentRetiredWhileTheFeedIsClosedUnservesNothing() {
        var queue = QueueItems(servedBy: ["local": ["linux-1"]])
        #expect(queue.retire(agent: "linux-1", feedOpen: false).isEmpty, "the feed is closed: only remembered")
        #expect(queue.unserved.isEmpty)
    }

    @Test func aDestinationIsUnservedOnceItsLastAgentRetires() {
        var queue = QueueItems(servedBy: ["ios": ["mac-1", "mac-2"], "local": ["linux-1"]])
        let queued = Self.item("A", number: 1, destination: "ios")
        let later = Self.item("B", number: 2, destination: "ios")
        let ledger = Self.ledger([queued, later])
        #expect(queue.offer([queued], attempts: { _ in 0 }).count == 1, "served while mac-1 and mac-2 are there")
        #expect(queue.retire(agent: "mac-1").isEmpty, "mac-2 still serves ios")
        #expect(queue.retire(agent: "mac-2") == ["ios"])
        #expect(queue.retire(agent: "mac-2").isEmpty, "said once")
        #expect(queue.unserved["ios"]?.contains("no agent of this job was left to serve destination ios") == true)

        // Its queued work comes back from the queue here and settles as not run; what the feed offers later too.
        queue.unservedWork([queued])
        #expect(queue.offer([later], attempts: { _ in 0 }).isEmpty)
        let settled = queue.settle(busy: [], ledger: ledger)
        #expect(settled.map(\.item) == [1, 2])
        #expect(settled.flatMap(\.results).allSatisfy { $0.outcome == .notRun })
        #expect(settled.flatMap(\.results).allSatisfy {
            $0.attempts.first?.issues.first?.message.contains("was left to serve destination ios") == true })
    }
}
