/// Estimates how long a class takes on a destination from that destination's timing history.
///
/// - Seen before: a high rolling percentile (default p80) of its last runs there, scaled to today's test count.
///   A high percentile rather than the mean because finishing late costs more than finishing early.
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
        let count = max(1, (tests ?? suite.tests).count)
        if let own = classEstimate(suite.id, count: count, in: history) {
            return (max(floor, own.0), .history(samples: own.1))
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

    /// Linear-interpolated percentile (the common "type 7" definition). `p` in 0...1.
    public static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = min(max(p, 0), 1) * Double(sorted.count - 1)
        let lower = Int(rank)
        let upper = min(lower + 1, sorted.count - 1)
        let fraction = rank - Double(lower)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction
    }
}
