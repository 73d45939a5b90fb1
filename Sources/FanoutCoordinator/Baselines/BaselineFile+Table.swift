import FanoutCore
import FanoutReports

extension BaselineFile {
    /// `fanout baseline show`: one row per baseline (of `destination` only, when given).
    public func table(destination: String? = nil, rules: PerformanceRules = PerformanceRules()) -> Table {
        let shown = baselines.filter { destination == nil || $0.destination == destination }
        let rows = shown.map { b -> [String] in
            let unit = b.unit ?? "seconds"
            let allowed: String
            if let sd = b.maxStandardDeviation {
                allowed = BaselineFile.show(sd, unit)
            } else {
                let r = rules.thresholds(for: b.test)
                allowed = "default (\(BaselineFile.percent(r.relativeNoise)) and \(BaselineFile.show(r.absoluteNoise, unit)))"
            }
            return [b.test.description, b.metric == "org.swift.XCTPerformanceMetric_WallClockTime" ? "Time" : b.metric,
                    b.destination, b.hardwareClass.isEmpty ? "(unknown)" : b.hardwareClass,
                    BaselineFile.show(b.average, unit), b.standardDeviation.map { BaselineFile.show($0, unit) } ?? "—", allowed]
        }
        let scope = destination.map { " on \($0)" } ?? ""
        return Table(title: "\(shown.count) baseline\(shown.count == 1 ? "" : "s")\(scope)",
                     headers: ["test", "metric", "destination", "hardware class", "average", "accepted SD", "allowed SD"],
                     rows: rows, numeric: [4, 5])
    }
}
