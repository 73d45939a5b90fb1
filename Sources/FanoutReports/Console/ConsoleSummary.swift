import FanoutCore

/// The end-of-run summary for a terminal, rendered from a `RunReport`: enough to triage every failure without
/// re-running (each issue's `file:line` and message, the tail of a crash's backtrace, where it ran), how the run used
/// its slots (predicted versus actual, the makespan against the lower bound), the slowest classes with their estimates,
/// and a verdict. With several destinations, their counts and times side by side and every test whose outcome
/// differs between them (those failing on only some called out); measurements with their performance verdicts, and
/// regressions named again above the final verdict. Lines are at most `width` columns; with `color` off there is not
/// one escape code in the output.
///
/// The last line is always plain, `Fanout: 120 passed, 2 failed, 3 skipped` (plus `, N not run` when some did not
/// run), for scripts and for people scanning CI logs.
public struct ConsoleSummary: Sendable {
    public var color: Bool
    public var width: Int
    /// Rows of the slowest-classes table.
    public var slowestClasses: Int
    /// Lines of a crash's or time-out's diagnostics (the end of the backtrace) shown under it.
    public var diagnosticLines: Int

    public init(color: Bool = false, width: Int = 100, slowestClasses: Int = 10, diagnosticLines: Int = 15) {
        self.color = color
        self.width = max(40, width)
        self.slowestClasses = slowestClasses
        self.diagnosticLines = diagnosticLines
    }

    public func render(_ report: RunReport) -> String {
        var out = Output(width: width, style: ConsoleStyle(color: color))
        let context = Context(report)
        header(report, context, &out)
        counts(report, context, &out)
        sideBySide(report, context, &out)
        slowest(report, context, &out)
        timing(report, &out)
        measurements(report, context, &out)
        warnings(report, &out)
        flaky(report, context, &out)
        quarantined(report, context, &out)
        selective(report, &out)
        repeats(report, context, &out)
        failures(report, context, &out)
        verdict(report, &out)
        return out.lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Sections

    private func header(_ report: RunReport, _ context: Context, _ out: inout Output) {
        let destinations = context.destinations
        let slots = report.plan.slots > 0 ? report.plan.slots : report.agents.reduce(0) { $0 + $1.slots }
        let agents = report.agents.count
        out.wrapped("Fanout run \(report.runID) · \(destinations.count == 1 ? "destination" : "destinations") "
            + "\(destinations.joined(separator: ", ")) · \(agents) agent\(agents == 1 ? "" : "s"), "
            + "\(slots) slot\(slots == 1 ? "" : "s")", style: out.style.bold)
        if !report.agents.isEmpty {
            let list = report.agents.map { agent in
                let host = agent.host.map { " \($0)" } ?? ""
                return "\(agent.name) (\(agent.transport)\(host), \(agent.slots) slot\(agent.slots == 1 ? "" : "s"))"
            }
            out.wrapped("agents: " + list.joined(separator: ", "), indent: "  ", continuation: "    ",
                        style: out.style.dim)
        }
        out.wrapped("fanout \(report.fanoutVersion) · product \(report.product.bundle)", indent: "  ",
                    continuation: "    ", style: out.style.dim)
        if let seed = report.shuffleSeed {
            out.wrapped("shuffled: classes dealt to processes from seed \(seed) (--shuffle \(seed) with the same slots deals them again)",
                        indent: "  ", continuation: "    ", style: out.style.dim)
        }
        if report.interrupted {
            out.wrapped("Interrupted: the run was stopped before it finished; this is what had run by then.",
                        style: out.style.boldYellow)
        }
    }

    private func counts(_ report: RunReport, _ context: Context, _ out: inout Output) {
        out.blank()
        out.plain(Self.countsLine(report.counts, style: out.style, total: true))
        if context.destinations.count > 1 {
            for destination in context.destinations {
                let counts = Counts(results: report.results.filter { $0.destination == destination })
                let line = Self.countsLine(counts, style: ConsoleStyle(color: false), total: true)
                out.wrapped("\(destination): " + line, indent: "  ", continuation: "    ")
            }
        }
    }

    /// `125 tests: 118 passed, 2 failed, 1 crashed, 3 skipped, 1 flaky`; the parts add up to the total (flaky tests
    /// are not in "passed"); zero parts other than passed and failed are left out.
    static func countsLine(_ c: Counts, style: ConsoleStyle, total: Bool) -> String {
        var parts = [style.green("\(c.passed) passed"), c.failed > 0 ? style.red("\(c.failed) failed") : "0 failed"]
        if c.crashed > 0 { parts.append(style.red("\(c.crashed) crashed")) }
        if c.timedOut > 0 { parts.append(style.red("\(c.timedOut) timed out")) }
        if c.notRun > 0 { parts.append(style.yellow("\(c.notRun) not run")) }
        if c.skipped > 0 { parts.append(style.yellow("\(c.skipped) skipped")) }
        if c.flaky > 0 { parts.append(style.yellow("\(c.flaky) flaky")) }
        if c.muted > 0 { parts.append(style.yellow("\(c.muted) failed but muted")) }
        let head = total ? "\(c.total) test\(c.total == 1 ? "" : "s"): " : ""
        return head + parts.joined(separator: ", ")
    }

    /// With several destinations: per-destination counts and times in one table, then every test whose outcome
    /// differs between destinations, its outcome on each side by side; tests that fail on only some destinations
    /// are called out first.
    private func sideBySide(_ report: RunReport, _ context: Context, _ out: inout Output) {
        let destinations = context.destinations
        guard destinations.count > 1 else { return }
        out.blank()
        out.plain(out.style.bold("Destinations") + " (\(destinations.count), side by side)")

        // Per destination: counts, the sum of its tests' times, and the span of its units.
        let headers = ["destination", "tests", "passed", "failed", "skipped", "not run", "test time", "span"]
        var rows: [[String]] = []
        for destination in destinations {
            let results = report.results.filter { $0.destination == destination }
            let c = Counts(results: results)
            let testTime = results.reduce(0) { $0 + ($1.duration.isFinite ? max(0, $1.duration) : 0) }
            let units = report.units.filter { $0.destination == destination }
            let span = (units.map { $0.startedAt + $0.duration }.max() ?? 0) - (units.map(\.startedAt).min() ?? 0)
            rows.append([destination, String(c.total), String(c.passed + c.flaky), String(c.failures),
                         String(c.skipped), String(c.notRun), ClassTable.seconds(testTime),
                         units.isEmpty ? "—" : ClassTable.seconds(max(0, span))])
        }
        let nameWidth = min(24, max(ConsoleText.width(headers[0]), destinations.map { ConsoleText.width($0) }.max() ?? 0))
        let widths = [nameWidth] + headers.indices.dropFirst().map { column in
            ([headers[column]] + rows.map { $0[column] }).map { ConsoleText.width($0) }.max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            "  " + cells.enumerated().map { i, cell in
                i == 0 ? ConsoleText.padRight(ConsoleText.truncateEnd(TextSanitizer.terminalSafe(cell), to: widths[0]),
                                              to: widths[0])
                    : ConsoleText.padLeft(cell, to: widths[i])
            }.joined(separator: "  ")
        }
        for cells in [headers] + rows { out.wrapped(line(cells), indent: "", continuation: "    ") }

        // Tests run on two or more destinations whose outcomes differ.
        var byTest: [TestID: [String: Outcome]] = [:]
        for r in report.results { byTest[r.id, default: [:]][r.destination] = r.outcome }
        let differing = byTest.filter { $0.value.count > 1 && Set($0.value.values).count > 1 }
        let failsOnSome = Set(differing.filter { entry in
            entry.value.values.contains(where: \.isFailure) && entry.value.values.contains(where: { !$0.isFailure })
        }.keys)
        guard !differing.isEmpty else {
            out.plain(out.style.dim("  Every test has the same outcome on every destination it ran on."))
            return
        }
        out.blank()
        let count = failsOnSome.count
        var callout = count > 0
            ? out.style.boldRed("\(count) test\(count == 1 ? "" : "s") fail\(count == 1 ? "s" : "") on only some destinations")
            : "No test fails on only some destinations"
        let others = differing.count - count
        if others > 0 {
            callout += "; \(others) other\(others == 1 ? " differs" : "s differ") (skipped, flaky or not run on some)"
        }
        out.plain("  " + callout + ":")
        let ordered = differing.keys.sorted { a, b in
            let fa = failsOnSome.contains(a), fb = failsOnSome.contains(b)
            return fa != fb ? fa : a < b
        }
        let shown = ordered.prefix(25)
        let labelWidth = 9
        let columnWidths = destinations.map { max(labelWidth, min(16, ConsoleText.width($0))) }
        let testWidth = width - 2 - columnWidths.reduce(0) { $0 + $1 + 2 }
        let wantedTest = max(4, shown.map { ConsoleText.width($0.description) }.max() ?? 0)
        if testWidth >= 24 {
            let testColumn = min(wantedTest, testWidth)
            var header = "  " + ConsoleText.padRight("test", to: testColumn)
            for (d, w) in zip(destinations, columnWidths) {
                header += "  " + ConsoleText.padRight(ConsoleText.truncateEnd(TextSanitizer.terminalSafe(d), to: w), to: w)
            }
            out.plain(header.trimmingTrailingSpaces())
            for test in shown {
                var row = "  " + ConsoleText.padRight(
                    ConsoleText.truncateMiddle(TextSanitizer.terminalSafe(test.description), to: testColumn), to: testColumn)
                for (d, w) in zip(destinations, columnWidths) {
                    let outcome = byTest[test]?[d]
                    let label = outcome.map(Self.label) ?? "—"
                    let padded = ConsoleText.padRight(label, to: w)
                    row += "  " + (outcome.map { out.style.outcome($0, label) + String(padded.dropFirst(label.count)) } ?? padded)
                }
                out.plain(row.trimmingTrailingSpaces())
            }
        } else {
            // Too many destinations for columns: one line per test.
            for test in shown {
                let parts = destinations.map { d in "\(d) \(byTest[test]?[d].map(Self.label) ?? "—")" }
                out.wrapped("\(test): " + parts.joined(separator: " · "), indent: "  ", continuation: "      ")
            }
        }
        if ordered.count > shown.count {
            out.plain(out.style.dim("  … and \(ordered.count - shown.count) more (report.json has every result)"))
        }
    }

    private func slowest(_ report: RunReport, _ context: Context, _ out: inout Output) {
        guard !report.classes.isEmpty, slowestClasses > 0 else { return }
        let rows = report.classes.sorted { a, b in
            switch (a.actual, b.actual) {
            case let (x?, y?) where x != y: x > y
            case (.some, nil): true
            case (nil, .some): false
            default: (a.suite, a.destination) < (b.suite, b.destination)
            }
        }.prefix(slowestClasses)
        out.blank()
        out.plain(out.style.bold("Slowest classes") + " (top \(rows.count) of \(report.classes.count), "
            + "by actual time)")
        let table = ClassTable(rows: Array(rows), showDestination: context.destinations.count > 1, width: width)
        for line in table.lines() { out.plain(line) }
    }

    private func timing(_ report: RunReport, _ out: inout Output) {
        let t = report.timing, plan = report.plan
        out.blank()
        out.plain(out.style.bold("Timing"))
        out.wrapped("makespan     \(formatSeconds(t.makespan)) actual, \(formatSeconds(plan.predictedMakespan)) "
            + "predicted (plan: lower bound \(formatSeconds(plan.lowerBound)), \(formatSeconds(plan.totalEstimate)) "
            + "of work on \(plan.slots) slot\(plan.slots == 1 ? "" : "s"))",
            indent: "  ", continuation: "               ")
        out.wrapped(Self.lowerBoundLine(t, width: width - 2), indent: "  ", continuation: "               ")
        // Measured CPU that did not bind: still worth a glance (how busy the cores were).
        if t.boundBy != MeasuredLowerBound.cpuTerm, let cpu = BoundFacts.cpu(t) {
            out.wrapped("cpu          " + cpu + (t.cpuLowerBound.map { " (CPU / cores: \(formatSeconds($0)))" } ?? ""),
                        indent: "  ", continuation: "               ")
        }
        // A class that ran whole can hold the run up: say so when the units as scheduled bound it higher.
        if let cls = t.classLowerBound, cls > t.lowerBound * 1.02 + 0.05 {
            out.wrapped("             \(formatSeconds(cls)) over the classes and pieces as scheduled: whole classes "
                + "held the run up (history splits them next time)", indent: "  ", continuation: "               ")
        }
        if let steals = report.steals, !steals.isEmpty {
            let units = steals.reduce(0) { $0 + $1.to.count }
            let from = Set(steals.map(\.from)).count
            let tests = steals.reduce(0) { $0 + $1.tests }
            let saved = steals.reduce(0.0) { $0 + max(0, $1.expectedBefore - $1.expectedAfter) }
            out.wrapped("stealing     \(units) unit\(units == 1 ? "" : "s") took over \(tests) test\(tests == 1 ? "" : "s") "
                + "that \(from) running unit\(from == 1 ? "" : "s") had not started (expected to end "
                + "\(formatSeconds(saved)) sooner in all)", indent: "  ", continuation: "               ")
        }
        if let hooks = report.hooks, !hooks.isEmpty {
            out.wrapped(Self.hooksLine(hooks), indent: "  ", continuation: "               ")
        }
        out.wrapped("wall         \(formatSeconds(t.wall)), of which preparation (build, discovery) "
            + "\(formatSeconds(t.preparation))", indent: "  ", continuation: "               ")
    }

    /// `hooks        18 hooks, 4.2 s in all (longest: slot 3 (worker 3) of local set-up, 0.4 s) · 1 did not pass`.
    static func hooksLine(_ hooks: [HookReport]) -> String {
        let total = hooks.reduce(0.0) { $0 + $1.duration }
        let bad = hooks.filter { $0.status != .passed }.count
        var line = "hooks        \(hooks.count) hook\(hooks.count == 1 ? "" : "s"), \(formatSeconds(total)) in all"
        if let longest = hooks.max(by: { $0.duration < $1.duration }), hooks.count > 1 {
            line += " (longest: \(longest.title), \(formatSeconds(longest.duration)))"
        }
        return line + (bad == 0 ? "" : " · \(bad) did not pass (see warnings)")
    }

    /// `lower bound  85.2 s (CPU-bound: 2 m 50 s of CPU on 2 cores, busy 96 % of the run) · 1.04 × LB`: the
    /// term that binds is named, so a run the cores decided is not blamed on the schedule. When the slots bind (or
    /// an older report does not say), the line reads as it always has.
    /// Said shorter (without ` of the run`) when that keeps it within `width` columns.
    static func lowerBoundLine(_ t: Timing, width: Int = .max) -> String {
        let lb = "lower bound  \(formatSeconds(t.lowerBound))"
        let efficiency = "\(String(format2: t.efficiency)) × LB"
        guard let term = t.boundBy, term != MeasuredLowerBound.slotsTerm, let phrase = BoundFacts.phrase(t) else {
            return lb + " (LB, from this run's per-test durations) · makespan " + efficiency
        }
        let line = lb + " (" + phrase + ") · " + efficiency
        guard ConsoleText.width(line) > width, let compact = BoundFacts.phrase(t, compact: true) else { return line }
        return lb + " (" + compact + ") · " + efficiency
    }

    private func warnings(_ report: RunReport, _ out: inout Output) {
        guard !report.warnings.isEmpty else { return }
        out.blank()
        out.plain(out.style.boldYellow("Warnings") + " (\(report.warnings.count))")
        for warning in report.warnings {
            out.wrapped("- " + warning, indent: "  ", continuation: "    ")
        }
    }

    private func verdict(_ report: RunReport, _ out: inout Output) {
        let c = report.counts
        let s = out.style
        let attention = c.failures + c.notRun
        let regressions = PerformanceFacts.regressions(report)
        let failingRegressions = regressions.filter { $0.verdict?.failsRun == true }
        let line: String = switch report.exitCode {
        case 0 where c.total == 0 && !(report.selective?.skipped.isEmpty ?? true):
            s.boldGreen("PASSED") + " · nothing to run: every test target is unchanged since its last full pass (selective)"
        case 0:
            c.muted > 0
                ? s.boldGreen("PASSED") + " · \(c.muted) muted test\(c.muted == 1 ? "" : "s") failed (quarantined, "
                    + "listed above); every other test that ran passed" + (c.flaky > 0 ? " (\(c.flaky) flaky)" : "")
                : s.boldGreen("PASSED") + " · all \(c.total - c.skipped - c.notRun) tests that ran passed"
                    + (c.flaky > 0 ? " (\(c.flaky) flaky)" : "")
        case 1 where attention == 0 && !failingRegressions.isEmpty:
            s.boldRed("FAILED") + " · \(failingRegressions.count) performance regression"
                + "\(failingRegressions.count == 1 ? " fails" : "s fail") the run; every test passed"
        case 1:
            s.boldRed("FAILED") + " · \(attention) test\(attention == 1 ? "" : "s") need attention: "
                + Self.failureParts(c)
        case 2:
            s.boldRed("USAGE ERROR") + " · the run could not start as configured"
        case 3:
            s.boldRed("INFRASTRUCTURE ERROR") + " · \(c.notRun) test\(c.notRun == 1 ? "" : "s") did not run"
                + (report.warnings.isEmpty ? "" : "; see the warnings above")
        case 130, 143:
            s.boldYellow("INTERRUPTED") + " · by \(report.exitCode == 130 ? "SIGINT" : "SIGTERM")"
                + (attention > 0 ? "; \(Self.failureParts(c))" : "")
        default:
            s.boldRed("ENDED") + " with exit code \(report.exitCode)"
        }
        out.blank()
        if !regressions.isEmpty {
            // The regressions are named here too: the last lines are what a CI log shows first.
            let names = regressions.prefix(3).map { r in
                "\(r.measurement.test)\(regressionPlace(r, report)) \(PerformanceText.signedPercent(r.verdict?.change))"
            }
            let more = regressions.count > 3 ? ", and \(regressions.count - 3) more" : ""
            let effect = failingRegressions.isEmpty ? " (not failing the run: see --fail-on-perf-regression)" : ""
            let text = "PERFORMANCE · \(regressions.count) regression\(regressions.count == 1 ? "" : "s"): "
                + names.joined(separator: ", ") + more + effect
            var lines = ConsoleText.wrap(TextSanitizer.terminalSafe(text), width: width, continuation: "  ")
            if s.color, !lines.isEmpty {
                let label = failingRegressions.isEmpty ? s.boldYellow("PERFORMANCE") : s.boldRed("PERFORMANCE")
                lines[0] = label + lines[0].dropFirst("PERFORMANCE".count)
            }
            out.lines += lines
        }
        out.plain(line + " · exit \(report.exitCode) · \(formatSeconds(report.timing.wall))")
        var closing = "Fanout: \(c.passed + c.flaky) passed, \(c.failures) failed, \(c.skipped) skipped"
        if c.notRun > 0 { closing += ", \(c.notRun) not run" }
        if c.muted > 0 { closing += ", \(c.muted) muted by quarantine" }
        if let skipped = report.selective?.skipped.count, skipped > 0 {
            closing += ", \(skipped) test target\(skipped == 1 ? "" : "s") skipped as unchanged (selective)"
        }
        if !regressions.isEmpty {
            closing += ", \(regressions.count) performance regression\(regressions.count == 1 ? "" : "s")"
        }
        out.lines.append(closing)
    }

    private static func failureParts(_ c: Counts) -> String {
        var parts: [String] = []
        if c.failed > 0 { parts.append("\(c.failed) failed") }
        if c.crashed > 0 { parts.append("\(c.crashed) crashed") }
        if c.timedOut > 0 { parts.append("\(c.timedOut) timed out") }
        if c.notRun > 0 { parts.append("\(c.notRun) not run") }
        return parts.isEmpty ? "none failed" : parts.joined(separator: ", ")
    }

    static func label(_ outcome: Outcome) -> String {
        switch outcome {
        case .passed: "PASSED"
        case .flaky: "FLAKY"
        case .skipped: "SKIPPED"
        case .failed: "FAILED"
        case .crashed: "CRASHED"
        case .timedOut: "TIMED OUT"
        case .notRun: "NOT RUN"
        }
    }

    static func verb(_ outcome: Outcome) -> String {
        switch outcome {
        case .crashed: "crashed"
        case .timedOut: "timed out"
        case .notRun: "did not run"
        default: "failed"
        }
    }
}
