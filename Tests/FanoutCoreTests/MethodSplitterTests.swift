import Testing
@testable import FanoutCore

@Suite(.timeLimit(.minutes(2))) struct MethodSplitterTests {
    /// One dominant class (20 methods of 1 s) and 20 small classes of 0.5 s, on 4 slots: share = 7.5 s.
    func dominantSuite() -> [WorkItem] {
        var items = [item("M", "Big", 20, tests: 20)]
        items += (0..<20).map { item("M", "Small\($0)", 0.5, tests: 2) }
        return items
    }

    @Test func oversizedClassIsSplitIntoBalancedGroups() {
        let items = MethodSplitter(slots: 4).split(dominantSuite(), history: .empty("local"))
        let big = items.filter { $0.suite.name == "Big" }
        #expect(big.count > 1)
        #expect(Set(big.flatMap(\.tests)) == Set((0..<20).map { "t\($0)" }), "every method in exactly one group")
        #expect(big.flatMap(\.tests).count == 20)
        let sizes = big.map(\.estimate)
        #expect((sizes.max() ?? 0) - (sizes.min() ?? 0) <= 1.0 + 1e-9, "balanced within one method: \(sizes)")
        #expect(big.allSatisfy { !$0.isWholeSuite && $0.estimate <= 7.5 / 2 + 1 })
        #expect(items.filter { $0.suite.name != "Big" }.count == 20)
        #expect(items.filter { $0.suite.name != "Big" }.allSatisfy { $0.isWholeSuite }, "small classes stay whole")
        // Each group keeps the binary's order of its tests.
        for g in big {
            let order = g.tests.map { Int($0.dropFirst()) ?? -1 }
            #expect(order == order.sorted())
        }
    }

    /// First run: a 26-test class with no history of its own starts as a few method groups (about 8 tests each),
    /// not one process; classes of fewer tests, keep-whole classes and Swift Testing suites stay whole.
    @Test func aLargeClassNeverTimedStartsAsAFewGroups() {
        func guess(_ name: String, tests: Int, framework: Framework = .xctest) -> WorkItem {
            var i = item("M", name, Double(tests) * 0.1, tests: tests, framework: framework)
            i.source = .noHistory(secondsPerTest: 0.1)
            return i
        }
        var suite = guess("Suite", tests: 40, framework: .swiftTesting)
        var small = guess("Small", tests: 15)
        (suite.estimate, small.estimate) = (0.4, 0.9) // under the size the other rules cut at: only the cold rule could
        let items = [guess("Long", tests: 26), small, guess("Kept", tests: 40), suite]
        let out = MethodSplitter(slots: 8).split(items, history: .empty("local"), keepWhole: { $0.name == "Kept" })
        let long = out.filter { $0.suite.name == "Long" }
        #expect(long.count == 4)
        #expect(long.flatMap(\.tests).sorted() == (0..<26).map { "t\($0)" }.sorted(), "every method once")
        #expect(long.allSatisfy { !$0.isWholeSuite && $0.tests.count >= 6 && $0.tests.count <= 7 })
        for name in ["Small", "Kept", "Suite"] {
            #expect(out.filter { $0.suite.name == name }.count == 1, "\(name) stays whole")
        }
        // Never more groups than slots.
        #expect(MethodSplitter(slots: 2).split([guess("Huge", tests: 400)], history: .empty("local")).count == 2)
        // Many equal classes (3,000 tiny tests in 60 classes): each is a small part of a slot's share, none is cut.
        let equal = (0..<60).map { guess("Small\($0)", tests: 50) }
        #expect(MethodSplitter(slots: 8).split(equal, history: .empty("local")).count == 60)
    }

    @Test func methodHistoryBalancesUnevenMethods() {
        var cls = item("M", "Uneven", 10, tests: 4)
        cls.tests = ["a", "b", "c", "d"]
        let history = TimingHistory(destination: "local", tests: [
            TestID(module: "M", suite: "Uneven", name: "a"): [6],
            TestID(module: "M", suite: "Uneven", name: "b"): [2],
            TestID(module: "M", suite: "Uneven", name: "c"): [1],
        ])
        // d was never seen: it gets what is left of the class estimate (10 − 9 = 1).
        let (estimates, known) = MethodSplitter(slots: 2).methodEstimates(cls, history: history)
        #expect(estimates == [6, 2, 1, 1])
        #expect(known == 3)
        let groups = MethodSplitter(slots: 2).split([cls, item("M", "Other", 2)], history: history)
            .filter { $0.suite.name == "Uneven" }
        #expect(groups.count == 2)
        #expect(groups.contains { $0.tests == ["a"] && $0.estimate == 6 }, "the 6 s method alone: \(groups.map(\.tests))")
        #expect(groups.allSatisfy { $0.source == .methods(known: 3, of: 4) })
    }

    /// A class cut in two by name (its measuring tests and the rest), each part estimated from its methods and in
    /// the binary's order, every other mark kept; an exclusive part is never split further.
    @Test func separatingCutsAClassInTwoByTestNames() throws {
        var cls = item("M", "Uneven", 10, tests: 4)
        cls.tests = ["a", "b", "c", "d"]
        cls.keepWhole = true
        let history = TimingHistory(destination: "local", tests: [
            TestID(module: "M", suite: "Uneven", name: "a"): [6],
            TestID(module: "M", suite: "Uneven", name: "c"): [1],
        ])
        let splitter = MethodSplitter(slots: 2)
        let (picked, rest) = try #require(splitter.separating(["c", "a"], from: cls, history: history))
        #expect(picked.tests == ["a", "c"] && picked.estimate == 7 && !picked.isWholeSuite && picked.keepWhole)
        #expect(rest.tests == ["b", "d"] && rest.estimate == 3 && rest.source == .methods(known: 2, of: 4))
        #expect(splitter.separating(["x"], from: cls, history: history) == nil, "nothing picked")
        #expect(splitter.separating(["a", "b", "c", "d"], from: cls, history: history) == nil, "nothing left")
        var alone = item("M", "Alone", 40, tests: 8)
        alone.exclusive = true
        #expect(splitter.split([alone, item("M", "Other", 1)], history: .empty("local")).filter { $0.suite.name == "Alone" }.count == 1)
    }

    @Test func keepWholePatternIsHonoured() {
        let items = MethodSplitter(slots: 4).split(dominantSuite(), history: .empty("local")) { $0.name == "Big" }
        #expect(items.filter { $0.suite.name == "Big" }.count == 1)
        #expect(items.first { $0.suite.name == "Big" }?.isWholeSuite == true)
    }

    @Test func shortClassesAreNotWorthSplitting() {
        // Alone on 4 slots, a 0.5 s class exceeds its share (0.125 s), but splitting it would save less than a second.
        let items = [item("M", "Short", 0.5, tests: 5)]
        #expect(MethodSplitter(slots: 4).split(items, history: .empty("local")) == items)
    }

    @Test func nothingIsSplitWhenEveryClassFitsItsShare() {
        // 12 classes of 1 s on 4 slots: three rounds, every slot ends together.
        let items = (0..<12).map { item("M", "C\($0)", 1, tests: 5) }
        #expect(MethodSplitter(slots: 4).split(items, history: .empty("local")) == items)
    }

    @Test func splittingBringsTheMakespanNearTheMethodLevelBound() {
        let split = MethodSplitter(slots: 4, overhead: 0.02).split(dominantSuite(), history: .empty("local"))
        var s = Scheduler(items: split, options: SchedulerOptions(slots: 4, overhead: 0.02))
        let (makespan, _) = simulate(&s)
        let methodLB = Scheduler.lowerBound(work: 30, longest: 1, slots: 4)
        #expect(makespan <= methodLB * 1.15, "\(makespan) vs method-level LB \(methodLB)")
        var whole = Scheduler(items: dominantSuite(), options: SchedulerOptions(slots: 4, overhead: 0.02))
        let (unsplit, _) = simulate(&whole)
        #expect(unsplit >= 20, "without the split the big class bounds the run")
    }

    /// 60 classes of 0.45 s (50 methods each) on 8 slots: 7.5 classes a slot, so whole classes leave half the slots
    /// one class behind the others.
    func evenSuite() -> [WorkItem] { (0..<60).map { item("M", "C\($0)", 0.45, tests: 50) } }

    @Test func anUnevenLastRoundIsCutIntoPieces() {
        let splitter = MethodSplitter(slots: 8, overhead: 0.02)
        let split = splitter.split(evenSuite(), history: .empty("local"))
        let cut = Set(split.filter { !$0.isWholeSuite }.map(\.suite))
        #expect(cut.count == 8, "the 8 classes that run last are cut, the others stay whole: \(cut.count)")
        #expect(split.filter(\.isWholeSuite).count == 52)
        for suite in cut {
            let pieces = split.filter { $0.suite == suite }
            // The ideal end is (27 s + 60 start-ups) / 8 = 3.5 s; pieces aim at 1% of it, but at least 5 start-ups.
            #expect(pieces.count == 4, "0.45 s in pieces of about 0.1 s: \(pieces.map(\.estimate))")
            #expect(pieces.flatMap(\.tests).sorted() == (0..<50).map { "t\($0)" }.sorted(), "every method once")
        }
        var balanced = Scheduler(items: split, options: SchedulerOptions(slots: 8, overhead: 0.02))
        let (makespan, _) = simulate(&balanced)
        var whole = Scheduler(items: evenSuite(), options: SchedulerOptions(slots: 8, overhead: 0.02))
        let (unbalanced, _) = simulate(&whole)
        let ideal = (60 * 0.45 + Double(split.count) * 0.02) / 8
        #expect(makespan <= ideal * 1.03, "\(makespan) against the ideal \(ideal)")
        #expect(unbalanced >= 8 * 0.47 - 1e-9, "whole classes: half the slots run 8 of them (\(unbalanced))")
    }

    @Test func theTailCutHonoursKeepWhole() {
        let split = MethodSplitter(slots: 8, overhead: 0.02).split(evenSuite(), history: .empty("local")) { _ in true }
        #expect(split == evenSuite())
    }

    @Test func aBalancedRunKeepsItsClassesWhole() {
        // 16 classes of 1 s on 8 slots: two rounds, nothing to gain.
        let items = (0..<16).map { item("M", "C\($0)", 1, tests: 50) }
        #expect(MethodSplitter(slots: 8, overhead: 0.02).split(items, history: .empty("local")) == items)
    }
}
