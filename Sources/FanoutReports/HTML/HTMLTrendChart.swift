import FanoutCore

/// A measurement's trend as an inline SVG chart, drawn from the report alone: one point per earlier run
/// (`circle.point.past`) and one for this run (`circle.point.this-run`, in its verdict's color), joined by a line;
/// the baseline as a line (`line.baseline`) with the band it allows shaded above it (`rect.allowed`, up to the
/// regression limit); each earlier run's own baseline, where it differed, as a tick at its point; the value axis
/// labelled in the metric's unit and the run axis with the first run's date. Every point has a `<title>` (run,
/// date, value), so hovering tells the numbers without any script.
enum HTMLTrendChart {
    static let width = 360.0, height = 160.0
    static let left = 70.0, right = 14.0, top = 24.0, bottom = 30.0

    /// The chart, or nil when there is nothing to compare this run with (no earlier run and no baseline).
    static func svg(_ record: MeasurementRecord) -> String? {
        let m = record.measurement
        let past = (record.trend?.runs ?? []).filter(\.average.isFinite)
        let current = m.meanOfValues
        let baseline = record.verdict?.baselineAverage.flatMap { $0.isFinite ? $0 : nil }
        let above = record.verdict?.regressionAbove.flatMap { $0.isFinite ? $0 : nil }
        guard current.isFinite, !past.isEmpty || baseline != nil else { return nil }

        // The value range holds every point, the baseline and the band, with a margin; never below 0 when nothing is.
        let shown = past.map(\.average) + past.compactMap(\.baseline) + [current] + [baseline, above].compactMap { $0 }
        var lo = shown.min() ?? current, hi = shown.max() ?? current
        if hi - lo < max(abs(hi), 1e-9) * 1e-6 {
            let pad = max(abs(hi) * 0.1, 1e-6)
            lo -= pad
            hi += pad
        }
        let margin = (hi - lo) * 0.1
        lo = lo >= 0 ? max(0, lo - margin) : lo - margin
        hi += margin
        let plotW = width - left - right, plotH = height - top - bottom
        let count = past.count + 1
        func x(_ i: Int) -> Double { count == 1 ? left + plotW / 2 : left + Double(i) / Double(count - 1) * plotW }
        func y(_ v: Double) -> Double { top + (1 - (v - lo) / (hi - lo)) * plotH }
        func n(_ v: Double) -> String { String(format1: v) }
        func value(_ v: Double) -> String { PerformanceText.value(v, unit: m.unit) }
        func e(_ text: String) -> String { HTMLEscaping.escape(text, singleLine: true) }

        let name = "\(m.test.description) · \(m.metric)"
        let description = "trend of \(name): \(past.count) earlier run\(past.count == 1 ? "" : "s") and this run"
        var out = "<svg class=\"trend\" viewBox=\"0 0 \(n(width)) \(n(height))\" width=\"\(n(width))\" "
            + "height=\"\(n(height))\" role=\"img\" aria-label=\"\(e(HTMLEscaping.clipped(description, to: 300)))\">"
            + "<title>\(e(HTMLEscaping.clipped(description, to: 300)))</title>\n"
        out += "<text class=\"axis-title\" x=\"\(n(left))\" y=\"14\">"
            + "\(e(HTMLEscaping.clipped(m.metric, to: 40))) (\(e(HTMLEscaping.clipped(m.unit, to: 20)))), average per run</text>\n"

        if let baseline {
            if let above, above > baseline {
                out += "<rect class=\"allowed\" x=\"\(n(left))\" y=\"\(n(y(above)))\" width=\"\(n(plotW))\" "
                    + "height=\"\(n(y(baseline) - y(above)))\"><title>allowed: up to \(e(value(above))); "
                    + "a regression above</title></rect>\n"
            }
            out += "<line class=\"baseline\" x1=\"\(n(left))\" y1=\"\(n(y(baseline)))\" x2=\"\(n(left + plotW))\" "
                + "y2=\"\(n(y(baseline)))\"><title>baseline \(e(value(baseline)))</title></line>\n"
        }
        // Axes, with the value range's ends and the baseline labelled.
        out += "<line class=\"axis\" x1=\"\(n(left))\" y1=\"\(n(top))\" x2=\"\(n(left))\" y2=\"\(n(top + plotH))\"/>"
            + "<line class=\"axis\" x1=\"\(n(left))\" y1=\"\(n(top + plotH))\" x2=\"\(n(left + plotW))\" y2=\"\(n(top + plotH))\"/>\n"
        var labels = [hi, lo]
        if let baseline, abs(y(baseline) - y(hi)) > 12, abs(y(baseline) - y(lo)) > 12 { labels.append(baseline) }
        for v in labels {
            out += "<text class=\"axis\" x=\"\(n(left - 4))\" y=\"\(n(y(v) + 4))\" text-anchor=\"end\">\(e(value(v)))</text>"
        }
        let axisY = n(top + plotH + 16)
        if let first = past.first {
            out += "<text class=\"axis\" x=\"\(n(x(0)))\" y=\"\(axisY)\" text-anchor=\"start\">"
                + "\(ISO8601Timestamp.string(from: first.startedAt).prefix(10))</text>"
        }
        out += "<text class=\"axis\" x=\"\(n(x(count - 1)))\" y=\"\(axisY)\" text-anchor=\"\(count == 1 ? "middle" : "end")\">"
            + "this run</text>\n"

        let points = (past.map(\.average) + [current]).enumerated().map { "\(n(x($0.offset))),\(n(y($0.element)))" }
        if count > 1 { out += "<polyline class=\"trend-line\" points=\"\(points.joined(separator: " "))\"/>\n" }
        for (i, p) in past.enumerated() {
            if let then = p.baseline, then.isFinite, then != baseline {
                out += "<line class=\"baseline-then\" x1=\"\(n(x(i) - 6))\" y1=\"\(n(y(then)))\" x2=\"\(n(x(i) + 6))\" "
                    + "y2=\"\(n(y(then)))\"><title>baseline then \(e(value(then)))</title></line>"
            }
            out += "<circle class=\"point past\" cx=\"\(n(x(i)))\" cy=\"\(n(y(p.average)))\" r=\"3.5\"><title>"
                + "run \(e(HTMLEscaping.clipped(p.runID, to: 100))) · \(ISO8601Timestamp.string(from: p.startedAt)) · "
                + "\(e(value(p.average)))\(p.baseline.map { " (baseline then \(e(value($0))))" } ?? "")</title></circle>\n"
        }
        let kind = record.verdict?.kind.rawValue ?? "recorded"
        let verdict = record.verdict.map { PerformanceFacts.short($0, unit: m.unit) } ?? "not judged"
        out += "<circle class=\"point this-run \(kind)\" cx=\"\(n(x(count - 1)))\" cy=\"\(n(y(current)))\" r=\"5\">"
            + "<title>this run · \(e(value(current))) · \(e(verdict))</title></circle>\n"
        return out + "</svg>"
    }
}
