import Testing
@testable import FanoutCore

@Suite(.timeLimit(.minutes(2))) struct EstimatorTests {
    let suite = TestSuite(id: SuiteID(module: "M", name: "C"), framework: .xctest, tests: ["a", "b", "c", "d"])

    @Test func emptyHistoryUsesTestCountTimesNominal() {
        let (e, source) = Estimator().estimate(suite, history: .empty("local"))
        #expect(abs(e - 0.4) < 1e-9)
        #expect(source == .noHistory(secondsPerTest: 0.1))
    }

    @Test func partialHistoryUsesMeanSecondsPerTestOfTheDestination() {
        let history = TimingHistory(destination: "local", secondsPerTest: 0.25)
        let (e, source) = Estimator().estimate(suite, history: history)
        #expect(abs(e - 1.0) < 1e-9)
        #expect(source == .testCount(secondsPerTest: 0.25))
    }

    @Test func fullHistoryUsesTheRollingPercentile() {
        let samples = [1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10].map { ClassSample(duration: $0, testCount: 4) }
        let history = TimingHistory(destination: "local", classes: [suite.id: samples], secondsPerTest: 0.01)
        let (e, source) = Estimator(percentile: 0.8).estimate(suite, history: history)
        #expect(abs(e - 8.2) < 1e-9) // type-7 percentile of 1…10 at 0.8
        #expect(source == .history(samples: 10))
    }

    @Test func onlyTheNewestWindowCounts() {
        // Newest first: the last three runs were slow, the older ones fast.
        let samples = [10.0, 10, 10, 1, 1, 1, 1, 1].map { ClassSample(duration: $0, testCount: 4) }
        let history = TimingHistory(destination: "local", classes: [suite.id: samples])
        let (e, source) = Estimator(percentile: 0.5, window: 3).estimate(suite, history: history)
        #expect(e == 10)
        #expect(source == .history(samples: 3))
    }

    @Test func samplesScaleToTodaysTestCount() {
        let history = TimingHistory(destination: "local", classes: [suite.id: [ClassSample(duration: 2, testCount: 2)]])
        let (e, _) = Estimator().estimate(suite, history: history)
        #expect(e == 4)
    }

    @Test func neverZero() {
        let history = TimingHistory(destination: "local", classes: [suite.id: [ClassSample(duration: 0, testCount: 4)]])
        #expect(Estimator().estimate(suite, history: history).0 > 0)
    }

    @Test func percentileEdges() {
        #expect(Estimator.percentile([], 0.8) == 0)
        #expect(Estimator.percentile([3], 0.8) == 3)
        #expect(Estimator.percentile([1, 2], 1) == 2)
        #expect(Estimator.percentile([1, 2], 0) == 1)
        #expect(Estimator.percentile([2, 1], 0.5) == 1.5)
    }

    /// The one median (the benchmarks' figures too): the middle value, the mean of the middle two for an even count.
    @Test func theMedianIsTheMiddleValue() {
        #expect(Statistics.median([]) == nil)
        #expect(Statistics.median([3.52, 3.44, 3.48]) == 3.48)
        #expect(Statistics.median([4, 1, 3, 2]) == 2.5)
        #expect(Statistics.median([7]) == 7)
    }
}

// MARK: - Estimates from per-test history

/// Classes that never ran whole (killed, split, stolen from) learn from their tests; a test killed at its limit
/// counts at least the time it had run.
extension EstimatorTests {
    func id(_ name: String) -> TestID { TestID(suite: suite.id, name: name) }

    @Test func aClassWithoutWholeRunsIsTheSumOfItsTests() {
        // a: p80 of 1…5 = 4.2; b: passed at 2 but killed later at 60 (at least 60); c: only killed, at 30;
        // d: never seen, at the destination's 0.5 s per test.
        let history = TimingHistory(destination: "local",
                                    tests: [id("a"): [1, 2, 3, 4, 5], id("b"): [2]],
                                    censored: [id("b"): 60, id("c"): 30], secondsPerTest: 0.5)
        let (e, source) = Estimator(percentile: 0.8).estimate(suite, history: history)
        #expect(abs(e - (4.2 + 60 + 30 + 0.5)) < 1e-9)
        #expect(source == .tests(known: 3, of: 4, censored: 2))
        #expect(source.description == "test history (3/4, 2 timed out)")
        #expect(!source.isGuess)
    }

    @Test func unseenTestsTakeTheNominalTimeWithoutDestinationHistory() {
        let history = TimingHistory(destination: "local", tests: [id("a"): [2]])
        let (e, source) = Estimator(nominalSecondsPerTest: 0.1).estimate(suite, history: history)
        #expect(abs(e - 2.3) < 1e-9)
        #expect(source == .tests(known: 1, of: 4, censored: 0))
        #expect(source.description == "test history (1/4)")
    }

    @Test func onlyTheTestsAskedForCount() {
        let history = TimingHistory(destination: "local", tests: [id("a"): [2], id("b"): [3]], censored: [id("c"): 60])
        let (e, source) = Estimator().estimate(suite, tests: ["a", "b"], history: history)
        #expect(e == 5)
        #expect(source == .tests(known: 2, of: 2, censored: 0))
    }

    @Test func aTestKilledPastTheClassEstimateRaisesTheClassToItsTests() {
        // The class ran whole in 10 s before; since then one test was killed at 60 s.
        let history = TimingHistory(destination: "local", classes: [suite.id: [ClassSample(duration: 10, testCount: 4)]],
                                    tests: [id("a"): [2], id("b"): [3], id("c"): [4], id("d"): [1]],
                                    censored: [id("d"): 60])
        let (e, source) = Estimator().estimate(suite, history: history)
        #expect(e == 2 + 3 + 4 + 60)
        #expect(source == .tests(known: 4, of: 4, censored: 1))
    }

    @Test func aTimeOutShorterThanTheClassEstimateLeavesTheClassHistory() {
        let history = TimingHistory(destination: "local", classes: [suite.id: [ClassSample(duration: 10, testCount: 4)]],
                                    tests: [id("a"): [2], id("b"): [3]], censored: [id("c"): 6])
        let (e, source) = Estimator().estimate(suite, history: history)
        #expect(e == 10)
        #expect(source == .history(samples: 1))
    }

    @Test func ownTestHistoryWinsOverBorrowingFromAnotherDestination() {
        let other = TimingHistory(destination: "debug", classes: [suite.id: [ClassSample(duration: 100, testCount: 4)]])
        let here = TimingHistory(destination: "release", tests: [id("a"): [1]], secondsPerTest: 1)
        let (e, source) = Estimator().estimate(suite, history: here, others: [other])
        #expect(e == 4)
        #expect(source == .tests(known: 1, of: 4, censored: 0))
    }

    @Test func typicalAndCensoredDurationsOfOneTest() {
        let history = TimingHistory(destination: "local", tests: [id("a"): [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                                                            14, 15, 16, 17, 18, 19, 20, 21]],
                                    censored: [id("a"): 60, id("b"): 0])
        #expect(history.typicalDuration(of: id("a"), percentile: 0.95) == 20)
        #expect(history.typicalDuration(of: id("a"), percentile: 0.5) == 11)
        #expect(history.typicalDuration(of: id("b"), percentile: 0.95) == nil)
        #expect(history.censoredDuration(of: id("a")) == 60)
        #expect(history.censoredDuration(of: id("b")) == nil, "0 is a time-out recorded before its time was kept")
        #expect(history.censoredDuration(of: id("c")) == nil)
    }
}

@Suite(.timeLimit(.minutes(2))) struct CrossDestinationEstimateTests {
    func sample(_ d: Double, _ n: Int = 2) -> ClassSample { ClassSample(duration: d, testCount: n) }
    let a = SuiteID(module: "M", name: "A"), b = SuiteID(module: "M", name: "B"), c = SuiteID(module: "M", name: "C")

    @Test func aClassNeverRunHereBorrowsFromAnotherDestinationScaledByTheirSpeedRatio() {
        // release runs the shared classes 2.5× faster than debug; C has only run on debug.
        let debug = TimingHistory(destination: "debug", classes: [a: [sample(10)], b: [sample(4)], c: [sample(8)]])
        let release = TimingHistory(destination: "release", classes: [a: [sample(4)], b: [sample(1.6)]])
        #expect(Estimator.speedRatio(of: release, to: debug) == 0.4)
        let suite = TestSuite(id: c, framework: .xctest, tests: ["x", "y"])
        let (e, source) = Estimator().estimate(suite, history: release, others: [debug])
        #expect(abs(e - 3.2) < 1e-9, "8 s on debug × 0.4")
        #expect(source == .borrowed(from: "debug", ratio: 0.4))
    }

    @Test func ownHistoryWinsOverBorrowing() {
        let debug = TimingHistory(destination: "debug", classes: [a: [sample(10)]])
        let release = TimingHistory(destination: "release", classes: [a: [sample(3)]])
        let (e, source) = Estimator().estimate(TestSuite(id: a, framework: .xctest, tests: ["x", "y"]), history: release,
                                               others: [debug])
        #expect(e == 3 && source == .history(samples: 1))
    }

    @Test func noSharedClassMeansNoRatioAndNoBorrowing() {
        let debug = TimingHistory(destination: "debug", classes: [c: [sample(8)]])
        let release = TimingHistory(destination: "release", classes: [a: [sample(3)]], secondsPerTest: 1.5)
        #expect(Estimator.speedRatio(of: release, to: debug) == nil)
        let (_, source) = Estimator().estimate(TestSuite(id: c, framework: .xctest, tests: ["x", "y"]), history: release,
                                               others: [debug])
        #expect(source == .testCount(secondsPerTest: 1.5))
    }

    @Test func theRatioIsTheMedianSoOneOddClassDoesNotSkewIt() {
        let debug = TimingHistory(destination: "debug", classes: [a: [sample(10)], b: [sample(10)], c: [sample(10)]])
        let release = TimingHistory(destination: "release", classes: [a: [sample(5)], b: [sample(5)], c: [sample(100)]])
        #expect(Estimator.speedRatio(of: release, to: debug) == 0.5)
    }
}
