import FanoutCore

/// The run's units as an inline SVG Gantt chart: one row per agent slot, one `<rect class="unit …" data-unit="ID">`
/// per unit, from its start to its end on the run's clock, with the predicted end and the lower bound as lines.
enum HTMLTimeline {
    /// How a unit ended, as the CSS class of its bar: `passed`, `failed`, `crashed` (signal, crash exit, time-out),
    /// `handed-over` and `twin-stopped` (Fanout stopped it for the run's good: work stealing, or its twin finished
    /// first; calm colours, as nothing went wrong), `requeued` (agent lost, failed to start, cancelled).
    static func endingClass(_ ending: String) -> String {
        if let stop = UnitStop(ending: ending) { return stop.rawValue }
        if ending == "exit 0" { return "passed" }
        if ending.hasPrefix("timed out") || ending.hasPrefix("killed by") || ending.hasPrefix("signal") { return "crashed" }
        if ending.hasPrefix("exit ") { return ending.contains("(") ? "crashed" : "failed" }
        return "requeued"
    }

    /// The bar's classes: `unit`, `stolen` when it ran tests taken over from another unit, then its ending class.
    /// The stolen colour shows only on a unit that passed: one that failed or crashed keeps its alarm colour.
    static func classes(_ unit: UnitReport) -> String {
        "unit" + (unit.takenFrom != nil ? " stolen" : "") + " " + endingClass(unit.ending)
    }

    static func svg(_ report: RunReport) -> String {
        let units = report.units
        guard !units.isEmpty else { return "<p class=\"note\">No unit ran.</p>\n" }
        // Rows: agents in report order, then any agent only the units name, each slot once.
        var agentOrder: [String: Int] = [:]
        for (i, a) in report.agents.enumerated() where agentOrder[a.name] == nil { agentOrder[a.name] = i }
        struct Row: Hashable { var agent: String; var slot: Int }
        let rows = Set(units.map { Row(agent: $0.agent, slot: $0.slot) }).sorted {
            let a = agentOrder[$0.agent] ?? Int.max, b = agentOrder[$1.agent] ?? Int.max
            return (a, $0.agent, $0.slot) < (b, $1.agent, $1.slot)
        }
        let rowIndex = Dictionary(uniqueKeysWithValues: rows.enumerated().map { ($0.element, $0.offset) })

        let origin = units.map(\.startedAt).min() ?? 0
        let end = units.map { $0.startedAt + max(0, $0.duration) }.max() ?? origin
        let span = max(end - origin, report.plan.predictedMakespan, report.timing.lowerBound, 0.001)
        let label = 150.0, width = 1000.0, rowHeight = 18.0, top = 4.0, axis = 18.0
        let plot = width - label - 10
        let height = top + Double(rows.count) * rowHeight + axis
        func x(_ t: Double) -> Double { label + max(0, min(1, t / span)) * plot }
        func n(_ v: Double) -> String { String(format1: v) }

        var out = "<svg class=\"gantt\" viewBox=\"0 0 \(n(width)) \(n(height))\" width=\"100%\" role=\"img\" "
            + "aria-label=\"timeline of \(units.count) units on \(rows.count) slots\">\n"
        for (i, row) in rows.enumerated() {
            let y = top + Double(i) * rowHeight
            if i % 2 == 1 {
                out += "<rect class=\"band\" x=\"0\" y=\"\(n(y))\" width=\"\(n(width))\" height=\"\(n(rowHeight))\"/>"
            }
            out += "<text class=\"row\" x=\"4\" y=\"\(n(y + 13))\">"
                + HTMLEscaping.escape(HTMLEscaping.clipped(row.agent, to: 18), singleLine: true) + " #\(row.slot)</text>\n"
        }
        // A bar's tooltip names its suites; with thousands of units, only the first few each, to bound the page.
        let suiteLimit = units.count > 1_000 ? 3 : 10
        for unit in units {
            guard let i = rowIndex[Row(agent: unit.agent, slot: unit.slot)] else { continue }
            let x0 = x(unit.startedAt - origin)
            let w = max(1, x(unit.startedAt - origin + max(0, unit.duration)) - x0)
            let y = top + Double(i) * rowHeight + 2
            var title = "unit \(unit.id) · \(unit.testCount) test\(unit.testCount == 1 ? "" : "s") · "
                + "\(formatSeconds(unit.duration)) (estimate \(formatSeconds(unit.estimate))) · \(unit.ending)"
            if let from = unit.takenFrom { title += " · took over tests of unit \(from)" }
            if let handed = unit.handedOver, handed > 0 { title += " · handed \(handed) tests over" }
            if report.destinations.count > 1 { title += " · \(unit.destination)" }
            if let cpu = unit.cpuSeconds { title += " · CPU \(BoundFacts.cpuSeconds(cpu))" }
            if let memory = unit.peakMemoryBytes { title += " · peak memory \(BoundFacts.bytes(memory))" }
            if let wait = unit.cpuWaitSeconds, wait >= 0.05 { title += " · waited \(formatSeconds(wait)) for a core" }
            let suites = unit.suites.prefix(suiteLimit).joined(separator: "\n")
                + (unit.suites.count > suiteLimit ? "\n… and \(unit.suites.count - suiteLimit) more" : "")
            out += "<rect class=\"\(classes(unit))\" data-unit=\"\(unit.id)\" x=\"\(n(x0))\" y=\"\(n(y))\" "
                + "width=\"\(n(w))\" height=\"\(n(rowHeight - 4))\"><title>"
                + HTMLEscaping.escape(title) + "\n" + HTMLEscaping.escape(HTMLEscaping.clipped(suites, to: 1_000))
                + "</title></rect>\n"
        }
        let bottom = top + Double(rows.count) * rowHeight
        for (cls, t, name) in [("predicted", report.plan.predictedMakespan, "predicted end"),
                               ("lower-bound", report.timing.lowerBound, "lower bound")] where t > 0 && t.isFinite {
            let lx = n(x(t))
            out += "<line class=\"\(cls)\" x1=\"\(lx)\" y1=\"\(n(top))\" x2=\"\(lx)\" y2=\"\(n(bottom))\">"
                + "<title>\(name) \(formatSeconds(t))</title></line>\n"
        }
        // Axis: start, middle and end of the span.
        for f in [0.0, 0.5, 1.0] {
            let anchor = f == 0 ? "start" : f == 1 ? "end" : "middle"
            out += "<text class=\"axis\" x=\"\(n(x(span * f)))\" y=\"\(n(bottom + 13))\" text-anchor=\"\(anchor)\">"
                + "\(formatSeconds(span * f))</text>"
        }
        return out + "\n</svg>\n"
    }

    /// A small line of the values (a measurement's 10 samples), lowest at the bottom.
    static func sparkline(_ values: [Double], unit: String) -> String {
        let finite = values.filter(\.isFinite)
        guard finite.count > 1, let lo = finite.min(), let hi = finite.max() else { return "" }
        let w = 100.0, h = 20.0
        let points = finite.enumerated().map { i, v -> String in
            let px = Double(i) / Double(finite.count - 1) * w
            let py = hi > lo ? h - 1 - (v - lo) / (hi - lo) * (h - 2) : h / 2
            return "\(String(format1: px)),\(String(format1: py))"
        }.joined(separator: " ")
        let title = finite.map { PerformanceText.value($0, unit: unit) }.joined(separator: ", ")
        return "<svg class=\"spark\" viewBox=\"0 0 100 20\" width=\"100\" height=\"20\"><title>"
            + HTMLEscaping.escape(title) + "</title><polyline points=\"\(points)\"/></svg>"
    }
}
