import Testing
@testable import FanoutCore

@Suite(.timeLimit(.minutes(2))) struct SchedulerTests {
    @Test func lowerBoundIsWorkOverSlotsOrLongest() {
        #expect(Scheduler.lowerBound(work: 40, longest: 5, slots: 4) == 10)
        #expect(Scheduler.lowerBound(work: 40, longest: 15, slots: 4) == 15)
        #expect(Scheduler.lowerBound(work: 0, longest: 0, slots: 4) == 0)
    }

    @Test func longestEstimateGoesFirst() {
        var s = Scheduler(items: [item("M", "Small", 1), item("M", "Big", 9), item("M", "Mid", 4)],
                          options: SchedulerOptions(slots: 3, overhead: 0))
        #expect(s.next(now: 0)?.items.first?.suite.name == "Big")
        #expect(s.next(now: 0)?.items.first?.suite.name == "Mid")
        #expect(s.next(now: 0)?.items.first?.suite.name == "Small")
        #expect(s.next(now: 0) == nil)
        #expect(s.isEmpty)
    }

    /// A class measured alone holds its whole agent: it goes first (warm and first runs), the longest of them first,
    /// so the agent is idle when it is taken and no slot waits for a drain later.
    @Test func classesMeasuredAloneGoFirstLongestFirst() {
        var warm = [item("M", "Long", 30), item("M", "Bench", 2), item("M", "Mid", 10), item("M", "Perf", 5)]
        warm[1].exclusive = true
        warm[3].exclusive = true
        var s = Scheduler(items: warm, options: SchedulerOptions(slots: 1, overhead: 0))
        #expect((0..<4).compactMap { _ in s.next(now: 0)?.items.first?.suite.name } == ["Perf", "Bench", "Long", "Mid"])

        var guessed = [item("M", "Whole", 30, tests: 1), item("M", "Bench", 2, tests: 9), item("M", "Many", 40, tests: 20)]
        for i in guessed.indices { guessed[i].source = .noHistory(secondsPerTest: 1) }
        guessed[0].keepWhole = true
        guessed[1].exclusive = true
        var first = Scheduler(items: guessed, options: SchedulerOptions(slots: 1, overhead: 0))
        #expect(first.next(now: 0)?.items.first?.suite.name == "Bench", "before even work that cannot be cut")
    }

    @Test func batchesTakeTheLargestItemsThatFitAndLeaveTheSmallestForTheEnd() {
        // Two slots, one batch per slot: a batch aims at 7.8 / 2 = 3.9 s, and longest-first predicts 3.9 s. Behind the
        // 3 s head, 2 and 1.5 do not fit, 0.5 does, then 0.4 fills it. Filling from the small end instead would take
        // 0.05, 0.05, 0.3 and 0.4, and the slots would end on the coarser 0.5.
        let sizes = [("A", 3.0), ("B", 2.0), ("C", 1.5), ("D", 0.5), ("E", 0.4), ("F", 0.3), ("G", 0.05), ("H", 0.05)]
        var s = Scheduler(items: sizes.map { item("M", $0.0, $0.1) },
                          options: SchedulerOptions(slots: 2, overhead: 0, batchesPerSlot: 1))
        #expect(s.next(now: 0)?.items.map(\.suite.name) == ["A", "D", "E"])
    }

    @Test func theSmallestItemsAreKeptForTheLastRound() {
        // A batch behind A aims at 3.4 / 2 = 1.7 s: 0.2 pads it, but the two smallest items (one per slot) never pad
        // a batch: they run last, alone, and even out the slots' ends.
        let sizes = [("A", 1.0), ("B", 1.0), ("C", 1.0), ("D", 0.2), ("E", 0.1), ("F", 0.1)]
        var s = Scheduler(items: sizes.map { item("M", $0.0, $0.1) },
                          options: SchedulerOptions(slots: 2, overhead: 0, batchesPerSlot: 1))
        #expect(s.next(now: 0)?.items.map(\.suite.name) == ["A", "D"])
        #expect(s.next(now: 0)?.items.map(\.suite.name) == ["B"])
        #expect(s.next(now: 1)?.items.map(\.suite.name) == ["C"])
        #expect(s.next(now: 1.2)?.items.map(\.suite.name) == ["E"])
        #expect(s.next(now: 1.3)?.items.map(\.suite.name) == ["F"])
        #expect(s.isEmpty)
    }

    @Test func everyItemIsHandedOutExactlyOnce() {
        var rng = SeededRandom(7)
        let items = (0..<500).map { item("M", "C\($0)", Double.random(in: 0.01...3, using: &rng)) }
        var s = Scheduler(items: items, options: SchedulerOptions(slots: 8, overhead: 0.015))
        let (_, units) = simulate(&s)
        let handed = units.flatMap(\.items).map(\.suite)
        #expect(handed.count == 500)
        #expect(Set(handed).count == 500)
    }

    @Test func skewedSuiteEndsNearTheLowerBound() {
        // A few long classes and many short ones, like a real suite.
        var rng = SeededRandom(42)
        var items = [8.0, 6.5, 5, 4, 3].enumerated().map { item("M", "Long\($0.offset)", $0.element) }
        items += (0..<45).map { item("M", "Short\($0)", Double.random(in: 0.05...0.5, using: &rng)) }
        for slots in [2, 4, 8] {
            var s = Scheduler(items: items, options: SchedulerOptions(slots: slots, overhead: 0.015))
            let plan = s.plan()
            let (makespan, _) = simulate(&s)
            #expect(makespan <= plan.lowerBound * 1.10 + 0.1, "slots \(slots): \(makespan) vs LB \(plan.lowerBound)")
            #expect(abs(plan.predictedMakespan - makespan) < 1e-9, "the plan predicts what the virtual run does")
        }
    }

    @Test func uniformSuiteIsBalanced() {
        let items = (0..<64).map { item("M", "C\($0)", 1.0) }
        var s = Scheduler(items: items, options: SchedulerOptions(slots: 8, overhead: 0))
        let (makespan, _) = simulate(&s)
        #expect(makespan == 8)
    }

    @Test func smallClassesArePackedIntoBatchesThatShrink() {
        let items = (0..<200).map { item("M", "C\($0)", 0.05) }
        var s = Scheduler(items: items, options: SchedulerOptions(slots: 4, overhead: 0.02))
        let (_, units) = simulate(&s)
        #expect(units.count < 200 / 2, "batching must pay the start-up cost far less than once per class")
        let sizes = units.map(\.items.count)
        #expect(sizes.first! >= 2 * sizes.last!, "batches shrink as the queue drains: \(sizes)")
    }

    @Test func noBatchPushesItsSlotPastThePredictedEnd() {
        var rng = SeededRandom(3)
        let items = (0..<300).map { item("M", "C\($0)", Double.random(in: 0.01...1, using: &rng)) }
        var s = Scheduler(items: items, options: SchedulerOptions(slots: 4, overhead: 0.02))
        let predictedEnd = s.predictedEnd
        var free = Array(repeating: 0.0, count: 4)
        while let slot = free.indices.min(by: { free[$0] < free[$1] }), let unit = s.next(now: free[slot]) {
            let end = free[slot] + 0.02 + unit.estimate
            if unit.items.count > 1 { #expect(end <= predictedEnd + 1e-9) }
            free[slot] = end
        }
    }

    @Test func sameNamedClassesOfDifferentModulesNeverShareAUnit() {
        var items = (0..<20).map { item("A", "C\($0)", 0.01) }
        items += (0..<20).map { item("B", "C\($0)", 0.01) }
        var s = Scheduler(items: items, options: SchedulerOptions(slots: 1, overhead: 0.5))
        let (_, units) = simulate(&s)
        for unit in units {
            let names = unit.items.map(\.suite.name)
            #expect(Set(names).count == names.count, "unit \(unit.id) mixes same-named classes: \(unit.items.map(\.suite))")
        }
        #expect(units.flatMap(\.items).count == 40)
    }

    @Test func swiftTestingSuitesMayShareNamesAcrossModulesButNotFrameworks() {
        let a = item("A", "S", 1, framework: .swiftTesting)
        let b = item("B", "S", 1, framework: .swiftTesting)
        let x = item("C", "X", 1, framework: .xctest)
        #expect(Scheduler.canShareUnit(a, b))
        #expect(!Scheduler.canShareUnit(a, x))
        #expect(!Scheduler.canShareUnit(item("A", "S", 1), item("B", "S", 1)))
        #expect(!Scheduler.canShareUnit(item("A", "S", 1, destination: "d1"), item("A", "T", 1, destination: "d2")))
    }

    /// xcodebuild's parallel-clone lines name a test `Class.method()`, without its target: same-named classes of two
    /// targets never share an xcodebuild unit either.
    @Test func sameNamedClassesOfTwoTargetsNeverShareAnXcodebuildUnit() {
        #expect(!Scheduler.canShareUnit(item("AppTests", "S", 1, framework: .xcodebuild), item("AppUITests", "S", 1, framework: .xcodebuild)))
        #expect(Scheduler.canShareUnit(item("AppTests", "S", 1, framework: .xcodebuild), item("AppTests", "T", 1, framework: .xcodebuild)))
    }

    @Test func requeuedWorkIsHandedOutAgainLongestFirst() {
        var s = Scheduler(items: [item("M", "A", 5), item("M", "B", 1)], options: SchedulerOptions(slots: 2, overhead: 0))
        let first = s.next(now: 0)!
        #expect(first.items[0].suite.name == "A")
        var rest = first.items[0]
        rest.tests = ["t2"]
        rest.isWholeSuite = false
        rest.estimate = 3
        s.requeue([rest])
        #expect(s.pendingCount == 2)
        let next = s.next(now: 1)!
        #expect(next.items[0].suite.name == "A" && next.items[0].tests == ["t2"])
        #expect(s.next(now: 1)?.items[0].suite.name == "B")
        #expect(s.isEmpty)
    }

    @Test func acceptsRestrictsWhatASlotTakes() {
        var s = Scheduler(items: [item("M", "A", 5, destination: "linux"), item("M", "B", 1, destination: "mac")],
                          options: SchedulerOptions(slots: 2, overhead: 0))
        let unit = s.next(now: 0) { $0.destination == "mac" }
        #expect(unit?.destination == "mac")
        #expect(s.next(now: 0) { $0.destination == "mac" } == nil)
        #expect(s.next(now: 0)?.destination == "linux")
    }

    @Test func whenEstimatesAreWrongThePullQueueStillBalances() {
        // The estimates say all equal; in truth one in ten is 5× longer. A pull queue adapts, static shards cannot.
        let items = (0..<80).map { item("M", "C\($0)", 1) }
        var s = Scheduler(items: items, options: SchedulerOptions(slots: 8, overhead: 0))
        let (makespan, _) = simulate(&s) { $0.suite.name.hasSuffix("0") ? 5 : 1 }
        let work = 72.0 + 8 * 5
        #expect(makespan <= Scheduler.lowerBound(work: work, longest: 5, slots: 8) * 1.5)
    }

    @Test func measuredStartUpCostMakesBatchesLonger() {
        // xcodebuild-like start-up (2 s) versus a .xctest's (0.02 s): the same queue, far fewer invocations.
        let items = (0..<400).map { item("M", "C\($0)", 0.1) }
        var cheap = Scheduler(items: items, options: SchedulerOptions(slots: 4, overhead: 0.02))
        var costly = Scheduler(items: items, options: SchedulerOptions(slots: 4, overhead: 0.02))
        let a = cheap.next(now: 0)
        let b = costly.next(now: 0, overhead: 2)
        #expect((b?.items.count ?? 0) > (a?.items.count ?? 0), "\(a?.items.count ?? 0) vs \(b?.items.count ?? 0)")
        #expect((b?.estimate ?? 0) >= min(20 * 2, costly.predictedEnd - 2) - 0.1 - 1e-9, "as long as 20 start-ups, or the room left")
    }

    // MARK: - First runs (every estimate a guess from test counts)

    /// A class never timed: its estimate is its test count × 0.1 s, as the estimator guesses with no history.
    private func guessed(_ name: String, tests: Int, framework: Framework = .xctest, keepWhole: Bool = false) -> WorkItem {
        var w = WorkItem(suite: SuiteID(module: "M", name: name), framework: framework, destination: "local",
                         tests: (0..<tests).map { "t\($0)" }, isWholeSuite: true, estimate: 0.1 * Double(tests),
                         source: .noHistory(secondsPerTest: 0.1))
        w.keepWhole = keepWhole
        return w
    }

    @Test func aFirstRunStartsWhatCannotBeCutFirstAndLeavesClassesOfManyTestsForTheEnd() {
        let items = [guessed("Many", tests: 16), guessed("Two", tests: 2), guessed("Whole", tests: 12, keepWhole: true),
                     guessed("Eight", tests: 8), guessed("Swift", tests: 4, framework: .swiftTesting),
                     guessed("One", tests: 1)]
        var s = Scheduler(items: items, options: SchedulerOptions(slots: 1, overhead: 0))
        var order: [String] = []
        while let unit = s.next(now: 0) { order += unit.items.map(\.suite.name) }
        // Keep-whole and Swift Testing cannot be shared out later: longest first. Then fewest tests first.
        #expect(order == ["Whole", "Swift", "One", "Two", "Eight", "Many"])
    }

    @Test func oneTimedItemKeepsTheQueueLongestFirst() {
        var items = [guessed("Many", tests: 16), guessed("Two", tests: 2), guessed("Eight", tests: 8)]
        items[1].source = .history(samples: 1)
        var s = Scheduler(items: items, options: SchedulerOptions(slots: 1, overhead: 0))
        var order: [String] = []
        while let unit = s.next(now: 0) { order += unit.items.map(\.suite.name) }
        #expect(order == ["Many", "Eight", "Two"])
    }

    @Test func aFirstRunWhoseFewTestClassesHideLongTestsEndsNearTheBound() {
        // The estimates follow test counts; in truth two classes of 2 tests take 6 s each (a long test apiece, which no
        // idle slot could take over once it runs) and the 30 classes of 12 tests 1.5 s each. Longest-first by count
        // would start the 6 s classes last, near 5.6 s: LB + 6 s. Starting them first ends close to the bound.
        let items = (0..<30).map { guessed("Many\($0)", tests: 12) } + [guessed("LongA", tests: 2), guessed("LongB", tests: 2)]
        var s = Scheduler(items: items, options: SchedulerOptions(slots: 8, overhead: 0))
        let (makespan, units) = simulate(&s) { $0.tests.count == 2 ? 6 : 1.5 }
        let lb = Scheduler.lowerBound(work: 2 * 6 + 30 * 1.5, longest: 6, slots: 8)
        #expect(units.flatMap(\.items).count == 32)
        #expect(makespan <= 1.1 * lb, "\(makespan) against LB \(lb)")
    }

    @Test func aFirstRunBatchesAtMostItsShareOfTheQueuedItems() {
        // 60 classes on 8 slots: a batch would run guessed classes one after another however long they turn out to be,
        // so each runs alone. 3,000 classes still share processes: start-ups stay few.
        var few = Scheduler(items: (0..<60).map { guessed("C\($0)", tests: 2 + $0 % 15) },
                            options: SchedulerOptions(slots: 8, overhead: 0.015))
        let (_, fewUnits) = simulate(&few)
        #expect(fewUnits.count == 60)
        #expect(fewUnits.allSatisfy { $0.items.count == 1 })
        var many = Scheduler(items: (0..<3000).map { guessed("C\($0)", tests: 1 + $0 % 5) },
                             options: SchedulerOptions(slots: 8, overhead: 0.015))
        let (_, manyUnits) = simulate(&many)
        #expect(manyUnits.flatMap(\.items).count == 3000)
        #expect(manyUnits.count < 600, "\(manyUnits.count) processes for 3,000 classes")
        #expect(manyUnits.allSatisfy { $0.items.count <= 3000 / 32 + 1 })
    }

    /// Runs a first run on a virtual clock where every test takes `secondsPerTest` and a process costs `startUp`
    /// before its first test; with `learns`, each pull is told the pace once two classes have ended (as
    /// `RunningUnits.paces` does).
    private func firstRun(classes: Int, tests: Int, secondsPerTest: Double, startUp: Double, slots: Int = 8,
                          learns: Bool) -> (makespan: Double, units: [WorkUnit]) {
        var s = Scheduler(items: (0..<classes).map { guessed("C\($0)", tests: tests) },
                          options: SchedulerOptions(slots: slots, overhead: startUp))
        var free = Array(repeating: 0.0, count: slots)
        var ends: [Double] = []
        var units: [WorkUnit] = []
        while let slot = free.indices.min(by: { free[$0] < free[$1] }) {
            let now = free[slot]
            let known = ends.filter { $0 <= now }.count >= 2
            guard let unit = s.next(now: now, overhead: startUp, pace: learns && known ? ["local": secondsPerTest] : [:])
            else { break }
            units.append(unit)
            free[slot] = now + startUp + Double(unit.items.reduce(0) { $0 + $1.tests.count }) * secondsPerTest
            ends.append(free[slot])
        }
        return (free.max() ?? 0, units)
    }

    @Test func aFirstRunPacksTheClassesItsPaceCallsShortAgainstAStartUp() {
        // many-small: 60 classes of 50 tests of 6 ms, a 40 ms start-up. One class per process costs 60 start-ups.
        let counted = firstRun(classes: 60, tests: 50, secondsPerTest: 0.006, startUp: 0.04, learns: false)
        let paced = firstRun(classes: 60, tests: 50, secondsPerTest: 0.006, startUp: 0.04, learns: true)
        #expect(counted.units.count == 60)
        #expect(paced.units.count < 45, "\(paced.units.count) processes")
        #expect(paced.units.flatMap(\.items).count == 60)
        #expect(paced.units.allSatisfy { Double($0.items.reduce(0) { $0 + $1.tests.count }) * 0.006 <= 20 * 0.04 + 1e-9 },
                "no process is packed past 20 start-ups")
        #expect(paced.units.prefix(8).allSatisfy { $0.items.count == 1 }, "before any pace, one class each")
        // About 20 start-ups fewer over 8 slots: 0.1 s sooner.
        #expect(paced.makespan <= counted.makespan - 0.08, "\(paced.makespan) against \(counted.makespan)")
    }

    @Test func aFirstRunWhosePaceIsSlowKeepsAClassPerProcess() {
        // Classes of 50 tests at 0.1 s: 5 s each, far more than 20 start-ups: nothing to gain, so nothing is packed.
        let paced = firstRun(classes: 60, tests: 50, secondsPerTest: 0.1, startUp: 0.04, learns: true)
        #expect(paced.units.count == 60)
        #expect(paced.units.allSatisfy { $0.items.count == 1 })
    }

    @Test func aPaceDoesNotChangeARunWithHistory() {
        let items = (0..<60).map { item("M", "C\($0)", 0.3, tests: 50) }
        var plain = Scheduler(items: items, options: SchedulerOptions(slots: 8, overhead: 0.04))
        var paced = plain
        while let a = plain.next(now: 0, overhead: 0.04) {
            let b = paced.next(now: 0, overhead: 0.04, pace: ["local": 0.0001])
            #expect(a.items == b?.items)
        }
        #expect(paced.next(now: 0) == nil)
    }
}


/// `feedback_first`: the likely failures start before everything else, longest first among themselves, and the
/// prediction follows the order the queue really has.
@Suite struct SchedulerRemovalTests {
    @Test func removingADestinationsItemsLeavesTheRestAsTheyWere() {
        var s = Scheduler(items: [item("M", "A", 5), item("M", "B", 4, destination: "gpu"), item("M", "C", 3),
                                  item("M", "D", 2, destination: "gpu")], options: SchedulerOptions(slots: 1))
        s.requeue([item("M", "E", 1, destination: "gpu")])
        #expect(s.pendingCount == 5 && s.remainingWork == 15)
        let removed = s.remove { $0.destination == "gpu" }
        #expect(removed.map(\.suite.name).sorted() == ["B", "D", "E"])
        #expect(s.pendingCount == 2 && s.remainingWork == 8)
        #expect(s.queuedItems.map(\.suite.name).sorted() == ["A", "C"])
        var handed: [String] = []
        while let unit = s.next(now: 0, overhead: nil, accepts: { _ in true }) { handed += unit.items.map(\.suite.name) }
        #expect(handed.sorted() == ["A", "C"] && s.isEmpty)
        #expect(s.remove { _ in true }.isEmpty)
    }
}

@Suite struct FeedbackFirstTests {
    @Test func itemsMarkedFirstLeadTheQueue() {
        var items = (0..<6).map { item("M", "C\($0)", Double(10 - $0), tests: 2) }
        items[4].startsFirst = true
        items[5].startsFirst = true
        var scheduler = Scheduler(items: items, options: SchedulerOptions(slots: 2, overhead: 0))
        let first = scheduler.next(now: 0)?.items.map(\.suite.name)
        let second = scheduler.next(now: 0)?.items.map(\.suite.name)
        #expect(first?.first == "C4")
        #expect(second?.first == "C5")
        #expect(Scheduler.listMakespan([1, 1, 4], slots: 2, overhead: 0) == 5, "order kept: a long item last waits")
        #expect(Scheduler.longestFirstMakespan([1, 1, 4], slots: 2, overhead: 0) == 4)
    }
}
