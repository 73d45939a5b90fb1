import Testing
@testable import FanoutCore

/// The report's lower bound comes from the tests alone, never from how Fanout grouped them.
@Suite(.timeLimit(.minutes(2))) struct MeasuredLowerBoundTests {
    func work(_ seconds: [Double], on destination: String = "local") -> [MeasuredLowerBound.Work] {
        seconds.map { .init(destination: destination, seconds: $0) }
    }

    /// The case from the field: one 26-test class of 21.9 s among small ones, on 8 slots. Its tests alone bound the
    /// run far below the class's 21.9 s.
    @Test func aLongClassOfShortTestsDoesNotBoundTheRun() {
        let longClass = Array(repeating: 21.9 / 26, count: 26)
        let small = Array(repeating: 0.5, count: 110)
        let bound = MeasuredLowerBound.perTest(work(longClass + small), slots: 8)
        #expect(abs(bound - (21.9 + 55) / 8) < 1e-9)
        #expect(bound < 21.9 / 2)
    }

    @Test func theLongestSingleTestBoundsWhenItIsLongerThanTheShare() {
        #expect(MeasuredLowerBound.perTest(work([9, 1, 1, 1]), slots: 4) == 9)
        #expect(MeasuredLowerBound.perTest(work([2, 2, 2, 2]), slots: 4) == 2)
        #expect(MeasuredLowerBound.perTest([], slots: 4) == 0)
    }

    /// Retries are work the run had to do; nonsense durations are no work.
    @Test func everyAttemptCountsAndNonsenseDoesNot() {
        #expect(MeasuredLowerBound.perTest(work([1, 1, 1, 1, .nan, .infinity, -3]), slots: 2) == 2)
    }

    /// Agents that serve destinations separately: each destination's tests can use only its own slots.
    @Test func aDestinationServedByFewSlotsBoundsOnItsOwn() {
        let debug = work(Array(repeating: 1, count: 12), on: "debug")
        let release = work(Array(repeating: 1, count: 4), on: "release")
        // 16 s over 8 slots is 2 s, but debug's 12 s can only use its 4 slots: 3 s.
        #expect(MeasuredLowerBound.perTest(debug + release, slots: 8, slotsServing: ["debug": 4, "release": 4]) == 3)
        // Served by every slot (one pool), the pooled bound holds.
        #expect(MeasuredLowerBound.perTest(debug + release, slots: 8) == 2)
        // A destination no usable slot serves adds no bound of its own (its tests did not run).
        #expect(MeasuredLowerBound.perTest(debug + release, slots: 8, slotsServing: ["debug": 8, "release": 0]) == 2)
    }
}
