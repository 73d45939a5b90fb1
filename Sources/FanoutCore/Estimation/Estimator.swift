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

    public func estimate(_ suite: TestSuite, tests: [String]? = nil, history: TimingHistory) -> (Double, EstimateSource) {
        let count = max(1, (tests ?? suite.tests).count)
        if let samples = history.classes[suite.id]?.prefix(window), !samples.isEmpty {
            let scaled = samples.map { $0.duration * Double(count) / Double(max(1, $0.testCount)) }
            return (max(floor, Self.percentile(scaled, percentile)), .history(samples: samples.count))
        }
        if let perTest = history.secondsPerTest, perTest > 0 {
            return (max(floor, perTest * Double(count)), .testCount(secondsPerTest: perTest))
        }
        return (max(floor, nominalSecondsPerTest * Double(count)), .noHistory(secondsPerTest: nominalSecondsPerTest))
    }

    /// Work items for every suite of a catalog on one destination, each with its estimate.
    public func workItems(for catalog: Catalog, destination: String, history: TimingHistory) -> [WorkItem] {
        catalog.suites.map { suite in
            let (seconds, source) = estimate(suite, history: history)
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
