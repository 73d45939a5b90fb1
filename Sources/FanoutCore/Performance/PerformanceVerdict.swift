/// What a measure result means against the baseline of its device configuration (Xcode's rule; see
/// `PerformanceJudge` for the exact definition and docs/baselines.md for the user's view).
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
    /// True when this verdict fails the run: a regression while `--fail-on-perf-regression` is on. Written only when
    /// true; a report without it reads as false.
    public var failsRun: Bool
    /// The average above which this result is a regression: the baseline plus the larger of the relative and the
    /// absolute allowance of the test's thresholds. With `baselineAverage`, the band a chart shades as allowed.
    /// Missing without a baseline (and in reports written before it existed).
    public var regressionAbove: Double?

    public init(kind: Kind, baselineAverage: Double? = nil, change: Double? = nil, message: String,
                failsRun: Bool = false, regressionAbove: Double? = nil) {
        self.kind = kind
        self.baselineAverage = baselineAverage
        self.change = change
        self.message = message
        self.failsRun = failsRun
        self.regressionAbove = regressionAbove
    }

    private enum CodingKeys: String, CodingKey {
        case kind, baselineAverage, change, message, failsRun, regressionAbove
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        kind = try c.decode(Kind.self, forKey: .kind)
        baselineAverage = try c.decodeIfPresent(Double.self, forKey: .baselineAverage)
        change = try c.decodeIfPresent(Double.self, forKey: .change)
        message = try c.decode(String.self, forKey: .message)
        failsRun = try c.decodeIfPresent(Bool.self, forKey: .failsRun) ?? false
        regressionAbove = try c.decodeIfPresent(Double.self, forKey: .regressionAbove)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind, forKey: .kind)
        try c.encodeIfPresent(baselineAverage, forKey: .baselineAverage)
        try c.encodeIfPresent(change, forKey: .change)
        try c.encode(message, forKey: .message)
        if failsRun { try c.encode(true, forKey: .failsRun) }
        try c.encodeIfPresent(regressionAbove, forKey: .regressionAbove)
    }
}

/// One accepted baseline: for a test's metric, on one destination and one hardware class.
public struct Baseline: Hashable, Codable, Sendable {
    public var test: TestID
    /// The metric's identifier (e.g. `org.swift.XCTPerformanceMetric_WallClockTime`).
    public var metric: String
    public var destination: String
    /// The agents' hardware class the baseline was measured on (CPU model and count), as `HardwareClass` spells it.
    /// The empty string (`Baseline.unknownHardwareClass`) stands for "unknown": a measurement whose agent's hardware
    /// class could not be read matches only such a baseline, and such a baseline matches nothing else.
    public var hardwareClass: String
    public var average: Double
    /// The standard deviation allowed, in the metric's unit; nil: the rule's default (more than the relative AND
    /// the absolute noise threshold is too noisy). Left nil by `fanout baseline accept`, as Xcode leaves its max
    /// STDDEV at the default; set it by hand to allow one measurement more (or less) spread.
    public var maxStandardDeviation: Double?
    /// The metric's unit (e.g. `seconds`), for people reading the file.
    public var unit: String?
    /// The standard deviation of the accepted measurement (sample, n − 1), for reference; it is not a limit.
    public var standardDeviation: Double?
    /// The run the baseline was accepted from.
    public var runID: String?

    public init(test: TestID, metric: String, destination: String, hardwareClass: String, average: Double,
                maxStandardDeviation: Double? = nil, unit: String? = nil, standardDeviation: Double? = nil,
                runID: String? = nil) {
        self.test = test
        self.metric = metric
        self.destination = destination
        self.hardwareClass = hardwareClass
        self.average = average
        self.maxStandardDeviation = maxStandardDeviation
        self.unit = unit
        self.standardDeviation = standardDeviation
        self.runID = runID
    }

    /// The hardware class of a baseline measured where the agent's hardware class could not be read.
    public static let unknownHardwareClass = ""

    /// What a baseline is for: a baseline applies to a measurement only when all four are equal.
    public struct Key: Hashable, Sendable, Comparable, CustomStringConvertible {
        public var test: TestID
        public var metric: String
        public var destination: String
        public var hardwareClass: String

        public init(test: TestID, metric: String, destination: String, hardwareClass: String?) {
            self.test = test
            self.metric = metric
            self.destination = destination
            self.hardwareClass = hardwareClass ?? Baseline.unknownHardwareClass
        }

        /// The key of a measurement taken on `destination` by an agent of `hardwareClass`.
        public init(_ measurement: Measurement, destination: String, hardwareClass: String?) {
            self.init(test: measurement.test, metric: measurement.metricKey, destination: destination,
                      hardwareClass: hardwareClass)
        }

        public init(_ record: MeasurementRecord) {
            self.init(record.measurement, destination: record.destination, hardwareClass: record.hardwareClass)
        }

        public static func < (a: Key, b: Key) -> Bool {
            (a.test, a.metric, a.destination, a.hardwareClass) < (b.test, b.metric, b.destination, b.hardwareClass)
        }

        public var description: String {
            "\(test) · \(metric) · \(destination) · "
                + (hardwareClass.isEmpty ? "unknown hardware class" : hardwareClass)
        }
    }

    public var key: Key {
        Key(test: test, metric: metric, destination: destination, hardwareClass: hardwareClass)
    }
}
