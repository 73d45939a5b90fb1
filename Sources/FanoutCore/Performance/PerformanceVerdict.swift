/// What a measure result means against the baseline of its device configuration (Xcode's rule).
public struct PerformanceVerdict: Hashable, Codable, Sendable {
    public enum Kind: String, Codable, Sendable, Hashable {
        /// No baseline for this test, metric, destination and hardware class: the result is recorded only.
        case recorded
        /// Within the allowed change from the baseline.
        case passed
        /// The average grew by more than the allowed relative AND absolute amounts over the baseline.
        case regression
        /// The standard deviation is larger than allowed (relative AND absolute): the result cannot be judged.
        case tooNoisy = "too-noisy"
    }

    public var kind: Kind
    public var baselineAverage: Double?
    /// Change of the average against the baseline, as a fraction (0.12 = 12% slower).
    public var change: Double?
    /// A sentence a person can read: what was compared with what.
    public var message: String

    public init(kind: Kind, baselineAverage: Double? = nil, change: Double? = nil, message: String) {
        self.kind = kind
        self.baselineAverage = baselineAverage
        self.change = change
        self.message = message
    }
}

/// One accepted baseline: for a test's metric, on one destination and one hardware class.
public struct Baseline: Hashable, Codable, Sendable {
    public var test: TestID
    /// The metric's identifier (e.g. `org.swift.XCTPerformanceMetric_WallClockTime`).
    public var metric: String
    public var destination: String
    /// The agents' hardware class the baseline was measured on (CPU model and count), as `HardwareClass` spells it.
    public var hardwareClass: String
    public var average: Double
    /// The standard deviation allowed; nil: the rule's default.
    public var maxStandardDeviation: Double?

    public init(test: TestID, metric: String, destination: String, hardwareClass: String, average: Double,
                maxStandardDeviation: Double? = nil) {
        self.test = test
        self.metric = metric
        self.destination = destination
        self.hardwareClass = hardwareClass
        self.average = average
        self.maxStandardDeviation = maxStandardDeviation
    }
}
