/// Estimates how long a class takes on a destination from that destination's timing history.
///
/// - Seen before: a high rolling percentile (default p80) of its last runs there, scaled to today's test count.
///   A high percentile rather than the mean because finishing late costs more than finishing early.
/// - Never run whole there (killed by a time limit, split by methods, cut by stealing) but some of its tests have
///   history there: the sum of its tests' own times (``testSeconds(_:tests:history:)``). The same sum is the floor of a
///   class whose test was killed after running longer than the class's own estimate: a class is never shorter than
///   a test that ran past a time limit.
/// - Never seen there: its test count × the mean seconds per test on that destination (never 0, never a fixed 5 min).
/// - No history at all on that destination: its test count × a nominal time per test, so the order still follows size.
public struct Estimator: Sendable, Hashable {
    public var percentile: Double
    public var window: Int
    public var nominalSecondsPerTest: Double
    /// No estimate is smaller than this: a class always costs something.
    public var floor: Double

    public init(percentile: Double = 0.8, window: Int = 10, nominalSecondsPerTest: Double = 0.1, floor: Double = 0.001) {
        self.percentile = percentile
        self.window = window
        self.nominalSecondsPerTest = nominalSecondsPerTest
        self.floor = floor
    }

    public func estimate(_ suite: TestSuite, tests: [String]? = nil, history: TimingHistory,
                         others: [TimingHistory] = []) -> (Double, EstimateSource) {
        let names = tests ?? suite.tests
        let count = max(1, names.count)
        let byTests = testSeconds(suite.id, tests: names, history: history)
        if let own = classEstimate(suite.id, count: count, in: history) {
            // A test killed past the whole class's estimate: the class takes at least what its tests say.
            if let byTests, byTests.longestCensored > own.0, byTests.seconds > own.0 {
                return (max(floor, byTests.seconds), byTests.source)
            }
            return (max(floor, own.0), .history(samples: own.1))
        }
        if let byTests {
            return (max(floor, byTests.seconds), byTests.source)
        }
        // Never run here, but elsewhere: borrow, scaled by how much faster or slower this destination is.
        for other in others.sorted(by: { $0.destination < $1.destination }) where other.destination != history.destination {
            guard let there = classEstimate(suite.id, count: count, in: other),
                  let ratio = Self.speedRatio(of: history, to: other, window: window) else { continue }
            return (max(floor, there.0 * ratio), .borrowed(from: other.destination, ratio: ratio))
        }
        if let perTest = history.secondsPerTest, perTest > 0 {
            return (max(floor, perTest * Double(count)), .testCount(secondsPerTest: perTest))
        }
        return (max(floor, nominalSecondsPerTest * Double(count)), .noHistory(secondsPerTest: nominalSecondsPerTest))
    }

    /// The percentile of a class's own recent samples, scaled to `count` tests, with how many samples it used.
    func classEstimate(_ suite: SuiteID, count: Int, in history: TimingHistory) -> (Double, Int)? {
        guard let samples = history.classes[suite]?.prefix(window), !samples.isEmpty else { return nil }
        let scaled = samples.map { $0.duration * Double(count) / Double(max(1, $0.testCount)) }
        return (Self.percentile(scaled, percentile), samples.count)
    }

    /// What the per-test history of `destination` says a class takes: the sum over `tests` of
    /// `max(percentile of the test's recent durations, its censored time-out)`, a test with neither at the
    /// destination's mean seconds per test (else the nominal time per test). Nil when no test has either.
    func testSeconds(_ suite: SuiteID, tests names: [String], history: TimingHistory)
        -> (seconds: Double, longestCensored: Double, source: EstimateSource)?
    {
        let unseen = history.secondsPerTest.flatMap { $0 > 0 ? $0 : nil } ?? nominalSecondsPerTest
        var seconds = 0.0, known = 0, censored = 0, longestCensored = 0.0
        for name in names {
            let test = TestID(suite: suite, name: name)
            let durations = history.tests[test].map { Array($0.prefix(window)) } ?? []
            let typical = durations.isEmpty ? nil : Self.percentile(durations, percentile)
            let killed = history.censoredDuration(of: test)
            if typical != nil || killed != nil { known += 1 }
            if let killed {
                censored += 1
                longestCensored = max(longestCensored, killed)
            }
            seconds += max(typical ?? unseen, killed ?? 0)
        }
        guard known > 0 else { return nil }
        return (seconds, longestCensored, .tests(known: known, of: names.count, censored: censored))
    }

    /// How much longer classes take on `a` than on `b`: the median, over the classes both have run, of the ratio of
    /// their typical (median) times. Nil when they share no class.
    public static func speedRatio(of a: TimingHistory, to b: TimingHistory, window: Int = 10) -> Double? {
        var ratios: [Double] = []
        for (suite, samplesA) in a.classes {
            guard let samplesB = b.classes[suite], !samplesA.isEmpty, !samplesB.isEmpty else { continue }
            let perTestA = samplesA.prefix(window).map { $0.duration / Double(max(1, $0.testCount)) }
            let perTestB = samplesB.prefix(window).map { $0.duration / Double(max(1, $0.testCount)) }
            let ma = percentile(perTestA, 0.5), mb = percentile(perTestB, 0.5)
            if ma > 0, mb > 0 { ratios.append(ma / mb) }
        }
        return ratios.isEmpty ? nil : percentile(ratios, 0.5)
    }

    /// Work items for every suite of a catalog on one destination, each with its estimate.
    public func workItems(for catalog: Catalog, destination: String, history: TimingHistory,
                          others: [TimingHistory] = []) -> [WorkItem] {
        catalog.suites.map { suite in
            let (seconds, source) = estimate(suite, history: history, others: others)
            return WorkItem(suite: suite.id, framework: suite.framework, destination: destination, tests: suite.tests,
                            isWholeSuite: true, estimate: seconds, source: source)
        }
    }

    /// The estimator's percentile: `Statistics.percentile`, and 0 when nothing is known. `p` in 0...1.
    public static func percentile(_ values: [Double], _ p: Double) -> Double {
        Statistics.percentile(values, p) ?? 0
    }
}
