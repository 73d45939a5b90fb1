import Testing
@testable import FanoutCore

/// The order data Fanout keeps (positions, concurrency), `--shuffle`'s deal, and the `--repeat` order hunt.
@Suite(.timeLimit(.minutes(1))) struct OrderDataTests {
    @Test func collectorNumbersTestsInTheOrderTheyStartedAndSeesOverlap() {
        let a = item("M", "A", 1, tests: 2), b = item("M", "B", 1, tests: 1)
        var sequential = UnitCollector(unit: WorkUnit(id: 1, items: [a, b]), agent: "x")
        for id in [b.testIDs[0], a.testIDs[1], a.testIDs[0]] {
            sequential.consume(.started(id))
            sequential.consume(.ended(id, .passed, duration: 0.1, reason: nil))
        }
        let done = sequential.finish(.exited(0), diagnostics: "")
        #expect(done.attempts[b.testIDs[0]]?.position == 1)
        #expect(done.attempts[a.testIDs[1]]?.position == 2)
        #expect(done.attempts[a.testIDs[0]]?.position == 3)
        #expect(!done.concurrent)

        var parallel = UnitCollector(unit: WorkUnit(id: 2, items: [a]), agent: "x")
        parallel.consume(.started(a.testIDs[0]))
        parallel.consume(.started(a.testIDs[1]))
        parallel.consume(.ended(a.testIDs[1], .passed, duration: 0.1, reason: nil))
        parallel.consume(.ended(a.testIDs[0], .passed, duration: 0.1, reason: nil))
        #expect(parallel.finish(.exited(0), diagnostics: "").concurrent)
    }

    @Test func oneSeedDealsTheSameProcessesAndTheSchedulerKeepsEachTogether() {
        let items = (0..<12).map { item("M", "C\($0)", Double($0 + 1), tests: 2) }
        let once = ShuffleDeal.deal(items, seed: 42, processes: 3)
        #expect(once == ShuffleDeal.deal(items.reversed(), seed: 42, processes: 3), "the input order does not matter")
        #expect(once.map(\.suite) != ShuffleDeal.deal(items, seed: 43, processes: 3).map(\.suite))
        #expect(Set(once.compactMap(\.batch)) == [0, 1, 2])
        #expect(once.allSatisfy { $0.keepWhole && !$0.canBeCut }, "stealing would change what shares a process")
        var scheduler = Scheduler(items: once, options: SchedulerOptions(slots: 3))
        var units: [WorkUnit] = []
        while let unit = scheduler.next(now: 0) { units.append(unit) }
        #expect(units.count == 3)
        for unit in units {
            #expect(Set(unit.items.compactMap(\.batch)).count == 1, "a unit is one dealt process")
        }
        #expect(units.flatMap(\.items).count == 12)
    }

    @Test func theHuntNamesTheTestAlwaysBeforeAFailureAndNeverBeforeAPass() {
        let victim = TestID(module: "M", suite: "V", name: "testV")
        let polluter = TestID(module: "M", suite: "P", name: "testP")
        let bystander = TestID(module: "M", suite: "B", name: "testB")
        func attempt(_ outcome: Outcome, unit: Int, position: Int, repetition: Int) -> Attempt {
            var a = Attempt(outcome: outcome, duration: 0.1, unit: unit, agent: "x")
            a.position = position
            a.repetition = repetition
            return a
        }
        // Repetitions 1-2: the polluter ran before the victim, which failed; 3-4: it did not, and the victim passed.
        // The bystander ran before the victim in a failing and a passing repetition.
        var v = TestResult(id: victim, framework: .xctest, destination: "d", outcome: .failed, attempts: [
            attempt(.failed, unit: 1, position: 3, repetition: 1), attempt(.failed, unit: 2, position: 2, repetition: 2),
            attempt(.passed, unit: 3, position: 2, repetition: 3), attempt(.passed, unit: 4, position: 1, repetition: 4),
        ])
        v.repeats = RepeatStats(v.attempts)
        var p = TestResult(id: polluter, framework: .xctest, destination: "d", outcome: .passed, attempts: [
            attempt(.passed, unit: 1, position: 2, repetition: 1), attempt(.passed, unit: 2, position: 1, repetition: 2),
            attempt(.passed, unit: 4, position: 2, repetition: 4),
        ])
        p.repeats = RepeatStats(p.attempts)
        var b = TestResult(id: bystander, framework: .xctest, destination: "d", outcome: .passed, attempts: [
            attempt(.passed, unit: 1, position: 1, repetition: 1), attempt(.passed, unit: 3, position: 1, repetition: 3),
        ])
        b.repeats = RepeatStats(b.attempts)
        let found = OrderHunt.analyse([v, p, b])
        #expect(found[0].orderDependence?.polluters == [polluter])
        #expect(found[0].orderDependence?.checkUnit == nil)
        #expect(found[1].orderDependence == nil && found[2].orderDependence == nil)
        // One failure is not evidence: every test before it would look guilty.
        var once = v
        once.attempts = Array(v.attempts.dropFirst())
        #expect(OrderHunt.analyse([once, p, b])[0].orderDependence == nil)
    }
}
