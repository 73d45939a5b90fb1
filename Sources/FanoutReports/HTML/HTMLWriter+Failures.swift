import FanoutCore

/// The page's failures: grouped by cause, each test with its issues, place, attempts, agent and unit log.
extension HTMLWriter {
    func failures(_ report: RunReport, units: [Int: UnitReport]) -> String {
        let groups = FailureGroups.groups(report)
        guard !groups.isEmpty else { return "<section id=\"failures\">\n<h2>Failures</h2>\n<p>None.</p>\n</section>\n" }
        let total = groups.reduce(0) { $0 + $1.results.count }
        var out = "<section id=\"failures\">\n<h2>Failures: \(total) test\(total == 1 ? "" : "s") in \(groups.count) "
            + "group\(groups.count == 1 ? "" : "s")</h2>\n"
        var body = ""
        var shown = 0, bytes = 0, listed = 0
        // A unit's log is shown once, with its first failing test; the others link to it (many failures of one
        // unit would repeat the same log).
        var logShownWith: [Int: (anchor: String, test: String)] = [:]
        for (index, group) in groups.enumerated() {
            body += "<details class=\"group\"\(index < 3 ? " open" : "")><summary><b>\(group.results.count) "
                + "\(group.outcome.rawValue)</b> · <code>\(e(group.signature, line: true))</code></summary>\n<ul class=\"tests\">\n"
            for result in group.results {
                if shown < fullFailures, bytes < failureBytes {
                    let entry = self.entry(result, anchor: "f\(shown)", report: report, units: units, logShownWith: &logShownWith)
                    bytes += entry.utf8.count
                    shown += 1
                    body += entry
                } else {
                    listed += 1
                    body += "<li class=\"brief\"><code>\(e(result.id.description, line: true))</code>"
                        + "\(place(result, report)) · \(result.outcome.rawValue)</li>\n"
                }
            }
            body += "</ul>\n</details>\n"
        }
        if listed > 0 {
            out += "<p class=\"note\">The first \(shown) failures are shown in full; \(listed) more are listed by id only. "
                + "Every test, with its messages and log, is in report.json.</p>\n"
        }
        return out + body + "</section>\n"
    }

    /// One failing test in full: where it ran, every issue, diagnostics, attempts and the unit's log.
    func entry(_ result: TestResult, anchor: String, report: RunReport, units: [Int: UnitReport],
                       logShownWith: inout [Int: (anchor: String, test: String)]) -> String {
        let attempt = result.decidingAttempt
        let unit = attempt.flatMap { units[$0.unit] }
        var out = "<li class=\"test \(result.outcome.rawValue)\" id=\"\(anchor)\"><div class=\"tid\"><code>\(e(result.id.description, line: true))</code> "
            + "<span class=\"badge \(result.outcome.rawValue)\">\(result.outcome.rawValue)</span>"
        out += " · destination \(e(result.destination, line: true))"
        if let location = attempt?.failingIssues.first?.location ?? attempt?.issues.first?.location {
            out += " · <code>\(e(location.description, line: true))</code>"
        }
        if let unit {
            out += " · unit \(unit.id) on \(e(unit.agent, line: true)) slot \(unit.slot)"
        } else if let attempt {
            out += " · unit \(attempt.unit) on \(e(attempt.agent, line: true))"
        }
        out += "</div>\n"

        // The full message: every issue of the deciding attempt, or the reason it did not run.
        let issues = attempt?.issues ?? []
        let message = issues.isEmpty || result.outcome == .notRun
            ? ReportFacts.headline(of: attempt, outcome: result.outcome, unit: unit)
            : issues.map(ReportFacts.line(for:)).joined(separator: "\n")
        out += "<pre class=\"message\">\(e(HTMLEscaping.clipped(message, to: Self.textLimit)))</pre>\n"
        if let order = ReportFacts.orderLine(result, runID: report.runID) {
            out += "<p class=\"flake\">\(e(order, line: true))</p>\n"
        }
        // Whether the history says this failure is likely a flake.
        if let score = result.flakeScore { out += "<p class=\"flake\">\(e(score.summary, line: true))</p>\n" }

        if let files = attempt?.attachments, !files.isEmpty {
            // Paths relative to the report folder, as written beside this page; images are shown, other files linked.
            out += "<div class=\"attachments\">"
            for path in files {
                let name = e(String(path.split(separator: "/").last ?? ""), line: true)
                let lower = path.lowercased()
                if [".png", ".jpg", ".jpeg", ".gif", ".heic"].contains(where: lower.hasSuffix) {
                    out += "<a href=\"\(e(path, line: true))\"><img src=\"\(e(path, line: true))\" alt=\"\(name)\" loading=\"lazy\"></a>"
                } else {
                    out += "<a href=\"\(e(path, line: true))\">\(name)</a> "
                }
            }
            out += "</div>\n"
        }
        if let diagnostics = attempt?.diagnostics, !diagnostics.isEmpty {
            out += "<details class=\"diagnostics\" open><summary>Diagnostics</summary>\(head(diagnostics, lines: diagnosticsLines))</details>\n"
        }
        if result.attempts.count > 1 {
            out += "<details class=\"attempts\"><summary>\(result.attempts.count) attempts</summary><ol>\n"
            for a in result.attempts {
                let headline = a.outcome.isFailure || a.outcome == .notRun
                    ? " · " + e(HTMLEscaping.clipped(ReportFacts.headline(of: a, outcome: a.outcome, unit: units[a.unit]), to: 500), line: true)
                    : ""
                out += "<li>\(a.outcome.rawValue) in \(formatSeconds(a.duration)) · unit \(a.unit) on \(e(a.agent, line: true))\(headline)</li>\n"
            }
            out += "</ol></details>\n"
        }
        if let unit, let first = logShownWith[unit.id] {
            out += "<p class=\"note\">Unit \(unit.id)&#39;s log is shown with <a href=\"#\(first.anchor)\">\(first.test)</a>.</p>\n"
        } else if let unit {
            logShownWith[unit.id] = (anchor, e(result.id.description, line: true))
            out += "<details class=\"log\"><summary>Unit \(unit.id) log (\(e(unit.agent, line: true)) slot \(unit.slot), "
                + "\(unit.testCount) tests, \(formatSeconds(unit.duration)), \(e(unit.ending, line: true))"
                + (unit.cpuSeconds.map { ", CPU \(BoundFacts.cpuSeconds($0))" } ?? "")
                + (unit.peakMemoryBytes.map { ", peak memory \(BoundFacts.bytes($0))" } ?? "") + ")</summary>"
                + "<p class=\"command\"><code>\(e(HTMLEscaping.clipped(unit.command, to: Self.lineLimit * 2), line: true))</code></p>"
                + tail(unit.log, lines: logLines) + "</details>\n"
        }
        return out + "</li>\n"
    }
}
