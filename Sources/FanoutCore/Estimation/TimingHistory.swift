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
/// only runs that count: not skipped, not crashed, not timed out), the recent durations of single tests, and the mean
/// seconds per test over recent runs there.
public struct TimingHistory: Hashable, Sendable {
    public var destination: String
    public var classes: [SuiteID: [ClassSample]]
    /// Recent durations of single tests (newest first), for splitting classes by methods.
    public var tests: [TestID: [Double]]
    /// Mean seconds per test on this destination over its recent runs; nil when it has no history at all.
    public var secondsPerTest: Double?

    public init(destination: String, classes: [SuiteID: [ClassSample]] = [:], tests: [TestID: [Double]] = [:],
                secondsPerTest: Double? = nil) {
        self.destination = destination
        self.classes = classes
        self.tests = tests
        self.secondsPerTest = secondsPerTest
    }

    public static func empty(_ destination: String) -> TimingHistory { TimingHistory(destination: destination) }
}
