extension Measurement {
    /// The key baselines are matched by: the metric's stable identifier, or its name when it has none.
    public var metricKey: String { identifier.isEmpty ? metric : identifier }

    /// The mean of the values, at the precision XCTest printed them (microseconds); `average` as printed is rounded
    /// to 1 ms, which is too coarse for the verdict of a 1 ms measurement. Falls back to `average` without values.
    public var meanOfValues: Double {
        guard !values.isEmpty else { return average }
        return values.reduce(0, +) / Double(values.count)
    }

    /// The **sample** standard deviation of the values (divided by n − 1), as swift-corelibs-xctest computes it for
    /// the relative standard deviation it prints and for its own noise failure (WallClockTimeMetric), and as Xcode
    /// shows it. 0 for fewer than two values. (`standardDeviation` is the population one, divided by n.)
    public var sampleStandardDeviation: Double {
        guard values.count > 1 else { return 0 }
        let mean = meanOfValues
        let squares = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
        return (squares / Double(values.count - 1)).squareRoot()
    }
}
