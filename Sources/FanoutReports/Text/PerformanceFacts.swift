import FanoutCore

/// How measurements and their verdicts are worded in every writer for people (console, JUnit), so they never
/// disagree.
enum PerformanceFacts {
    /// `recorded`, `passed`, `REGRESSION`, `TOO NOISY`: capitals for what needs a look.
    static func label(_ kind: PerformanceVerdict.Kind) -> String {
        switch kind {
        case .recorded: "recorded"
        case .passed: "passed"
        case .regression: "REGRESSION"
        case .tooNoisy: "TOO NOISY"
        }
    }

    /// `Time 12.3 ms ± 2.5% (10 values)`: the average and the relative standard deviation as XCTest printed them.
    static func measured(_ m: Measurement) -> String {
        "\(m.metric) \(PerformanceText.value(m.average, unit: m.unit)) ± "
            + "\(String(format1: m.relativeStandardDeviation))% (\(m.values.count) value"
            + "\(m.values.count == 1 ? "" : "s"))"
    }

    /// `REGRESSION against 18.0 ms (+1666.7%)`, `passed against 18.0 ms (+2%)`, `recorded (no baseline)`,
    /// `TOO NOISY (no baseline)`.
    static func short(_ verdict: PerformanceVerdict, unit: String) -> String {
        let label = label(verdict.kind)
        guard let base = verdict.baselineAverage else { return "\(label) (no baseline)" }
        return "\(label) against \(PerformanceText.value(base, unit: unit)) "
            + "(\(PerformanceText.signedPercent(verdict.change)))"
    }

    /// `trend ▁▁▂▁█ (4 earlier runs, then this one)`: the averages of the earlier runs of the record's trend and
    /// this run's as block characters, lowest to highest; nil without earlier runs.
    static func trendLine(_ record: MeasurementRecord) -> String? {
        let past = (record.trend?.runs ?? []).map(\.average).filter(\.isFinite)
        let current = record.measurement.meanOfValues
        guard !past.isEmpty, current.isFinite else { return nil }
        let values = past + [current]
        let blocks = Array("▁▂▃▄▅▆▇█")
        let lo = values.min() ?? current, hi = values.max() ?? current
        let bars = values.map { v -> Character in
            hi > lo ? blocks[min(blocks.count - 1, Int((v - lo) / (hi - lo) * Double(blocks.count - 1) + 0.5))] : blocks[3]
        }
        return "trend \(String(bars)) (\(past.count) earlier run\(past.count == 1 ? "" : "s"), then this one)"
    }

    /// Regressions of the report, in report order.
    static func regressions(_ report: RunReport) -> [MeasurementRecord] {
        report.measurements.filter { $0.verdict?.kind == .regression }
    }

    /// Measurements by destination and test, for the writers that show them on the test's own entry.
    static func byTest(_ report: RunReport) -> [String: [MeasurementRecord]] {
        Dictionary(grouping: report.measurements) { key(destination: $0.destination, test: $0.measurement.test) }
    }

    static func key(destination: String, test: TestID) -> String { "\(destination)|\(test)" }
}
