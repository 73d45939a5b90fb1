import Testing
@testable import FanoutCore

/// What becomes of an ended unit's tests: re-queued within the budget, retried elsewhere, or not run with a reason.
@Suite(.timeLimit(.minutes(1))) struct UnitAftermathTests {
    let a = item("M", "A", 1, tests: 4)
    let b = item("M", "B", 1, tests: 2)
    var unit: WorkUnit { WorkUnit(id: 7, items: [a, b]) }
    let requeue = RequeuePolicy(budget: 2)


    func collect(_ ending: UnitEnding, ended: [(TestID, TestStatus)], running: TestID? = nil,
                 unit: WorkUnit? = nil) -> UnitResult {
        var c = UnitCollector(unit: unit ?? self.unit, agent: "agent-1")
        for (t, status) in ended {
            c.consume(.started(t))
            c.consume(.ended(t, status, duration: 0.25, reason: nil))
        }
        if let running { c.consume(.started(running)) }
        return c.finish(ending, diagnostics: "")
    }

    func aftermath(_ ending: UnitEnding, _ result: UnitResult, unit: WorkUnit? = nil, stopping: Bool = false,
                   retries: Int = 0) -> UnitAftermath {
        UnitAftermath(unit: unit ?? self.unit, result: result, ending: ending, agent: "agent-1", stopping: stopping,
                      requeue: requeue, retry: RetryPolicy(retries: retries))
    }

    // MARK: The re-queue budget

    @Test func anAgentLostAfterProgressSpendsTheBudgetOnce() {
        #expect(requeue.fate(of: a, agentLost: true, madeProgress: true, stopping: false) == .requeue(withRequeues(a, 1)))
        // Without progress the collector has charged the item already: not twice.
        #expect(requeue.fate(of: a, agentLost: true, madeProgress: false, stopping: false) == .requeue(a))
        #expect(requeue.fate(of: a, agentLost: false, madeProgress: true, stopping: false) == .requeue(a))
    }

    @Test func pastTheBudgetTheTestsAreNotRunAndSayWhy() throws {
        guard case .notRun(let why) = requeue.fate(of: withRequeues(a, 2), agentLost: true, madeProgress: true,
                                                   stopping: false) else {
            Testing.Issue.record("an item started 3 times with a budget of 2 must not go back")
            return
        }
        #expect(why.contains("started 3 times") && why.contains("budget 2"), "\(why)")
        #expect(requeue.fate(of: withRequeues(a, 2), agentLost: false, madeProgress: true, stopping: false)
            == .requeue(withRequeues(a, 2)), "at the budget, still one more")
    }

    @Test func nothingGoesBackWhileTheRunStops() {
        #expect(requeue.fate(of: a, agentLost: false, madeProgress: true, stopping: true)
            == .notRun("the run was interrupted before this test ran"))
    }

    /// The agents behind one bastion are lost at once: a unit handed to each in turn finds its agent gone before its
    /// process starts a test. That spends the loss budget (the re-queue budget plus one per agent), not the re-queue
    /// budget, so the work is not given up; past the loss budget it is, saying why. An agent lost during a test
    /// still spends the re-queue budget, as before.
    @Test func anAgentLostBeforeAnyTestStartedSpendsTheLossBudgetNotTheRequeueBudget() {
        let fleet = RequeuePolicy(budget: 2, agents: 3)
        #expect(fleet.lossBudget == 5)
        var work = unit
        for hop in 1...5 {
            let result = collect(.agentLost("lost hop 1 of 2, bastion jump1"), ended: [], unit: work)
            #expect(result.leftovers.allSatisfy { $0.lostBeforeStart == hop && $0.requeues == 0 }, "hop \(hop)")
            let after = UnitAftermath(unit: work, result: result, ending: .agentLost("gone"), agent: "agent-\(hop)",
                                      stopping: false, requeue: fleet, retry: RetryPolicy(retries: 0))
            #expect(after.abandoned.isEmpty && after.requeue.count == 2, "hop \(hop): back to the queue")
            work = WorkUnit(id: 7 + hop, items: after.requeue)
        }
        let last = collect(.agentLost("gone"), ended: [], unit: work)
        let after = UnitAftermath(unit: work, result: last, ending: .agentLost("gone"), agent: "agent-6", stopping: false,
                                  requeue: fleet, retry: RetryPolicy(retries: 0))
        #expect(after.requeue.isEmpty && after.abandoned.count == 6)
        #expect(after.abandoned.first?.attempt.issues.first?.message.contains("lost 6 times before its process started a test") == true,
                "\(after.abandoned.first?.attempt.issues ?? [])")

        // Lost while a test ran: the re-queue budget, as for any unit that made no progress.
        let during = collect(.agentLost("gone"), ended: [], running: TestID(suite: a.suite, name: "t0"))
        #expect(during.leftovers.allSatisfy { $0.requeues == 1 && $0.lostBeforeStart == nil })
    }

    func withRequeues(_ item: WorkItem, _ n: Int) -> WorkItem {
        var copy = item
        copy.requeues = n
        return copy
    }

    // MARK: Retries

    @Test func onlyTheFailedTestsRunAgainAvoidingTheirAgent() throws {
        let result = collect(.exited(1), ended: [(tid("A", 0), .passed), (tid("A", 1), .failed), (tid("A", 2), .failed),
                                                 (tid("A", 3), .passed), (tid("B", 0), .passed), (tid("B", 1), .skipped)])
        let items = RetryPolicy(retries: 2).items(for: unit, result: result, agent: "agent-1")
        #expect(items.count == 1)
        let retry = try #require(items.first)
        #expect(retry.suite == a.suite && retry.tests == ["t1", "t2"] && !retry.isWholeSuite)
        #expect(retry.retry == 1 && retry.avoidAgent == "agent-1")
        #expect(retry.estimate == 0.5, "the failed tests' own time")
        #expect(RetryPolicy(retries: 0).items(for: unit, result: result, agent: "agent-1").isEmpty)
    }

    /// Queue mode: a retry belongs to the queue item of the try it repeats, so the item is not completed before it.
    @Test func aRetryKeepsItsQueueItem() throws {
        var queued = a
        queued.queueItem = 42
        let unit = WorkUnit(id: 9, items: [queued])
        let result = collect(.exited(1), ended: [(tid("A", 0), .failed)], unit: unit)
        let retry = try #require(RetryPolicy(retries: 1).items(for: unit, result: result, agent: "agent-1").first)
        #expect(retry.queueItem == 42)
    }

    @Test func aTestThatUsedItsRetriesIsNotRetriedAgain() {
        var again = a
        again.retry = 2
        let unit = WorkUnit(id: 8, items: [again])
        let result = collect(.exited(1), ended: [(tid("A", 0), .failed)], unit: unit)
        #expect(RetryPolicy(retries: 2).items(for: unit, result: result, agent: "agent-1").isEmpty)
        #expect(RetryPolicy(retries: 3).items(for: unit, result: result, agent: "agent-1").count == 1)
    }

    // MARK: The fate of tests the unit never reported

    @Test func aCrashRequeuesWhatTheProcessDidNotReach() {
        let result = collect(.exited(132), ended: [(tid("A", 0), .passed)], running: tid("A", 1))
        #expect(result.attempts[tid("A", 1)]?.outcome == .crashed, "the running test crashed (the collector's verdict)")
        let after = aftermath(.exited(132), result)
        #expect(after.missing.isEmpty && after.abandoned.isEmpty)
        #expect(after.requeue.flatMap(\.testIDs) == [tid("A", 2), tid("A", 3), tid("B", 0), tid("B", 1)])
        #expect(after.requeue.allSatisfy { $0.requeues == 0 }, "a crash after progress does not spend the budget")
    }

    @Test func aLostAgentRequeuesAndSpendsTheBudget() {
        let result = collect(.agentLost("connection reset"), ended: [(tid("A", 0), .passed)])
        let after = aftermath(.agentLost("connection reset"), result)
        #expect(after.requeue.count == 2 && after.requeue.allSatisfy { $0.requeues == 1 })
        // Lost again and again: past the budget, its tests are not run, with the reason, charged to this unit.
        var tired = unit
        tired.items = tired.items.map { withRequeues($0, 2) }
        let last = aftermath(.agentLost("gone"), collect(.agentLost("gone"), ended: [(tid("A", 0), .passed)], unit: tired),
                             unit: tired)
        #expect(last.requeue.isEmpty)
        #expect(last.abandoned.map(\.test) == [tid("A", 1), tid("A", 2), tid("A", 3), tid("B", 0), tid("B", 1)])
        #expect(last.abandoned.allSatisfy { $0.attempt.outcome == .notRun && $0.attempt.unit == 7 && $0.attempt.agent == "agent-1" })
    }

    @Test func testsTheBinaryDidNotRunAreNotRunAndNeverRequeued() {
        // A normal exit that skipped B entirely: re-running cannot help.
        let result = collect(.exited(0), ended: (0..<4).map { (tid("A", $0), .passed) })
        let after = aftermath(.exited(0), result)
        #expect(after.requeue.isEmpty && after.abandoned.isEmpty)
        #expect(after.missing.map(\.test) == [tid("B", 0), tid("B", 1)])
        #expect(after.missing.allSatisfy { $0.attempt.outcome == .notRun })
        #expect(after.missing.first?.attempt.issues.first?.message == result.problem, "the unit's problem says why")
    }

    @Test func aCancelledUnitOrAStoppingRunGivesNothingBackAndRetriesNothing() {
        let failed = collect(.cancelled, ended: [(tid("A", 0), .failed)])
        let cancelled = aftermath(.cancelled, failed, retries: 1)
        #expect(cancelled.abandoned.count == 5 && cancelled.requeue.map(\.retry) == [1],
                "a cancelled unit (its twin won) gives nothing back, but its failure may still be retried")
        #expect(cancelled.abandoned.allSatisfy { $0.attempt.issues.first?.message == "the run was interrupted before this test ran" })
        let stopping = aftermath(.exited(132), collect(.exited(132), ended: [(tid("A", 0), .failed)], running: tid("A", 1)),
                                 stopping: true, retries: 1)
        #expect(stopping.requeue.isEmpty && stopping.abandoned.count == 4)
    }

    func tid(_ cls: String, _ t: Int) -> TestID { TestID(module: "M", suite: cls, name: "t\(t)") }
}
