import FanoutCore
import FanoutTestSupport
@testable import FanoutReports
import Foundation
import Testing

/// The performance trend of a metric, drawn from report.json alone: the chart in report.html, the line in summary.md,
/// and the field itself surviving a round trip (and its absence in older reports).
@Suite(.timeLimit(.minutes(2))) struct TrendChartTests {
    private func count(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    static let day = Date(timeIntervalSince1970: 1_714_564_800)

    /// Earlier averages (seconds), each a day apart, the last two judged against a baseline of 20 ms.
    static func trend(_ averages: [Double], baselineFrom: Int = 2) -> PerformanceTrend {
        PerformanceTrend(runs: averages.enumerated().map { i, v in
            PerformanceTrend.Point(runID: "run-\(i)", startedAt: day.addingTimeInterval(Double(i) * 86_400), average: v,
                                   baseline: i >= baselineFrom ? 0.02 : nil)
        })
    }

    /// A measurement of 10 × 0.318 s against a 20 ms baseline (a regression above 0.12 s), with a trend.
    static func regressed(_ test: String = "M.P/testSort", trend: PerformanceTrend?) -> ReportBuilder {
        var b = ReportBuilder()
        b.measurement(test, average: 0.318, rsd: 1, values: Array(repeating: 0.318, count: 10), hardwareClass: "Xeon × 8",
                      verdict: PerformanceVerdict(kind: .regression, baselineAverage: 0.02, change: 14.9,
                                                  message: "slower", regressionAbove: 0.12))
        b.measurements[0].trend = trend
        return b
    }

    @Test func theChartHasAPointPerEarlierRunThisRunMarkedAndTheBaselineWithItsBand() throws {
        let record = Self.regressed(trend: Self.trend([0.019, 0.021, 0.02, 0.018])).build().measurements[0]
        let svg = try #require(HTMLTrendChart.svg(record))
        #expect(count("<circle class=\"point past\"", in: svg) == 4)
        #expect(count("<circle class=\"point this-run regression\"", in: svg) == 1)
        #expect(count("<line class=\"baseline\"", in: svg) == 1)
        #expect(count("<rect class=\"allowed\"", in: svg) == 1)
        #expect(svg.contains("<title>baseline 20.0 ms</title>"))
        #expect(svg.contains("allowed: up to 120.0 ms; a regression above"))
        #expect(svg.contains("Time (seconds), average per run"), "the value axis names metric and unit")
        #expect(svg.contains(">2024-05-01</text>"), "the run axis starts at the first run's date")
        #expect(svg.contains(">this run</text>"))
        #expect(svg.contains("run run-3 · 2024-05-04T12:00:00.000Z · 18.0 ms (baseline then 20.0 ms)"))
        #expect(svg.contains("<title>this run · 318.0 ms · REGRESSION against 20.0 ms (+1490%)</title>"))
        // This run is drawn above the band's top: higher on the page is a smaller y.
        let thisY = try #require(svg.firstMatch(of: /this-run regression" cx="[0-9.]+" cy="([0-9.]+)"/).flatMap { Double($0.1) })
        let bandTop = try #require(svg.firstMatch(of: /rect class="allowed" x="[0-9.]+" y="([0-9.]+)"/).flatMap { Double($0.1) })
        #expect(thisY < bandTop)
        #expect(count("<polyline class=\"trend-line\" points=\"", in: svg) == 1)
    }

    @Test func anEarlierBaselineThatDiffersIsATickAndNothingToCompareIsNoChart() throws {
        var trend = Self.trend([0.019, 0.021])
        trend.runs[0].baseline = 0.015
        let record = Self.regressed(trend: trend).build().measurements[0]
        let svg = try #require(HTMLTrendChart.svg(record))
        #expect(count("<line class=\"baseline-then\"", in: svg) == 1, "only the run judged against another baseline")
        #expect(svg.contains("<title>baseline then 15.0 ms</title>"))

        // First time measured, no baseline: nothing to compare with, no chart (the table row still shows it).
        var alone = ReportBuilder()
        alone.measurement("M.P/testSort", average: 0.3, rsd: 1, values: [0.3, 0.3])
        alone.measurements[0].trend = PerformanceTrend(runs: [])
        #expect(HTMLTrendChart.svg(alone.build().measurements[0]) == nil)
        let html = HTMLWriter().render(alone.build())
        #expect(!html.contains("<svg class=\"trend\""))
        #expect(!html.contains("<div class=\"trends\">"))
        // A baseline alone is enough: this run against it.
        let judged = Self.regressed(trend: nil).build().measurements[0]
        let single = try #require(HTMLTrendChart.svg(judged))
        #expect(count("<circle class=\"point", in: single) == 1)
        #expect(!single.contains("<polyline"))
    }

    @Test func thePageDrawsTheTrendBelowItsTableRegressionsFirst() throws {
        var b = Self.regressed("M.P/testZ", trend: Self.trend([0.02, 0.021]))
        b.measurement("M.P/testA", average: 0.02, rsd: 1, values: [0.02, 0.02], hardwareClass: "Xeon × 8",
                      verdict: PerformanceVerdict(kind: .passed, baselineAverage: 0.02, change: 0, message: "ok",
                                                  regressionAbove: 0.12))
        b.measurements[1].trend = Self.trend([0.02])
        let html = HTMLWriter().render(b.build())
        let table = try #require(html.range(of: "<table class=\"performance\">"))
        let trends = try #require(html.range(of: "<div class=\"trends\">"))
        #expect(table.lowerBound < trends.lowerBound)
        #expect(count("<figure class=\"trend\">", in: html) == 2)
        let z = try #require(html.range(of: "<figcaption><code>M.P/testZ</code>"))
        let a = try #require(html.range(of: "<figcaption><code>M.P/testA</code>"))
        #expect(z.lowerBound < a.lowerBound, "the regression's chart comes first")
        #expect(html.contains("<code>M.P/testZ</code> · Time · 2 earlier runs · REGRESSION against 20.0 ms (+1490%)</figcaption>"))
        #expect(count("<script", in: html) == 0)
    }

    @Test func hostileNamesInATrendShowAsText() throws {
        let img = #""><img src=x onerror=alert(1)>"#
        var b = Self.regressed("M.P/\(img)", trend: PerformanceTrend(runs: [
            PerformanceTrend.Point(runID: "<script>alert(1)</script>", startedAt: Self.day, average: 0.02, baseline: 0.02),
        ]))
        b.measurements[0].measurement.metric = "<script>alert('metric')</script>\u{1B}]0;owned\u{07}"
        b.measurements[0].measurement.unit = img
        let record = b.build().measurements[0]
        let svg = try #require(HTMLTrendChart.svg(record))
        #expect(!svg.contains("<script"))
        #expect(!svg.contains("<img"))
        #expect(!svg.contains("\u{1B}"))
        #expect(svg.contains("&lt;script&gt;alert(&#39;metric&#39;)&lt;/script&gt;"))
        #expect(svg.contains("run &lt;script&gt;alert(1)&lt;/script&gt;"))
        let html = HTMLWriter().render(b.build())
        #expect(count("<script", in: html) == 0)
        #expect(!html.contains("<img"))
        #expect(html.contains("<figure class=\"trend\">"))
    }

    @Test func summaryMarkdownGivesARegressionsTrendOnOneLine() throws {
        var report = Self.regressed(trend: Self.trend([0.02, 0.021, 0.019])).build()
        report.measurements[0].verdict?.failsRun = true // summary.md lists the regressions that fail the run
        let md = MarkdownWriter().render(report)
        let line = try #require(md.split(separator: "\n").first { $0.contains("M.P/testSort") })
        #expect(line.contains("REGRESSION against 20.0 ms \\(\\+1490%\\) · trend ▁▁▁█ \\(3 earlier runs, then this one\\)"), "\(line)")
        // Without earlier runs, no trend.
        report.measurements[0].trend = PerformanceTrend(runs: [])
        let first = MarkdownWriter().render(report)
        #expect(first.contains("REGRESSION against 20.0 ms"))
        #expect(!first.contains("trend "))
    }

    @Test func theTrendRoundTripsAndAnOlderReportWithoutItStillReads() throws {
        let writer = JSONReportWriter()
        let report = Self.regressed(trend: Self.trend([0.02, 0.021])).build()
        let data = try writer.encode(report)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"trend\" : {"))
        #expect(text.contains("\"regressionAbove\" : 0.12"))
        #expect(text.contains("\"runID\" : \"run-1\""))
        #expect(text.contains("\"startedAt\" : \"2024-05-02T12:00:00.000Z\""))
        #expect(try JSONReportReader().decode(data) == report)
        // A report written before trends: no `trend`, no `regressionAbove`.
        let old = text.replacingOccurrences(of: #",\s*\"regressionAbove\" : 0.12"#, with: "", options: .regularExpression)
            .replacingOccurrences(of: #",\n *\"trend\" : \{[^}]*\[[^\]]*\][^}]*\}"#, with: "", options: .regularExpression)
        #expect(!old.contains("\"trend\""))
        #expect(!old.contains("regressionAbove"))
        let decoded = try JSONReportReader().decode(Data(old.utf8))
        #expect(decoded.measurements[0].trend == nil)
        #expect(decoded.measurements[0].verdict?.regressionAbove == nil)
        #expect(decoded.measurements[0].verdict?.kind == .regression)
        // Merged shards keep each measurement's trend.
        let merged = ReportMerger.merge([report]).report
        #expect(merged.measurements[0].trend == report.measurements[0].trend)
    }
}
