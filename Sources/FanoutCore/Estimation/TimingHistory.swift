/// One past run of a whole class on a destination, as the history store hands it to the estimator.
public struct ClassSample: Hashable, Codable, Sendable {
    public var duration: Double
    /// How many tests the class had in that run: estimates scale by the test count of today.
    public var testCount: Int

    public init(duration: Double, testCount: Int) {
        self.duration = duration
        self.testCount = testCount
    }
}

/// What the estimator needs to know about one destination's past: the recent samples of each class (newest first,
/// only runs that count: not skipped, not crashed, not timed out), the recent durations of single tests, the
/// time-outs of single tests, and the mean seconds per test over recent runs there; and, for scheduling by CPU and
/// memory, what each class consumed.
public struct TimingHistory: Hashable, Sendable {
    public var destination: String
    public var classes: [SuiteID: [ClassSample]]
    /// Recent durations of single tests (newest first) that ran to a pass or a failure: for splitting classes by
    /// methods, for estimating classes that never ran whole, and for per-test time limits.
    public var tests: [TestID: [Double]]
    /// For each test killed by a time limit in recent runs: the longest time it had run when it was killed. A
    /// censored observation: the test takes AT LEAST this long (it would have gone on). Only values above 0 (time-outs
    /// recorded before Fanout kept the elapsed time have 0, which says nothing).
    public var censored: [TestID: Double]
    /// Mean seconds per test on this destination over its recent runs; nil when it has no history at all.
    public var secondsPerTest: Double?
    /// For each class: the median over its recent runs of CPU seconds / wall seconds (1.0 keeps one core busy, 2.0
    /// two, 0.1 mostly waits). Only runs that measured both. Scheduling may keep CPU-heavy classes apart.
    public var cpuShare: [SuiteID: Double]
    /// For each class: the largest peak resident memory, in bytes, of the recent test processes that ran it. An upper
    /// bound: a process that ran several classes lends its peak to each of them.
    public var peakMemory: [SuiteID: Int64]

    public init(destination: String, classes: [SuiteID: [ClassSample]] = [:], tests: [TestID: [Double]] = [:],
                censored: [TestID: Double] = [:], secondsPerTest: Double? = nil, cpuShare: [SuiteID: Double] = [:],
                peakMemory: [SuiteID: Int64] = [:]) {
        self.destination = destination
        self.classes = classes
        self.tests = tests
        self.censored = censored
        self.secondsPerTest = secondsPerTest
        self.cpuShare = cpuShare
        self.peakMemory = peakMemory
    }

    public static func empty(_ destination: String) -> TimingHistory { TimingHistory(destination: destination) }

    /// A percentile (0...1, e.g. 0.95 for a time limit, 0.8 for an estimate) of the test's recent durations that ran
    /// to a pass or a failure; nil when it has none. Censored time-outs are not in it: see ``censoredDuration(of:)``.
    public func typicalDuration(of test: TestID, percentile: Double) -> Double? {
        guard let samples = tests[test], !samples.isEmpty else { return nil }
        return Estimator.percentile(samples, percentile)
    }

    /// How long the test had run, at most, when a time limit killed it in recent runs: it takes at least this long.
    /// Nil when it was not killed recently (or only before Fanout kept that time).
    public func censoredDuration(of test: TestID) -> Double? {
        guard let seconds = censored[test], seconds > 0 else { return nil }
        return seconds
    }
}
