/// The thresholds of the performance verdict (Xcode's defaults), with per-test overrides.
///
/// A **regression** needs both: the average grew by more than `relativeRegression` of the baseline average AND by
/// more than `absoluteRegression` (in the metric's unit, seconds for time). **Too noisy** needs both: the standard
/// deviation is more than `relativeNoise` of the average AND more than `absoluteNoise`. Exactly at a threshold is
/// within it. The absolute amounts keep tiny measurements from flapping: a 1 ms test that takes 2 ms is 100% slower
/// but only 1 ms, which is no regression under the defaults.
///
/// Config (`performance:` in fanout.yml):
/// ```yaml
/// performance:
///   regression: { relative: 0.10, absolute: 0.1 }
///   noise: { relative: 0.10, absolute: 0.1 }
///   tests:
///     - match: 'DemoKitTests.PerformanceTests/testMeasureSorting'   # an exact id, or a regex searched in the id
///       regression: { relative: 0.25 }
/// ```
public struct PerformanceRules: Codable, Sendable, Hashable {
    /// A regression is more than this fraction of the baseline average slower (0.10 = 10%)...
    public var relativeRegression: Double
    /// ...and more than this much slower, in the metric's unit (seconds).
    public var absoluteRegression: Double
    /// Too noisy is a standard deviation of more than this fraction of the average...
    public var relativeNoise: Double
    /// ...and more than this much, in the metric's unit (seconds).
    public var absoluteNoise: Double
    /// Other thresholds for some tests. A test takes the override whose `test` is its exact id if there is one,
    /// else the first override (in order) whose pattern matches its id; thresholds an override leaves out stay as
    /// above.
    public var overrides: [Override]

    public init(relativeRegression: Double = 0.10, absoluteRegression: Double = 0.1, relativeNoise: Double = 0.10,
                absoluteNoise: Double = 0.1, overrides: [Override] = []) {
        self.relativeRegression = relativeRegression
        self.absoluteRegression = absoluteRegression
        self.relativeNoise = relativeNoise
        self.absoluteNoise = absoluteNoise
        self.overrides = overrides
    }

    /// Thresholds for the tests an exact id or pattern selects (see `TestPattern`); nil: the default's.
    public struct Override: Codable, Sendable, Hashable {
        /// An exact `Module.Class/test` id, or a regular expression searched in it.
        public var test: String
        public var relativeRegression: Double?
        public var absoluteRegression: Double?
        public var relativeNoise: Double?
        public var absoluteNoise: Double?

        public init(test: String, relativeRegression: Double? = nil, absoluteRegression: Double? = nil,
                    relativeNoise: Double? = nil, absoluteNoise: Double? = nil) {
            self.test = test
            self.relativeRegression = relativeRegression
            self.absoluteRegression = absoluteRegression
            self.relativeNoise = relativeNoise
            self.absoluteNoise = absoluteNoise
        }
    }

    /// The override that applies to `test`: the exact one first, then the first pattern that matches.
    public func override(for test: TestID) -> Override? {
        overrides.first { TestPattern($0.test).matchesExactly(test) }
            ?? overrides.first { TestPattern($0.test).matches(test) }
    }

    /// The thresholds for `test`, its override applied (the result has no overrides).
    public func thresholds(for test: TestID) -> PerformanceRules {
        var rules = self
        rules.overrides = []
        guard let o = override(for: test) else { return rules }
        if let v = o.relativeRegression { rules.relativeRegression = v }
        if let v = o.absoluteRegression { rules.absoluteRegression = v }
        if let v = o.relativeNoise { rules.relativeNoise = v }
        if let v = o.absoluteNoise { rules.absoluteNoise = v }
        return rules
    }
}
