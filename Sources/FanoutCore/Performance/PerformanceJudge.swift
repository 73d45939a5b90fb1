/// Judges measure results against the baselines of their device configuration (Xcode's rule).
///
/// For a measurement with values v₁…vₙ on destination D, by an agent of hardware class H:
/// - **average** = the mean of the values (recomputed from them: XCTest prints the average rounded to 1 ms);
/// - **SD** = the *sample* standard deviation, √(Σ(vᵢ − average)² / (n − 1)), 0 when n < 2. swift-corelibs-xctest
///   (WallClockTimeMetric) divides by n − 1 for the relative standard deviation it prints and for its own noise
///   failure, so a result Fanout calls too noisy is one XCTest calls too noisy.
/// - **baseline** = the one whose test, metric identifier, destination AND hardware class all equal the
///   measurement's. A baseline of another destination or hardware class is never used, not even as a fallback. A
///   measurement whose hardware class is unknown (nil) matches only a baseline whose hardware class is unknown too
///   (`Baseline.unknownHardwareClass`, the empty string).
///
/// The verdict, in this order (a noisy result cannot be judged, so noise wins over regression):
/// 1. **too noisy** when SD > the baseline's `maxStandardDeviation` if it has one, else when SD > `relativeNoise` ×
///    average AND SD > `absoluteNoise`; with or without a baseline;
/// 2. **recorded** when there is no baseline;
/// 3. **regression** when average − baseline > `relativeRegression` × baseline AND average − baseline >
///    `absoluteRegression`;
/// 4. else **passed** (faster is always passed).
///
/// "More than" is strict: exactly 10% or exactly 0.1 s is within the limit. Two numbers closer than 1e-9 of their
/// size (at least 1e-9 absolute) count as equal, so that 1.1 s against a 1.0 s baseline is exactly 10% and not the
/// 10.000000000000009% binary floating point makes of it. Pure: no I/O.
public struct PerformanceJudge: Sendable {
    public var rules: PerformanceRules

    public init(rules: PerformanceRules = PerformanceRules()) {
        self.rules = rules
    }

    /// The verdict of one measurement taken on `destination` by an agent of `hardwareClass`.
    public func verdict(for m: Measurement, destination: String, hardwareClass: String?,
                        baselines: [Baseline]) -> PerformanceVerdict {
        let key = Baseline.Key(m, destination: destination, hardwareClass: hardwareClass)
        let baseline = baselines.last { $0.key == key }
        let limits = rules.thresholds(for: m.test)
        let average = m.meanOfValues
        let sd = m.sampleStandardDeviation
        let unit = m.unit
        let delta = baseline.map { average - $0.average }
        let change = baseline.flatMap { b in b.average != 0 ? (average - b.average) / b.average : nil }
        // Regression is more than both allowances over the baseline: above the larger of the two.
        let above = baseline.map { b in
            b.average + max(limits.relativeRegression * abs(b.average), limits.absoluteRegression)
        }
        let versus = baseline.map { b in
            "average \(Self.show(average, unit)) against the baseline \(Self.show(b.average, unit))"
                + " (\(Self.signedPercent(change)), \(Self.signed(delta ?? 0, unit)))"
        }

        if let allowed = baseline?.maxStandardDeviation {
            if Self.exceeds(sd, allowed) {
                return PerformanceVerdict(
                    kind: .tooNoisy, baselineAverage: baseline?.average, change: change,
                    message: "standard deviation \(Self.show(sd, unit)) is more than the \(Self.show(allowed, unit)) "
                        + "the baseline allows: too noisy to judge" + (versus.map { "; \($0)" } ?? ""),
                    regressionAbove: above)
            }
        } else if Self.exceeds(sd, limits.relativeNoise * abs(average)), Self.exceeds(sd, limits.absoluteNoise) {
            let relative = average != 0 ? " (\(Self.percent(sd / abs(average))) of the average)" : ""
            return PerformanceVerdict(
                kind: .tooNoisy, baselineAverage: baseline?.average, change: change,
                message: "standard deviation \(Self.show(sd, unit))\(relative) is more than "
                    + "\(Self.percent(limits.relativeNoise)) of the average and more than "
                    + "\(Self.show(limits.absoluteNoise, unit)): too noisy to judge"
                    + (versus.map { "; \($0)" } ?? ""),
                regressionAbove: above)
        }

        guard let baseline, let delta, let versus else {
            let hardware = (hardwareClass ?? "").isEmpty ? "an unknown hardware class" : "hardware class \(hardwareClass ?? "")"
            return PerformanceVerdict(
                kind: .recorded,
                message: "no baseline for \(m.metric) on \(destination) with \(hardware): recorded only "
                    + "(average \(Self.show(average, unit)))")
        }
        let limitText = "\(Self.percent(limits.relativeRegression)) and \(Self.show(limits.absoluteRegression, unit))"
        if Self.exceeds(delta, limits.relativeRegression * abs(baseline.average)),
           Self.exceeds(delta, limits.absoluteRegression) {
            return PerformanceVerdict(kind: .regression, baselineAverage: baseline.average, change: change,
                                      message: "\(versus): more than \(limitText) slower", regressionAbove: above)
        }
        return PerformanceVerdict(kind: .passed, baselineAverage: baseline.average, change: change,
                                  message: "\(versus): within \(limitText)", regressionAbove: above)
    }

    /// The records with their `verdict` filled in.
    public func judge(_ records: [MeasurementRecord], baselines: [Baseline]) -> [MeasurementRecord] {
        records.map { record in
            var judged = record
            judged.verdict = verdict(for: record.measurement, destination: record.destination,
                                     hardwareClass: record.hardwareClass, baselines: baselines)
            return judged
        }
    }

    // MARK: - The comparison

    /// `value` is more than `limit`, and not merely by floating-point error.
    static func exceeds(_ value: Double, _ limit: Double) -> Bool {
        guard value > limit else { return false }
        let scale = max(1, abs(value), abs(limit))
        return value - limit > 1e-9 * scale
    }

    private static func show(_ value: Double, _ unit: String) -> String { PerformanceText.value(value, unit: unit) }
    private static func signed(_ value: Double, _ unit: String) -> String { PerformanceText.signedValue(value, unit: unit) }
    private static func percent(_ fraction: Double) -> String { PerformanceText.percent(fraction) }
    private static func signedPercent(_ fraction: Double?) -> String { PerformanceText.signedPercent(fraction) }
}
