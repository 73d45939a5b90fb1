/// One XCTest `measure {}` result: a metric sampled several times (10 by default).
public struct Measurement: Hashable, Codable, Sendable {
    public var test: TestID
    /// Human name of the metric, e.g. `Time`.
    public var metric: String
    /// Unit of the values, e.g. `seconds`.
    public var unit: String
    /// Stable identifier, e.g. `org.swift.XCTPerformanceMetric_WallClockTime`.
    public var identifier: String
    public var values: [Double]
    public var average: Double
    /// Relative standard deviation in percent, as XCTest prints it.
    public var relativeStandardDeviation: Double
    public var maxPercentRelativeStandardDeviation: Double?
    public var maxStandardDeviation: Double?
    public var location: SourceLocation?

    public init(test: TestID, metric: String, unit: String, identifier: String, values: [Double], average: Double,
                relativeStandardDeviation: Double, maxPercentRelativeStandardDeviation: Double? = nil,
                maxStandardDeviation: Double? = nil, location: SourceLocation? = nil) {
        self.test = test
        self.metric = metric
        self.unit = unit
        self.identifier = identifier
        self.values = values
        self.average = average
        self.relativeStandardDeviation = relativeStandardDeviation
        self.maxPercentRelativeStandardDeviation = maxPercentRelativeStandardDeviation
        self.maxStandardDeviation = maxStandardDeviation
        self.location = location
    }

    /// Population standard deviation of the values.
    public var standardDeviation: Double {
        guard values.count > 1 else { return 0 }
        let mean = values.reduce(0, +) / Double(values.count)
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)
        return variance.squareRoot()
    }
}
