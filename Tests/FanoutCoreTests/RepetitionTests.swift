import FanoutCore
import Testing

/// `--repeat`: repetitions in order and never in one process, seeds that do not depend on the schedule, and how a
/// test's repetitions add up.
@Suite struct RepetitionTests {
    static func repeated(_ items: [WorkItem], times: Int) -> [WorkItem] {
        (1...times).flatMap { r in items.map { var c = $0; c.repetition = r; return c } }
    }

    @Test func repetitionsGoInOrderAndTwoOfThemNeverShareAProcess() {
        let base = (0..<6).map { item("M", "C\($0)", Double(6 - $0), tests: 2) }
        var scheduler = Scheduler(items: Self.repeated(base, times: 3), options: SchedulerOptions(slots: 2, overhead: 0))
        var units: [WorkUnit] = []
        var t = 0.0
        while let unit = scheduler.next(now: t) {
            units.append(unit)
            t += 0.1
        }
        #expect(units.reduce(0) { $0 + $1.items.count } == 18, "every repetition of every class")
        for unit in units {
            #expect(Set(unit.items.map(\.repetition)).count == 1, "one repetition per process: \(unit.items.map(\.repetition))")
        }
        let order = units.compactMap { $0.items.first?.repetition }
        #expect(order == order.sorted(), "repetition by repetition: \(order)")
        #expect(!Scheduler.canShareUnit({ var a = base[0]; a.repetition = 1; return a }(),
                                        { var b = base[1]; b.repetition = 2; return b }()))
        #expect(!Scheduler.canShareUnit(base[0], { var b = base[1]; b.retry = 1; return b }()), "nor two retries")
    }

    @Test func aProcessSeedDependsOnTheRunRepetitionAndRetryNotOnTheSchedule() {
        var a = item("M", "A", 1), b = item("M", "B", 1)
        a.repetition = 4
        b.repetition = 4
        let first = WorkUnit(id: 1, items: [a]), later = WorkUnit(id: 77, items: [b])
        #expect(first.seed(run: 9) == later.seed(run: 9), "any unit of repetition 4 gets the same seed")
        var c = a
        c.repetition = 5
        #expect(WorkUnit(id: 1, items: [c]).seed(run: 9) != first.seed(run: 9))
        var d = a
        d.retry = 1
        #expect(WorkUnit(id: 1, items: [d]).seed(run: 9) != first.seed(run: 9))
        #expect(first.seed(run: 10) != first.seed(run: 9))
        let seeds = (0..<1000).map { RepeatReport.seed(run: $0, repetition: 1, retry: 0) }
        #expect(seeds.allSatisfy { $0 >= 0 && $0 <= Int(Int32.max) })
        #expect(Set(seeds).count == 1000)
    }

    @Test func drainingTheQueueLeavesNothing() {
        var scheduler = Scheduler(items: Self.repeated([item("M", "A", 1), item("M", "B", 2)], times: 5),
                                  options: SchedulerOptions(slots: 2, overhead: 0))
        _ = scheduler.next(now: 0)
        let dropped = scheduler.drain()
        #expect(dropped > 0 && scheduler.isEmpty && scheduler.remainingWork == 0)
        #expect(scheduler.next(now: 1) == nil)
    }

    static func attempt(_ outcome: Outcome, _ repetition: Int, unit: Int = 1) -> Attempt {
        var a = Attempt(outcome: outcome, duration: 0.1, unit: unit, agent: "a\(repetition % 3)")
        a.repetition = repetition
        a.seed = repetition * 10
        return a
    }

    @Test func aTestsRepetitionsAddUpToAPassRateWithItsInterval() throws {
        let attempts = [Self.attempt(.passed, 1), Self.attempt(.failed, 2), Self.attempt(.passed, 3),
                        Self.attempt(.crashed, 4), Self.attempt(.passed, 5)]
        let stats = try #require(RepeatStats(attempts))
        #expect(stats.ran == 5 && stats.passed == 3 && stats.failed == 2 && stats.firstFailure == 2)
        #expect(stats.summary == "passed 3 of 5 repetitions (60.0 %, 95 % interval 23.1-88.2 %); first failed in repetition 2")
        #expect(RepeatStats.outcome(attempts) == .crashed, "the worst failure")
        #expect(RepeatStats.outcome([Self.attempt(.passed, 1), Self.attempt(.skipped, 2)]) == .passed)
        #expect(RepeatStats([Attempt(outcome: .passed, duration: 1, unit: 1, agent: "a")]) == nil, "an ordinary run")

        let id = TestID(module: "M", suite: "A", name: "t"), other = TestID(module: "M", suite: "B", name: "u")
        let results = [TestResult(id: id, framework: .xctest, destination: "d", outcome: .crashed, attempts: attempts),
                       TestResult(id: other, framework: .xctest, destination: "d", outcome: .failed,
                                  attempts: [Self.attempt(.passed, 1), Self.attempt(.failed, 2, unit: 9)])]
        let first = try #require(RepeatReport.firstFailure(in: results))
        #expect(first.repetition == 2 && first.test == id, "lowest repetition, then test name")
        #expect(first.seed == 20 && first.agent == "a2" && first.outcome == .failed)
    }
}
