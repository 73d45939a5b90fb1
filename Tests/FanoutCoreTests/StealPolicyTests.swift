import Testing
@testable import FanoutCore

/// Work stealing at test boundaries: which unit, which tail, cut how — on a virtual clock.
@Suite(.timeLimit(.minutes(1))) struct StealPolicyTests {
    func pending(_ cls: String, _ seconds: [Double], from first: Int = 0) -> [StealPolicy.Pending] {
        seconds.enumerated().map { .init(TestID(module: "M", suite: cls, name: "t\(first + $0.offset)"), $0.element) }
    }

    /// The first run from the field: one 26-test class of 21.9 s still running its first test, 7 slots idle.
    /// Cut into 8 contiguous parts, its work ends near 21.9 / 8 instead of 21.9 s.
    @Test func aLongClassIsCutAcrossEveryIdleSlot() throws {
        let each = 21.9 / 26
        let c = StealPolicy.Candidate(unit: 1, unstarted: pending("Long", Array(repeating: each, count: 25), from: 1),
                                      currentRemaining: each)
        let s = try #require(StealPolicy(overhead: 0.02).steal(from: [c], idleSlots: 7))
        #expect(s.unit == 1)
        #expect(s.parts.count == 6, "4 tests a part is the best whole tests allow: 6 parts suffice")
        #expect(s.parts.allSatisfy { !$0.isEmpty })
        // Every unstarted test exactly once, in order: the head, then each part.
        #expect(s.kept + s.stolen == c.unstarted.map(\.test))
        #expect(abs(s.before - 21.9) < 1e-9)
        #expect(s.after <= 4 * each + 0.02 + 1e-9, "about 21.9 / 8 = 2.7 s, whole tests only: \(s.after)")
        #expect(s.gain > 17)
    }

    /// The original keeps what it reaches before the first stolen test; the parts balance with their start-ups.
    @Test func theHeadStaysWithTheOriginalAndPartsAreBalanced() throws {
        let c = StealPolicy.Candidate(unit: 4, unstarted: pending("C", [1, 1, 1, 1, 1, 1]), currentRemaining: 0)
        let s = try #require(StealPolicy(overhead: 0.1).steal(from: [c], idleSlots: 2))
        #expect(s.kept.count == 2 && s.parts.map(\.count) == [2, 2])
        #expect(abs(s.after - 2.1) < 1e-9, "each new part pays one start-up")
    }

    /// A long test running now with short ones behind it: the short ones move, the original only finishes its test.
    @Test func aLongCurrentTestGivesAwayItsWholeTail() throws {
        let c = StealPolicy.Candidate(unit: 2, unstarted: pending("C", [0.5, 0.5, 0.5]), currentRemaining: 10)
        let s = try #require(StealPolicy().steal(from: [c], idleSlots: 1))
        #expect(s.kept.isEmpty && s.parts.count == 1 && s.parts[0].count == 3)
        #expect(abs(s.after - 10) < 1e-9)
    }

    /// Not worth a process: a small tail, or a gain within two start-ups.
    @Test func smallGainsAreLeftAlone() {
        let small = StealPolicy.Candidate(unit: 1, unstarted: pending("C", [0.05, 0.05]), currentRemaining: 0.05)
        #expect(StealPolicy().steal(from: [small], idleSlots: 3) == nil)
        let costly = StealPolicy.Candidate(unit: 1, unstarted: pending("C", [1, 1]), currentRemaining: 0)
        #expect(StealPolicy(overhead: 2).steal(from: [costly], idleSlots: 1) == nil)
        #expect(StealPolicy().steal(from: [costly], idleSlots: 0) == nil, "no idle slot, no steal")
        let done = StealPolicy.Candidate(unit: 1, unstarted: [], currentRemaining: 30)
        #expect(StealPolicy().steal(from: [done], idleSlots: 3) == nil, "nothing unstarted: a straggler's case, not ours")
    }

    /// Keep-whole, exclusive and Swift Testing units are never cut; among the rest the biggest gain wins.
    @Test func onlyStealableUnitsAndTheBestGain() throws {
        let keep = StealPolicy.Candidate(unit: 1, unstarted: pending("K", Array(repeating: 2, count: 10)),
                                         currentRemaining: 0, stealable: false)
        let small = StealPolicy.Candidate(unit: 2, unstarted: pending("S", [1, 1, 1, 1]), currentRemaining: 0)
        let big = StealPolicy.Candidate(unit: 3, unstarted: pending("B", [3, 3, 3, 3]), currentRemaining: 0)
        let s = try #require(StealPolicy().steal(from: [keep, small, big], idleSlots: 2))
        #expect(s.unit == 3)
        #expect(StealPolicy().steal(from: [keep], idleSlots: 4) == nil)
    }

    /// Never more parts than unstarted tests, even with many idle slots; a huge unit is cut in time.
    @Test func partsNeverOutnumberTestsAndThousandsAreCheap() throws {
        let two = StealPolicy.Candidate(unit: 1, unstarted: pending("C", [2, 2]), currentRemaining: 2)
        let s = try #require(StealPolicy().steal(from: [two], idleSlots: 50))
        #expect(s.parts.count == 2 && s.kept.isEmpty)
        let many = StealPolicy.Candidate(unit: 9, unstarted: pending("M", Array(repeating: 0.01, count: 20_000)),
                                         currentRemaining: 0)
        let cut = try #require(StealPolicy().steal(from: [many], idleSlots: 7))
        #expect(cut.kept.count + cut.stolen.count == 20_000)
        #expect(Set(cut.stolen).count == cut.stolen.count)
        #expect(cut.after < 200 / 8 + 0.1)
    }
}

/// `fanout plan` predicts work stealing on the virtual clock, as the run does it.
@Suite(.timeLimit(.minutes(1))) struct PlannedStealingTests {
    @Test func idleSlotsAtTheEndTakeOverTheTailOfALongUnit() {
        var long = item("M", "Long", 20, tests: 20)
        long.source = .noHistory(secondsPerTest: 1)
        let items = [long] + (0..<6).map { item("M", "Small\($0)", 1, tests: 2) }
        let scheduler = Scheduler(items: items, options: SchedulerOptions(slots: 4, overhead: 0.02))
        let plain = scheduler.plan()
        let stealing = scheduler.plan(stealing: StealPolicy(overhead: 0.02))
        #expect(!plain.units.isEmpty && plain.units.allSatisfy { $0.takenFrom == nil })
        let thieves = stealing.units.filter { $0.takenFrom != nil }
        #expect(!thieves.isEmpty)
        #expect(stealing.predictedMakespan < plain.predictedMakespan * 0.5, "\(stealing.predictedMakespan) vs \(plain.predictedMakespan)")
        #expect(stealing.predictedMakespan >= 26.0 / 4 - 1e-9, "never below work / slots")
        // The original ends after the head it keeps; every planned test is still planned (its unit lists it).
        let original = stealing.units.first { $0.unit.id == thieves[0].takenFrom }
        #expect(original != nil && original!.end < 20)
        #expect(thieves.allSatisfy { $0.unit.items.allSatisfy { $0.suite.name == "Long" && !$0.isWholeSuite } })
        // Every test planned exactly once over all units, the originals keeping only what they did not hand over.
        let planned = stealing.units.flatMap(\.unit.testIDs)
        #expect(planned.count == 32 && Set(planned) == Set(items.flatMap(\.testIDs)))
    }

    @Test func keepWholeUnitsAreNotCutInThePlanEither() {
        var long = item("M", "Long", 20, tests: 20)
        long.keepWhole = true
        let plan = Scheduler(items: [long], options: SchedulerOptions(slots: 4)).plan(stealing: StealPolicy())
        #expect(plan.units.count == 1 && plan.units[0].takenFrom == nil)
        #expect(abs(plan.predictedMakespan - 20.02) < 1e-9)
    }
}
