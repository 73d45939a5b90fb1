import struct Foundation.Date

/// How often a test fails where it also passes, over its recent runs on one destination: the evidence that it is
/// flaky, with an interval that says how much that evidence is worth.
///
/// - Counted over **attempts** (retries included), so the rate estimates the chance that one run of the test fails
///   for no reason in the code: a test that fails 1 time in 10 scores about 0.1, with retries or without.
/// - Only attempts on a **product the test passed on** count. The same build giving both verdicts (two runs of one
///   product, or a fail then a pass within one run) is the evidence of a flake; failures on a build the test never
///   passed on are more likely a real break, and are left out. A run whose product is unknown is a product of its
///   own: there only a fail-then-pass within the run is evidence.
/// - The interval is Wilson's score interval (95 %): honest with few attempts and at rates near 0, where the plain
///   rate ± 2 standard errors is not (0 failures in 5 attempts: 0 to 0.43, not "0 exactly").
public struct FlakeScore: Codable, Sendable, Hashable {
    /// Attempts counted: passed, failed, crashed or timed out, on products the test passed on.
    public var attempts: Int
    /// Of those, the attempts that failed, crashed or timed out.
    public var failures: Int
    /// Runs that contributed attempts.
    public var runs: Int
    /// Of those, the runs where the test failed, then passed on a retry.
    public var flakyRuns: Int
    /// Products (builds) on which the test gave both verdicts: across runs, or within one.
    public var mixedProducts: Int
    /// The first and the last run with a counted failure.
    public var firstSeen: Date?
    public var lastSeen: Date?

    public init(attempts: Int, failures: Int, runs: Int, flakyRuns: Int, mixedProducts: Int,
                firstSeen: Date? = nil, lastSeen: Date? = nil) {
        self.attempts = attempts
        self.failures = failures
        self.runs = runs
        self.flakyRuns = flakyRuns
        self.mixedProducts = mixedProducts
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }

    /// Failures per attempt, 0...1 (0 with no attempts).
    public var rate: Double { attempts > 0 ? Double(failures) / Double(attempts) : 0 }

    /// The 95 % interval of the rate.
    public var interval: ClosedRange<Double> { Self.wilson(failures, of: attempts) }

    private enum CodingKeys: String, CodingKey {
        case attempts, failures, runs, flakyRuns, mixedProducts, firstSeen, lastSeen, rate, low, high
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(attempts: try c.decode(Int.self, forKey: .attempts), failures: try c.decode(Int.self, forKey: .failures),
                  runs: try c.decode(Int.self, forKey: .runs), flakyRuns: try c.decode(Int.self, forKey: .flakyRuns),
                  mixedProducts: try c.decode(Int.self, forKey: .mixedProducts),
                  firstSeen: try c.decodeIfPresent(Date.self, forKey: .firstSeen),
                  lastSeen: try c.decodeIfPresent(Date.self, forKey: .lastSeen))
    }

    /// The counts, and for readers of the JSON the rate and its interval (`low`, `high`), which are derived.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(attempts, forKey: .attempts)
        try c.encode(failures, forKey: .failures)
        try c.encode(runs, forKey: .runs)
        try c.encode(flakyRuns, forKey: .flakyRuns)
        try c.encode(mixedProducts, forKey: .mixedProducts)
        try c.encodeIfPresent(firstSeen, forKey: .firstSeen)
        try c.encodeIfPresent(lastSeen, forKey: .lastSeen)
        try c.encode(rate, forKey: .rate)
        try c.encode(interval.lowerBound, forKey: .low)
        try c.encode(interval.upperBound, forKey: .high)
    }

    /// For people: `flake score 12.5 % (5.0-25.0 %): 3 of 24 attempts failed on builds it also passed on`.
    public var summary: String {
        let i = interval
        func pct(_ x: Double) -> String { String(format1: x * 100) }
        return "flake score \(pct(rate)) % (\(pct(i.lowerBound))-\(pct(i.upperBound)) %): \(failures) of \(attempts) "
            + "attempt\(attempts == 1 ? "" : "s") failed on builds it also passed on"
    }

    /// Wilson's score interval of a proportion: `k` events in `n` trials, at `z` standard normal deviates (1.96:
    /// 95 %). With no trials, 0...1: nothing is known.
    public static func wilson(_ k: Int, of n: Int, z: Double = 1.959964) -> ClosedRange<Double> {
        guard n > 0 else { return 0...1 }
        let n = Double(n), p = Double(min(max(k, 0), Int(n))) / n
        let z2 = z * z
        let centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        let half = z / (1 + z2 / n) * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        return max(0, centre - half)...min(1, centre + half)
    }
}
