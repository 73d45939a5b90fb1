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
        /// Repetition r (unit r): the tests before the victim, in order, and whether it failed.
        func results(_ reps: [(before: [TestID], failed: Bool)]) -> [TestResult] {
            var attempts: [TestID: [Attempt]] = [:]
            for (i, rep) in reps.enumerated() {
                for (p, id) in (rep.before + [victim]).enumerated() {
                    var a = Attempt(outcome: id == victim && rep.failed ? .failed : .passed, duration: 0.1, unit: i + 1, agent: "x")
                    a.position = p + 1
                    a.repetition = i + 1
                    attempts[id, default: []].append(a)
                }
            }
            return attempts.sorted { $0.key < $1.key }.map { id, tries in
                var r = TestResult(id: id, framework: .xctest, destination: "d", outcome: Verdict.test(tries), attempts: tries)
                r.repeats = RepeatStats(tries)
                return r
            }
        }
        // 12 repetitions: the victim fails in every one the polluter preceded it, passes in every other; the
        // bystander preceded it in some of each.
        let twelve = (0..<12).map { r -> (before: [TestID], failed: Bool) in
            let before = (r % 2 == 0 ? [polluter] : []) + (r % 3 == 0 ? [bystander] : [])
            return (before, r % 2 == 0)
        }
        let found = OrderHunt.analyse(results(twelve))
        let v = found.first { $0.id == victim }
        #expect(v?.orderDependence?.polluters == [polluter])
        #expect(v?.orderDependence?.checkUnit == nil)
        #expect(found.filter { $0.id != victim }.allSatisfy { $0.orderDependence == nil })
        // Two failures and two passes could be chance: nobody is named.
        let few = OrderHunt.analyse(results(Array(twelve.prefix(4))))
        #expect(few.allSatisfy { $0.orderDependence == nil })
        #expect(!OrderHunt.isSignificant(failing: 2, passing: 2, candidates: 100))
        #expect(OrderHunt.isSignificant(failing: 10, passing: 10, candidates: 100))
    }
}
