import FanoutCore

/// The page's measurements: every measure result with its verdict, baseline and trend chart.
extension HTMLWriter {
    func performance(_ report: RunReport) -> String {
        var out = "<section id=\"performance\">\n<h2>Performance</h2>\n"
        guard !report.measurements.isEmpty else { return out + "<p>No measurements.</p>\n</section>\n" }
        let sorted = report.measurements.sorted {
            ($0.destination, $0.hardwareClass ?? "", $0.measurement.test, $0.measurement.metric)
                < ($1.destination, $1.hardwareClass ?? "", $1.measurement.test, $1.measurement.metric)
        }
        // One table per destination and hardware class (baselines and trends never cross them), then its charts.
        var groups: [[MeasurementRecord]] = []
        for record in sorted.prefix(Self.measurementRows) {
            if let last = groups.last?.last, last.destination == record.destination,
               last.hardwareClass == record.hardwareClass {
                groups[groups.count - 1].append(record)
            } else {
                groups.append([record])
            }
        }
        var charts = 0
        for group in groups {
            out += "<h3>\(e(group[0].destination, line: true)) · \(e(group[0].hardwareClass ?? "hardware class unknown", line: true))</h3>\n"
                + "<table class=\"performance\"><thead><tr><th>test</th><th>metric</th><th>average</th><th>RSD</th>"
                + "<th>values</th><th>verdict</th><th>baseline</th><th>agent</th><th>taken</th></tr></thead><tbody>\n"
            for record in group {
                let m = record.measurement
                let verdictClass = record.verdict.map { $0.kind.rawValue } ?? "recorded"
                out += "<tr><td><code>\(e(m.test.description, line: true))</code></td><td>\(e(m.metric, line: true))</td>"
                    + "<td>\(e(PerformanceText.value(m.average, unit: m.unit), line: true))</td>"
                    + "<td>\(String(format1: m.relativeStandardDeviation))%</td>"
                    + "<td>\(HTMLTimeline.sparkline(m.values, unit: m.unit))</td>"
                    + "<td class=\"verdict-\(verdictClass)\">\(e(record.verdict.map { PerformanceFacts.short($0, unit: m.unit) } ?? "not judged", line: true))</td>"
                    + "<td>\(e(record.verdict?.baselineAverage.map { PerformanceText.value($0, unit: m.unit) } ?? "—", line: true))</td>"
                    + "<td>\(e(record.agent, line: true))</td>"
                    + "<td>\(record.measuredAlone.map { $0 ? "alone" : "beside other work" } ?? "—")</td></tr>\n"
            }
            out += "</tbody></table>\n"
            // Trends, regressions first: a chart per metric with earlier runs or a baseline to compare with.
            let ranked = group.filter { $0.verdict?.kind == .regression } + group.filter { $0.verdict?.kind != .regression }
            var figures = ""
            for record in ranked {
                guard charts < Self.trendCharts, let chart = HTMLTrendChart.svg(record) else { continue }
                charts += 1
                let m = record.measurement
                let runs = record.trend?.runs.count ?? 0
                figures += "<figure class=\"trend\">\(chart)<figcaption><code>\(e(m.test.description, line: true))</code> · "
                    + "\(e(m.metric, line: true)) · \(runs) earlier run\(runs == 1 ? "" : "s") · "
                    + "\(e(record.verdict.map { PerformanceFacts.short($0, unit: m.unit) } ?? "not judged", line: true))"
                    + "</figcaption></figure>\n"
            }
            if !figures.isEmpty {
                out += "<p class=\"legend\"><span class=\"key past\"></span>earlier runs (newest \(Self.trendRuns) at most) "
                    + "<span class=\"key this-run\"></span>this run, in its verdict&#39;s color <span class=\"key-line baseline\"></span>baseline "
                    + "<span class=\"key allowed\"></span>allowed, up to the regression limit</p>\n"
                    + "<div class=\"trends\">\n\(figures)</div>\n"
            }
        }
        if sorted.count > Self.measurementRows {
            out += "<p class=\"note\">… and \(sorted.count - Self.measurementRows) more measurements in report.json.</p>\n"
        }
        if charts == Self.trendCharts {
            out += "<p class=\"note\">Trends are drawn for the first \(Self.trendCharts) measurements; every trend is in report.json.</p>\n"
        }
        return out + "</section>\n"
    }
}
