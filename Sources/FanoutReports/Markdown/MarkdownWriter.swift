import FanoutCore

/// The run as Markdown for a CI job summary (GitHub's `$GITHUB_STEP_SUMMARY`, a merge request note): the verdict,
/// counts per destination, the failures grouped by cause in collapsible sections, flaky tests, performance
/// regressions, warnings and the timing line. Built from the RunReport alone.
///
/// GitHub refuses a step summary over 1 MiB, so the text stays under `byteLimit` by construction: sections are
/// added while they fit, and what did not fit is counted in a closing note that points at report.json.
/// Everything that came from a test or an agent is escaped for both Markdown and HTML (GitHub renders the HTML
/// tags Markdown allows) and stripped of terminal control sequences.
public struct MarkdownWriter: Sendable {
    public static let fileName = "summary.md"

    /// Bytes the summary may take (GitHub's cap is 1 MiB per step summary).
    public var byteLimit: Int
    /// Failure groups shown; the rest are counted.
    public var groupLimit: Int
    /// Tests listed in one group; the rest are counted.
    public var testsPerGroup: Int

    public init(byteLimit: Int = 1_000_000, groupLimit: Int = 50, testsPerGroup: Int = 20) {
        self.byteLimit = max(4_096, byteLimit)
        self.groupLimit = max(1, groupLimit)
        self.testsPerGroup = max(1, testsPerGroup)
    }

    public func render(_ report: RunReport) -> String {
        var out = Budget(limit: byteLimit - 1_024) // room for the closing note
        let counts = report.counts
        let failed = report.results.filter(\.needsAttention).count
        let regressions = PerformanceFacts.regressions(report).filter { $0.verdict?.failsRun == true }
        let passed = report.exitCode == 0
        let mark = passed ? "✅" : "❌"
        let verdict = passed ? "PASSED" : "FAILED"
        var headline = "## \(mark) Fanout: \(verdict) · \(counts.total) tests"
        if failed > 0 { headline += " · \(failed) need attention" }
        if !regressions.isEmpty { headline += " · \(regressions.count) performance regression\(regressions.count == 1 ? "" : "s")" }
        headline += " · exit \(report.exitCode)"
        if report.interrupted { headline += " · interrupted" }
        _ = out.add(headline + "\n\n")

        // Counts per destination.
        let anyMuted = counts.muted > 0
        var table = "| destination | passed | failed | crashed | timed out | not run | skipped | flaky |"
            + (anyMuted ? " muted failures |\n" : "\n")
        table += "|---|---:|---:|---:|---:|---:|---:|---:|" + (anyMuted ? "---:|\n" : "\n")
        for destination in report.destinations {
            let c = Counts(results: report.results.filter { $0.destination == destination })
            table += "| \(Self.escape(destination)) | \(c.passed) | \(c.failed) | \(c.crashed) | \(c.timedOut) | \(c.notRun) | \(c.skipped) | \(c.flaky) |"
                + (anyMuted ? " \(c.muted) |\n" : "\n")
        }
        _ = out.add(table + "\n")
        let t = report.timing
        let slots = report.agents.reduce(0) { $0 + $1.slots }
        let binding = BoundFacts.phrase(t, name: Self.escape).map { " (\($0))" } ?? ""
        _ = out.add("Wall \(formatSeconds(t.wall)) · makespan \(formatSeconds(t.makespan)) · lower bound "
            + "\(formatSeconds(t.lowerBound))\(binding) · \(String(format2: t.efficiency)) × LB · "
            + "\(report.agents.count) agent\(report.agents.count == 1 ? "" : "s"), \(slots) slot\(slots == 1 ? "" : "s")\n\n")
        if let cpu = Self.agentsCPU(report) { _ = out.add(cpu) }

        var omitted = 0
        // Failures, grouped by cause.
        let groups = FailureGroups.groups(report)
        if !groups.isEmpty {
            _ = out.add("### Failures: \(failed) test\(failed == 1 ? "" : "s") in \(groups.count) group\(groups.count == 1 ? "" : "s")\n\n")
            let units = Dictionary(report.units.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            for (index, group) in groups.enumerated() {
                guard index < groupLimit else { omitted += groups[index...].reduce(0) { $0 + $1.results.count }; break }
                var text = "<details\(index < 3 ? " open" : "")><summary><b>\(group.results.count) \(group.outcome.rawValue)</b> · "
                    + "<code>\(Self.html(group.signature))</code></summary>\n\n"
                for result in group.results.prefix(testsPerGroup) {
                    text += Self.item(result, unit: result.decidingAttempt.flatMap { units[$0.unit] },
                                      destinations: report.destinations.count, runID: report.runID)
                }
                if group.results.count > testsPerGroup { text += "- … and \(group.results.count - testsPerGroup) more\n" }
                text += "\n</details>\n\n"
                if !out.add(text) { omitted += groups[index...].reduce(0) { $0 + $1.results.count }; break }
            }
        }

        let flaky = report.results.filter { $0.outcome == .flaky }
        if !flaky.isEmpty {
            var text = "### Flaky: \(flaky.count) test\(flaky.count == 1 ? "" : "s") failed, then passed on a retry\n\n"
            for r in flaky.prefix(testsPerGroup) {
                let flakes = r.earlierFailedAttempts.count
                text += "- `\(Self.code(r.id.description))`\(Self.place(r, destinations: report.destinations.count)) · "
                    + "\(flakes) failed attempt\(flakes == 1 ? "" : "s") before the pass"
                    + (r.flakeScore.map { " · " + Self.escape($0.summary) } ?? "") + "\n"
            }
            if flaky.count > testsPerGroup { text += "- … and \(flaky.count - testsPerGroup) more\n" }
            if !out.add(text + "\n") { omitted += flaky.count }
        }

        if let hunt = report.repeatRun {
            let failing = ReportFacts.failedInSomeRepetition(report)
            var text = "### Repeat: \(hunt.repetitions) repetitions (seed \(hunt.seed)\(hunt.untilFailure ? ", until the first failure" : "")), "
                + "\(failing.count) test\(failing.count == 1 ? "" : "s") failed in some repetition\n\n"
            if let first = hunt.firstFailure {
                text += "First failure: `\(Self.code(first.test.description))` in repetition \(first.repetition) on "
                    + Self.escape(first.agent) + (first.seed.map { ", `FANOUT_SEED=\($0)`" } ?? "") + "\n\n"
            }
            for r in failing.prefix(testsPerGroup) {
                text += "- `\(Self.code(r.id.description))`\(Self.place(r, destinations: report.destinations.count)) · "
                    + Self.escape(r.repeats?.summary ?? "") + "\n"
            }
            if !out.add(text + "\n") { omitted += failing.count }
        }

        if let (heading, lines) = ReportFacts.selective(report) {
            var text = "### \(Self.escape(heading))\n\n"
            for line in lines.prefix(groupLimit) {
                text += "- `\(Self.code(line.target))` · \(Self.escape(line.text))\n"
            }
            if lines.count > groupLimit { text += "- … and \(lines.count - groupLimit) more\n" }
            _ = out.add(text + "\n")
        }

        let (muted, quarantineSkipped) = ReportFacts.quarantined(report)
        if !muted.isEmpty || !quarantineSkipped.isEmpty {
            let failing = muted.filter(\.outcome.isFailure).count
            var text = "### Quarantined: \(muted.count) muted (\(failing) failed without failing the run), "
                + "\(quarantineSkipped.count) skipped\n\n"
            let units = Dictionary(report.units.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            let listed = muted + quarantineSkipped
            for r in listed.prefix(groupLimit) {
                let what = ReportFacts.quarantinedOutcome(r, unit: r.decidingAttempt.flatMap { units[$0.unit] })
                text += "- `\(Self.code(r.id.description))`\(Self.place(r, destinations: report.destinations.count)) · "
                    + Self.escape(what) + (r.quarantine.map { " · " + Self.escape(ReportFacts.quarantineLine($0)) } ?? "")
                    + "\n"
            }
            if listed.count > groupLimit { text += "- … and \(listed.count - groupLimit) more\n" }
            if !out.add(text + "\n") { omitted += listed.count }
        }

        if !regressions.isEmpty {
            var text = "### Performance regressions\n\n"
            for r in regressions {
                text += "- `\(Self.code(r.measurement.test.description))` [\(Self.escape(r.destination))] "
                    + Self.escape(r.verdict.map { PerformanceFacts.short($0, unit: r.measurement.unit) } ?? "")
                    + (PerformanceFacts.trendLine(r).map { " · " + Self.escape($0) } ?? "") + "\n"
            }
            if !out.add(text + "\n") { omitted += regressions.count }
        }

        if !report.warnings.isEmpty {
            var text = "### Warnings\n\n"
            for w in report.warnings { text += "- " + Self.escape(w) + "\n" }
            if !out.add(text + "\n") { omitted += report.warnings.count }
        }

        var closing = "<sub>Fanout \(Self.escape(report.fanoutVersion)) · run \(Self.escape(report.runID))"
        if omitted > 0 {
            closing = "_\(omitted) more entr\(omitted == 1 ? "y is" : "ies are") not shown: a job summary is capped at "
                + "\(byteLimit / 1_000) kB. Every test is in report.json and junit.xml._\n\n" + closing
        }
        return out.text + closing + "</sub>\n"
    }

    /// `CPU per agent: local 2 m 50 s of CPU on 2 cores, busy 96 % · …`, when some agent's CPU was measured (at most
    /// `agentLimit` agents, the busiest first).
    static func agentsCPU(_ report: RunReport, agentLimit: Int = 12) -> String? {
        let measured = report.agents.filter { $0.cpuSeconds != nil }
        guard !measured.isEmpty else { return nil }
        let ranked = measured.sorted(byKey: { $0.cpuSeconds ?? 0 }, descending: true)
        var parts = ranked.prefix(agentLimit).compactMap { a in BoundFacts.agentCPU(a).map { "\(escape(a.name)) \($0)" } }
        if ranked.count > agentLimit { parts.append("… and \(ranked.count - agentLimit) more") }
        return "CPU per agent: " + parts.joined(separator: " · ") + "\n\n"
    }

    /// One failing test: id, place, location and its first lines.
    static func item(_ result: TestResult, unit: UnitReport?, destinations: Int, runID: String = "") -> String {
        let attempt = result.decidingAttempt
        var text = "- `\(code(result.id.description))`\(place(result, destinations: destinations))"
        if let location = attempt?.failingIssues.first?.location ?? attempt?.issues.first?.location {
            text += " · `\(code(location.description))`"
        }
        if let unit { text += " · unit \(unit.id) on \(escape(unit.agent)) slot \(unit.slot)" }
        let message = ReportFacts.headline(of: attempt, outcome: result.outcome, unit: unit)
        let lines = message.split(separator: "\n", omittingEmptySubsequences: true).prefix(4)
        for line in lines { text += "\n  > " + escape(String(line.prefix(500))) }
        let tries = result.attempts.count
        if let order = ReportFacts.orderLine(result, runID: runID) {
            text += "\n  > " + escape(order)
        } else if tries > 1 {
            text += "\n  > (\(tries) attempts, every one failed)"
        }
        if let score = result.flakeScore { text += "\n  > " + escape(score.summary) }
        return text + "\n"
    }

    static func place(_ result: TestResult, destinations: Int) -> String {
        destinations > 1 ? " [\(escape(result.destination))]" : ""
    }

    /// Text for inside backticks: no backtick can end the span early, no control characters, one line.
    static func code(_ text: String) -> String {
        TextSanitizer.terminalSafe(text, singleLine: true).replacingOccurrences(of: "`", with: "'")
    }

    /// Text for inside an HTML block (`<details>`/`<summary>` lines, where GitHub applies no Markdown, so a backslash
    /// would show): the page's own escaping, on one line.
    static func html(_ text: String) -> String { HTMLEscaping.escape(text, singleLine: true) }

    /// Text from a test or an agent as Markdown that shows it literally: Markdown's punctuation backslash-escaped,
    /// then the HTML escaping (terminal controls and bidi marks neutralised, `& < > " '` as entities), one line.
    public static func escape(_ text: String) -> String {
        var marked = ""
        for ch in TextSanitizer.terminalSafe(text, singleLine: true) {
            switch ch {
            case "\\", "`", "*", "_", "{", "}", "[", "]", "(", ")", "#", "+", "-", "!", "|", "~":
                marked += "\\" + String(ch)
            default: marked.append(ch)
            }
        }
        return html(marked)
    }

    /// Text that stops growing at a byte limit: a section is added whole or not at all.
    struct Budget {
        let limit: Int
        var text = ""
        var bytes = 0

        mutating func add(_ section: String) -> Bool {
            let size = section.utf8.count
            guard bytes + size <= limit else { return false }
            text += section
            bytes += size
            return true
        }
    }
}

/// GitHub Actions workflow commands for the first failures: each shows on the file and line in the pull request.
public enum GitHubAnnotations {
    /// `::error file=…,line=…,title=…::message` for up to `limit` failures with a location (GitHub shows at most 10
    /// error annotations of a step). Paths under `workspace` are made relative to it, as GitHub expects.
    public static func errors(_ report: RunReport, workspace: String?, limit: Int = 10) -> [String] {
        var lines: [String] = []
        let units = Dictionary(report.units.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for result in report.results where result.outcome.isFailure {
            guard lines.count < limit else { break }
            let attempt = result.decidingAttempt
            guard let issue = attempt?.failingIssues.first(where: { $0.location != nil }), let location = issue.location else { continue }
            var file = location.file
            if let workspace, !workspace.isEmpty {
                let prefix = workspace.hasSuffix("/") ? workspace : workspace + "/"
                if file.hasPrefix(prefix) { file.removeFirst(prefix.count) }
            }
            let message = ReportFacts.headline(of: attempt, outcome: result.outcome, unit: attempt.flatMap { units[$0.unit] })
            let title = "\(result.id) \(result.outcome.rawValue)" + (report.destinations.count > 1 ? " [\(result.destination)]" : "")
            lines.append("::error file=\(property(file)),line=\(location.line),title=\(property(title))::\(data(message))")
        }
        return lines
    }

    /// The escaping of a command's message (GitHub's toolkit: `%`, CR and LF), after stripping control sequences.
    static func data(_ text: String) -> String {
        TextSanitizer.strippingANSI(text)
            .replacingOccurrences(of: "%", with: "%25")
            .replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    /// The escaping of a property value: the message's, plus `:` and `,`, which end a property.
    static func property(_ text: String) -> String {
        data(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }
}
