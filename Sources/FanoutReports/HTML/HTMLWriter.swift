import FanoutCore

/// The run as one self-contained HTML page (report.html): the verdict and facts of the run, the failures grouped by
/// cause with each test's messages, diagnostics, attempts and its unit's log, the destination matrix, the timeline
/// as an inline SVG Gantt chart, estimates versus actual, slowest and flaky tests, measurements and warnings.
/// Built from the RunReport alone.
///
/// No network: inline CSS, no script, no external resource; `<details>` folds what is long, so it reads the same with
/// JavaScript off. Large runs stay usable: lists are capped, and only the first failures are shown in full (the rest
/// by id), within a byte budget; failure entries, trend charts and long tables are `content-visibility: auto`, so a
/// browser lays out only what is on screen (10,000 tests with 2,000 failures: see docs/report-html.md). Everything that came from a test or an agent goes through `HTMLEscaping.escape`.
public struct HTMLWriter: Sendable {
    public static let fileName = "report.html"

    /// Failures shown in full (messages, diagnostics, attempts, log); the rest are listed by id.
    public var fullFailures: Int
    /// Bytes the fully shown failures may take together; past it, failures are listed by id.
    public var failureBytes: Int
    /// Lines of a unit's log shown (its tail), and of a crash's diagnostics (its head).
    public var logLines: Int
    public var diagnosticsLines: Int

    public init(fullFailures: Int = 200, failureBytes: Int = 3_000_000, logLines: Int = 100, diagnosticsLines: Int = 200) {
        self.fullFailures = max(0, fullFailures)
        self.failureBytes = max(10_000, failureBytes)
        self.logLines = max(1, logLines)
        self.diagnosticsLines = max(1, diagnosticsLines)
    }

    static let matrixRows = 500
    static let classRows = 50
    static let unitRows = 50
    static let slowestRows = 20
    static let flakyRows = 200
    static let measurementRows = 1_000
    /// Trend charts drawn (each a few kilobytes of SVG); the rest of the trends are in report.json.
    static let trendCharts = 100
    /// What the legend says of the earlier runs a trend holds (the coordinator reads that many).
    static let trendRuns = 10
    static let warningRows = 500
    /// Characters of one message or one log line shown; beyond, cut with a note.
    static let textLimit = 20_000
    static let lineLimit = 2_000

    public func render(_ report: RunReport) -> String {
        let units = Dictionary(report.units.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var out = ""
        out.reserveCapacity(64_000)
        let passed = report.exitCode == 0
        let verdict = passed ? "PASSED" : "FAILED"
        out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            + "<title>Fanout: \(verdict) · \(e(report.runID, line: true))</title>\n<style>\n\(Self.css)</style>\n</head>\n<body>\n"
        out += header(report, verdict: verdict, passed: passed)
        out += "<nav><a href=\"#failures\">Failures</a> · "
            + (report.destinations.count >= 2 ? "<a href=\"#matrix\">Destinations</a> · " : "")
            + "<a href=\"#timeline\">Timeline</a> · <a href=\"#estimates\">Estimates</a> · <a href=\"#slowest\">Slowest</a> · "
            + "<a href=\"#flaky\">Flaky</a> · <a href=\"#performance\">Performance</a> · "
            + (report.hooks?.isEmpty == false ? "<a href=\"#hooks\">Hooks</a> · " : "") + "<a href=\"#warnings\">Warnings</a></nav>\n"
        out += failures(report, units: units)
        out += matrix(report)
        out += "<section id=\"timeline\">\n<h2>Timeline</h2>\n"
            + "<p class=\"legend\"><span class=\"key passed\"></span>passed <span class=\"key failed\"></span>failed "
            + "<span class=\"key crashed\"></span>crashed or timed out <span class=\"key stolen\"></span>took over stolen tests "
            + "<span class=\"key handed-over\"></span>handed its tests over (work stealing) "
            + "<span class=\"key twin-stopped\"></span>stopped: its twin finished first (straggler backup) "
            + "<span class=\"key requeued\"></span>re-queued (agent lost, failed to start, cancelled) "
            + "<span class=\"key-line predicted\"></span>predicted end \(formatSeconds(report.plan.predictedMakespan)) "
            + "<span class=\"key-line lower-bound\"></span>lower bound \(formatSeconds(report.timing.lowerBound))</p>\n"
            + HTMLTimeline.svg(report) + unitResources(report) + "</section>\n"
        out += estimates(report)
        out += slowest(report)
        out += flaky(report, units: units)
        out += quarantined(report, units: units)
        out += selective(report)
        out += repeats(report)
        out += performance(report)
        out += hooks(report)
        out += warnings(report)
        out += "<footer>Fanout \(e(report.fanoutVersion, line: true)) · run \(e(report.runID, line: true)) · "
            + "every test is in report.json</footer>\n</body>\n</html>\n"
        return out
    }

    // MARK: - Sections

    private func header(_ report: RunReport, verdict: String, passed: Bool) -> String {
        let counts = report.counts
        let needAttention = report.results.filter(\.needsAttention).count
        let regressions = PerformanceFacts.regressions(report).filter { $0.verdict?.failsRun == true }
        var headline = "\(counts.total) tests"
        if needAttention > 0 { headline += " · \(needAttention) need attention" }
        if !regressions.isEmpty { headline += " · \(regressions.count) performance regression\(regressions.count == 1 ? "" : "s")" }
        headline += " · exit \(report.exitCode)"
        if report.interrupted { headline += " · interrupted" }
        var out = "<header>\n<h1><span class=\"verdict \(passed ? "passed" : "failed")\">\(verdict)</span> Fanout · \(headline)</h1>\n"

        out += "<table class=\"counts\"><thead><tr><th>destination</th><th>passed</th><th>failed</th><th>crashed</th>"
            + "<th>timed out</th><th>not run</th><th>skipped</th><th>flaky</th>"
            + (counts.muted > 0 ? "<th>muted failures</th>" : "") + "</tr></thead><tbody>\n"
        for destination in report.destinations {
            let c = Counts(results: report.results.filter { $0.destination == destination })
            out += "<tr><td>\(e(destination, line: true))</td><td>\(c.passed)</td><td>\(c.failed)</td><td>\(c.crashed)</td>"
                + "<td>\(c.timedOut)</td><td>\(c.notRun)</td><td>\(c.skipped)</td><td>\(c.flaky)</td>"
                + (counts.muted > 0 ? "<td>\(c.muted)</td>" : "") + "</tr>\n"
        }
        out += "</tbody></table>\n"

        let t = report.timing
        let slots = report.agents.reduce(0) { $0 + $1.slots }
        let binding = BoundFacts.phrase(t).map { " (" + e($0, line: true) + ")" } ?? ""
        out += "<p class=\"timing\">Wall \(formatSeconds(t.wall)) · makespan \(formatSeconds(t.makespan)) · lower bound "
            + "\(formatSeconds(t.lowerBound))\(binding) · \(String(format2: t.efficiency)) × LB · "
            + "\(report.agents.count) agent\(report.agents.count == 1 ? "" : "s"), \(slots) slot\(slots == 1 ? "" : "s")</p>\n"
        out += "<p class=\"timing\">Predicted \(formatSeconds(report.plan.predictedMakespan)) (plan's lower bound "
            + "\(formatSeconds(report.plan.lowerBound)))"
        if let c = t.classLowerBound { out += " · lower bound over the scheduled units \(formatSeconds(c))" }
        if t.boundBy != MeasuredLowerBound.cpuTerm, let cpu = BoundFacts.cpu(t) {
            out += " · " + e(cpu, line: true) + (t.cpuLowerBound.map { " (CPU / cores \(formatSeconds($0)))" } ?? "")
        }
        out += " · preparation \(formatSeconds(t.preparation))"
        if let steals = report.steals, !steals.isEmpty {
            out += " · \(steals.count) steal\(steals.count == 1 ? "" : "s") of \(steals.reduce(0) { $0 + $1.tests }) tests"
        }
        out += "</p>\n"

        out += "<dl class=\"facts\">"
        out += "<dt>Run</dt><dd>\(e(report.runID, line: true)), started \(ISO8601Timestamp.string(from: report.startedAt))</dd>"
        out += "<dt>Fanout</dt><dd>\(e(report.fanoutVersion, line: true))</dd>"
        out += "<dt>Product</dt><dd>"
        if let package = report.product.package { out += "package <code>\(e(package, line: true))</code>, " }
        out += "bundle <code>\(e(report.product.bundle, line: true))</code>"
        if let sha = report.product.sha256 { out += ", sha256 <code>\(e(sha, line: true))</code>" }
        out += "</dd><dt>Destinations</dt><dd>\(report.destinations.map { e($0, line: true) }.joined(separator: ", "))</dd>"
        out += "</dl>\n"

        // CPU columns only when some agent measured it (older reports and unmeasured agents show none).
        let showsCPU = report.agents.contains { $0.cpuSeconds != nil || $0.cores != nil }
        out += "<table class=\"agents\"><thead><tr><th>agent</th><th>transport</th><th>slots</th><th>host</th>"
            + (showsCPU ? "<th>cores</th><th>CPU</th><th>busy</th>" : "")
            + "<th>deployed</th><th>start-up</th><th>problem</th></tr></thead><tbody>\n"
        for a in report.agents {
            var deployed = a.deployedBytes.map { "\($0) bytes" } ?? ""
            if let s = a.deploySeconds { deployed += (deployed.isEmpty ? "" : " in ") + formatSeconds(s) }
            out += "<tr><td>\(e(a.name, line: true))</td><td>\(e(a.transport, line: true))</td><td>\(a.slots)</td>"
                + "<td>\(e(a.host ?? "", line: true))</td>"
                + (showsCPU ? cpuCells(a) : "") + "<td>\(deployed)</td>"
                + "<td>\(a.overhead.map(formatSeconds) ?? "")</td><td>\(e(a.problem ?? "", line: true))</td></tr>\n"
        }
        out += "</tbody></table>\n"
        if showsCPU {
            out += "<p class=\"note\">Busy: the agent&#39;s CPU seconds over its cores × the makespan. Agents on one "
                + "machine share its cores: their busy shares add up to the machine&#39;s.</p>\n"
        }
        return out + "</header>\n"
    }

    /// An agent's cores (with its machine as a tooltip), CPU seconds, and busy share with a small bar.
    private func cpuCells(_ a: AgentInfo) -> String {
        let machine = a.machine.map { " title=\"machine \(e($0, line: true))\"" } ?? ""
        var out = "<td\(machine)>\(a.cores.map(String.init) ?? "")</td><td>\(a.cpuSeconds.map(BoundFacts.cpuSeconds) ?? "")</td><td>"
        if let busy = a.cpuBusy, busy.isFinite {
            let width = Int((max(0, min(1, busy)) * 60).rounded())
            out += "<span class=\"busy\"><span style=\"width: \(width)px\"></span></span> \(BoundFacts.percent(busy))"
        }
        return out + "</td>"
    }

    /// The units that consumed the most CPU, with their peak memory: under the timeline, folded, when measured.
    private func unitResources(_ report: RunReport) -> String {
        let measured = report.units.filter { $0.cpuSeconds != nil || $0.peakMemoryBytes != nil }
        guard !measured.isEmpty else { return "" }
        let ranked = measured.sorted(byKey: { $0.cpuSeconds ?? 0 }, descending: true)
        var out = "<details class=\"units\"><summary>CPU and memory of the units (top \(min(Self.unitRows, ranked.count)) "
            + "of \(measured.count) measured, by CPU)</summary>\n<table class=\"units\"><thead><tr><th>unit</th><th>agent</th>"
            + "<th>destination</th><th>duration</th><th>CPU</th><th>cores used</th><th>waited for a core</th><th>peak memory</th>"
            + "</tr></thead><tbody>\n"
        for u in ranked.prefix(Self.unitRows) {
            let used = u.cpuSeconds.flatMap { cpu in u.duration > 0 ? String(format2: cpu / u.duration) : nil } ?? ""
            out += "<tr><td>\(u.id)</td><td>\(e(u.agent, line: true)) #\(u.slot)</td><td>\(e(u.destination, line: true))</td>"
                + "<td>\(formatSeconds(u.duration))</td><td>\(u.cpuSeconds.map(BoundFacts.cpuSeconds) ?? "")</td><td>\(used)</td>"
                + "<td>\(u.cpuWaitSeconds.map(formatSeconds) ?? "")</td>"
                + "<td>\(u.peakMemoryBytes.map(BoundFacts.bytes) ?? "")</td></tr>\n"
        }
        return out + "</tbody></table>\n</details>\n"
    }

    private func matrix(_ report: RunReport) -> String {
        guard report.destinations.count >= 2 else { return "" }
        var outcomes: [TestID: [String: Outcome]] = [:]
        for r in report.results { outcomes[r.id, default: [:]][r.destination] = r.outcome }
        var rows: [(id: TestID, differs: Bool)] = []
        var allPassed = 0
        for (id, byDestination) in outcomes {
            let values = report.destinations.map { byDestination[$0] }
            if values.allSatisfy({ $0 == .passed }) { allPassed += 1; continue }
            rows.append((id, Set(values).count > 1))
        }
        rows.sort { $0.differs != $1.differs ? $0.differs : $0.id < $1.id }
        let differing = rows.filter(\.differs).count
        var out = "<section id=\"matrix\">\n<h2>Destinations</h2>\n<p>\(differing) test\(differing == 1 ? "" : "s") "
            + "with an outcome that differs between destinations (listed first); \(allPassed) test\(allPassed == 1 ? "" : "s") "
            + "passed on every destination and \(allPassed == 1 ? "is" : "are") not shown.</p>\n"
        guard !rows.isEmpty else { return out + "</section>\n" }
        out += "<table class=\"matrix\"><thead><tr><th>test</th>"
        for d in report.destinations { out += "<th>\(e(d, line: true))</th>" }
        out += "</tr></thead><tbody>\n"
        for row in rows.prefix(Self.matrixRows) {
            out += "<tr\(row.differs ? " class=\"differs\"" : "")><td><code>\(e(row.id.description, line: true))</code></td>"
            for d in report.destinations {
                if let o = outcomes[row.id]?[d] { out += "<td class=\"\(o.rawValue)\">\(o.rawValue)</td>" } else { out += "<td>—</td>" }
            }
            out += "</tr>\n"
        }
        out += "</tbody></table>\n"
        if rows.count > Self.matrixRows { out += "<p class=\"note\">… and \(rows.count - Self.matrixRows) more tests.</p>\n" }
        return out + "</section>\n"
    }

    private func estimates(_ report: RunReport) -> String {
        let timed = report.classes.filter { $0.actual != nil }
        var out = "<section id=\"estimates\">\n<h2>Estimates vs actual</h2>\n"
        guard !timed.isEmpty else { return out + "<p>No class has a measured time.</p>\n</section>\n" }
        let ranked = timed.sorted(byKey: { abs(($0.actual ?? 0) - $0.estimate) }, descending: true)
        out += "<p>The \(min(Self.classRows, ranked.count)) worst misses of \(ranked.count) timed classes.</p>\n"
            + "<table class=\"estimates\"><thead><tr><th>class</th><th>destination</th><th>tests</th><th>estimate</th>"
            + "<th>actual</th><th>miss</th><th>estimated from</th><th>outcome</th></tr></thead><tbody>\n"
        for c in ranked.prefix(Self.classRows) {
            let actual = c.actual ?? 0
            let miss = actual - c.estimate
            out += "<tr><td><code>\(e(c.suite.description, line: true))</code></td><td>\(e(c.destination, line: true))</td>"
                + "<td>\(c.testCount)</td><td>\(formatSeconds(c.estimate))</td><td>\(formatSeconds(actual))</td>"
                + "<td>\(miss >= 0 ? "+" : "−")\(formatSeconds(abs(miss)))</td><td>\(e(c.estimateSource, line: true))</td>"
                + "<td class=\"\(c.outcome.rawValue)\">\(c.outcome.rawValue)</td></tr>\n"
        }
        return out + "</tbody></table>\n</section>\n"
    }

    private func slowest(_ report: RunReport) -> String {
        let ran = report.results.filter { !$0.attempts.isEmpty }
        var out = "<section id=\"slowest\">\n<h2>Slowest tests</h2>\n"
        guard !ran.isEmpty else { return out + "<p>No test ran.</p>\n</section>\n" }
        out += "<table class=\"slowest\"><thead><tr><th>test</th><th>destination</th><th>duration</th><th>outcome</th>"
            + "</tr></thead><tbody>\n"
        for r in ran.sorted(byKey: \.duration, descending: true).prefix(Self.slowestRows) {
            out += "<tr><td><code>\(e(r.id.description, line: true))</code></td><td>\(e(r.destination, line: true))</td>"
                + "<td>\(formatSeconds(r.duration))</td><td class=\"\(r.outcome.rawValue)\">\(r.outcome.rawValue)</td></tr>\n"
        }
        return out + "</tbody></table>\n</section>\n"
    }

    private func flaky(_ report: RunReport, units: [Int: UnitReport]) -> String {
        let flaky = report.results.filter { $0.outcome == .flaky }
        var out = "<section id=\"flaky\">\n<h2>Flaky: \(flaky.count) test\(flaky.count == 1 ? "" : "s") failed, then passed on a retry</h2>\n"
        guard !flaky.isEmpty else { return out + "</section>\n" }
        out += "<ul class=\"flaky\">\n"
        for r in flaky.prefix(Self.flakyRows) {
            let flakes = r.earlierFailedAttempts
            out += "<li><code>\(e(r.id.description, line: true))</code>\(place(r, report)) · \(flakes.count) failed "
                + "attempt\(flakes.count == 1 ? "" : "s") before the pass"
            if let first = flakes.first {
                let message = ReportFacts.headline(of: first.attempt, outcome: first.attempt.outcome, unit: units[first.attempt.unit])
                out += " · attempt \(first.number) on \(e(first.attempt.agent, line: true)): "
                    + e(HTMLEscaping.clipped(message, to: 500), line: true)
            }
            if let score = r.flakeScore { out += " · " + e(score.summary, line: true) }
            out += "</li>\n"
        }
        out += "</ul>\n"
        if flaky.count > Self.flakyRows { out += "<p class=\"note\">… and \(flaky.count - Self.flakyRows) more.</p>\n" }
        return out + "</section>\n"
    }

    /// A `--repeat` run: its first failure, and every test that failed in some repetition with its pass rate.
    private func repeats(_ report: RunReport) -> String {
        guard let hunt = report.repeatRun else { return "" }
        let failing = ReportFacts.failedInSomeRepetition(report)
        var out = "<section id=\"repeat\">\n<h2>Repeat: \(hunt.repetitions) repetitions (seed \(hunt.seed)), \(failing.count) "
            + "test\(failing.count == 1 ? "" : "s") failed in some repetition</h2>\n"
        if let first = hunt.firstFailure {
            out += "<p>First failure: <code>\(e(first.test.description, line: true))</code> in repetition \(first.repetition) on "
                + e(first.agent, line: true) + (first.seed.map { ", <code>FANOUT_SEED=\($0)</code>" } ?? "") + "</p>\n"
        }
        out += "<ul class=\"repeat\">\n"
        for r in failing.prefix(Self.flakyRows) {
            out += "<li><code>\(e(r.id.description, line: true))</code>\(place(r, report)) · \(e(r.repeats?.summary ?? "", line: true))</li>\n"
        }
        return out + "</ul>\n</section>\n"
    }

    /// Muted tests (with what they did) and tests the quarantine kept from running, each with its entry.
    private func quarantined(_ report: RunReport, units: [Int: UnitReport]) -> String {
        let (muted, skipped) = ReportFacts.quarantined(report)
        guard !muted.isEmpty || !skipped.isEmpty else { return "" }
        let failing = muted.filter(\.outcome.isFailure).count
        var out = "<section id=\"quarantined\">\n<h2>Quarantined: \(muted.count) muted (\(failing) failed without failing "
            + "the run), \(skipped.count) skipped</h2>\n<ul class=\"quarantined\">\n"
        for r in muted + skipped {
            let what = ReportFacts.quarantinedOutcome(r, unit: r.decidingAttempt.flatMap { units[$0.unit] })
            out += "<li><code>\(e(r.id.description, line: true))</code>\(place(r, report)) · "
                + "<span class=\"\(r.outcome.rawValue)\">\(e(HTMLEscaping.clipped(what, to: 500), line: true))</span>"
                + (r.quarantine.map { " · " + e(ReportFacts.quarantineLine($0), line: true) } ?? "") + "</li>\n"
        }
        return out + "</ul>\n</section>\n"
    }

    /// `--selective`: the test targets skipped as unchanged, with the run that vouches for each, and why the others ran.
    private func selective(_ report: RunReport) -> String {
        guard let (heading, lines) = ReportFacts.selective(report) else { return "" }
        var out = "<section id=\"selective\">\n<h2>\(e(heading, line: true))</h2>\n<ul class=\"selective\">\n"
        for line in lines {
            out += "<li><code>\(e(line.target, line: true))</code> · <span class=\"\(line.skipped ? "skipped" : "ran")\">"
                + "\(e(line.text, line: true))</span></li>\n"
        }
        return out + "</ul>\n</section>\n"
    }

    /// `hooks:` of the config: those that did not pass first, each with its output (what a person triages a
    /// slot taken out from), then a count of those that passed. Nothing when the config has no hooks.
    private func hooks(_ report: RunReport) -> String {
        guard let hooks = report.hooks, !hooks.isEmpty else { return "" }
        var out = "<section id=\"hooks\">\n<h2>Hooks</h2>\n"
        let bad = hooks.filter { $0.status != .passed }
        let total = hooks.reduce(0.0) { $0 + $1.duration }
        out += "<p>\(hooks.count) hook\(hooks.count == 1 ? "" : "s"), \(formatSeconds(total)) in all; "
            + (bad.isEmpty ? "every one passed." : "\(bad.count) did not pass:") + "</p>\n"
        for hook in bad.prefix(Self.warningRows) {
            out += "<details open><summary>\(e(hook.title, line: true)): \(e(hook.status.rawValue, line: true)) "
                + "(\(e(hook.detail, line: true))) after \(formatSeconds(hook.duration))</summary>\n"
                + "<pre>$ \(e(HTMLEscaping.clipped(hook.command, to: Self.lineLimit)))</pre>\n"
                + tail(hook.output, lines: 40) + "</details>\n"
        }
        return out + "</section>\n"
    }

    private func warnings(_ report: RunReport) -> String {
        var out = "<section id=\"warnings\">\n<h2>Warnings</h2>\n"
        guard !report.warnings.isEmpty else { return out + "<p>None.</p>\n</section>\n" }
        out += "<ul class=\"warnings\">\n"
        for w in report.warnings.prefix(Self.warningRows) {
            out += "<li>\(e(HTMLEscaping.clipped(w, to: Self.lineLimit), line: true))</li>\n"
        }
        out += "</ul>\n"
        if report.warnings.count > Self.warningRows {
            out += "<p class=\"note\">… and \(report.warnings.count - Self.warningRows) more.</p>\n"
        }
        return out + "</section>\n"
    }

    // MARK: - Text

    func e(_ text: String, line: Bool = false) -> String { HTMLEscaping.escape(text, singleLine: line) }

    func place(_ result: TestResult, _ report: RunReport) -> String {
        report.destinations.count > 1 ? " [\(e(result.destination, line: true))]" : ""
    }

    /// The last `lines` lines of a log in a `<pre>`, with a note when lines were cut.
    func tail(_ log: String, lines count: Int) -> String {
        let (kept, omitted) = ReportFacts.tail(log, lines: count)
        guard !kept.isEmpty else { return "<p class=\"note\">The log is empty.</p>" }
        var out = omitted > 0 ? "<p class=\"note\">The first \(omitted) lines are cut; the last \(kept.count) are shown.</p>" : ""
        out += "<pre>" + kept.map { e(HTMLEscaping.clipped(String($0), to: Self.lineLimit)) }.joined(separator: "\n") + "</pre>"
        return out
    }

    /// The first `lines` lines of a text (a backtrace starts with what matters), with a note when lines were cut.
    func head(_ text: String, lines count: Int) -> String {
        let all = text.split(separator: "\n", omittingEmptySubsequences: false)
        let kept = all.prefix(count)
        var out = "<pre>" + kept.map { e(HTMLEscaping.clipped(String($0), to: Self.lineLimit)) }.joined(separator: "\n") + "</pre>"
        if all.count > count { out += "<p class=\"note\">\(all.count - count) more lines are cut (in report.json).</p>" }
        return out
    }

    static let css = """
    :root { --pass: #1a7f37; --fail: #cf222e; --crash: #8250df; --requeue: #9a6700; --steal: #0969da; --muted: #57606a; --handed-over: #9ec5f4; --twin-stopped: #afb8c1; }
    body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0 auto; max-width: 1200px; padding: 0 16px 40px; color: #1f2328; }
    h1 { font-size: 22px; } h2 { font-size: 18px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; margin-top: 28px; } h3 { font-size: 15px; }
    .verdict { color: #fff; padding: 2px 10px; border-radius: 6px; } .verdict.passed { background: var(--pass); } .verdict.failed { background: var(--fail); }
    table { border-collapse: collapse; margin: 8px 0; } th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
    th { background: #f6f8fa; } code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
    pre { background: #f6f8fa; padding: 8px; overflow-x: auto; white-space: pre-wrap; word-break: break-all; margin: 4px 0; }
    pre.message { background: #fff1f0; }
    .attachments img { max-width: 240px; max-height: 320px; margin: 4px 8px 4px 0; border: 1px solid #ccc; }
    dl.facts { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; } dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; word-break: break-all; }
    nav { margin: 12px 0; } .note { color: var(--muted); font-style: italic; }
    details { margin: 4px 0; } details.group > summary { font-size: 15px; cursor: pointer; } summary { cursor: pointer; }
    ul.tests { list-style: none; padding-left: 12px; } li.test { border-left: 3px solid var(--fail); padding: 4px 8px; margin: 8px 0; }
    li.test.crashed, li.test.timed-out { border-color: var(--crash); } li.test.not-run { border-color: var(--requeue); }
    .badge { font-size: 12px; padding: 0 6px; border-radius: 10px; color: #fff; background: var(--fail); }
    .badge.crashed, .badge.timed-out { background: var(--crash); } .badge.not-run { background: var(--requeue); }
    td.passed { color: var(--pass); } td.failed { color: var(--fail); font-weight: 600; } td.crashed, td.timed-out { color: var(--crash); font-weight: 600; }
    td.not-run { color: var(--requeue); } td.flaky { color: var(--steal); } td.skipped { color: var(--muted); } tr.differs td:first-child { border-left: 3px solid var(--fail); }
    svg.gantt { border: 1px solid #d0d7de; background: #fff; } svg.gantt text { font: 11px sans-serif; fill: #1f2328; } svg.gantt text.axis { fill: var(--muted); }
    svg.gantt .band { fill: #f6f8fa; } rect.unit { stroke: #fff; stroke-width: 0.5; }
    rect.unit.passed { fill: var(--pass); } rect.unit.failed { fill: var(--fail); } rect.unit.crashed { fill: var(--crash); } rect.unit.requeued { fill: var(--requeue); }
    rect.unit.handed-over { fill: var(--handed-over); } rect.unit.twin-stopped { fill: var(--twin-stopped); }
    rect.unit.stolen.passed { fill: var(--steal); } rect.unit:hover { opacity: 0.7; }
    line.predicted { stroke: #1f2328; stroke-dasharray: 4 3; stroke-width: 1.5; } line.lower-bound { stroke: var(--fail); stroke-dasharray: 2 2; stroke-width: 1.5; }
    .legend .key { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 10px; vertical-align: middle; }
    .key.passed { background: var(--pass); } .key.failed { background: var(--fail); } .key.crashed { background: var(--crash); } .key.stolen { background: var(--steal); } .key.requeued { background: var(--requeue); }
    .key.handed-over { background: var(--handed-over); } .key.twin-stopped { background: var(--twin-stopped); }
    .key-line { display: inline-block; width: 16px; margin: 0 4px 0 10px; vertical-align: middle; border-top: 2px dashed #1f2328; } .key-line.lower-bound { border-color: var(--fail); }
    svg.spark polyline { fill: none; stroke: var(--steal); stroke-width: 1.5; }
    div.trends { display: flex; flex-wrap: wrap; gap: 8px 16px; } figure.trend { margin: 4px 0; } figure.trend figcaption { font-size: 12px; max-width: 360px; word-break: break-all; }
    svg.trend { border: 1px solid #d0d7de; background: #fff; } svg.trend text { font: 11px sans-serif; fill: var(--muted); } svg.trend text.axis-title { fill: #1f2328; }
    svg.trend line.axis { stroke: #8c959f; } svg.trend .trend-line { fill: none; stroke: #8c959f; stroke-width: 1.5; }
    svg.trend rect.allowed { fill: #dafbe1; } svg.trend line.baseline { stroke: var(--pass); stroke-width: 1.5; stroke-dasharray: 5 3; } svg.trend line.baseline-then { stroke: var(--pass); stroke-width: 2; }
    circle.point.past { fill: #57606a; } circle.point.this-run { fill: var(--steal); stroke: #1f2328; stroke-width: 1.5; } circle.point.this-run.regression { fill: var(--fail); }
    circle.point.this-run.too-noisy { fill: var(--requeue); } circle.point.this-run.passed { fill: var(--pass); }
    .key.past { background: #57606a; border-radius: 6px; } .key.this-run { background: #fff; border-radius: 6px; border: 2px solid #1f2328; } .key.allowed { background: #dafbe1; } .key-line.baseline { border-color: var(--pass); }
    .verdict-regression { color: var(--fail); font-weight: 600; } .verdict-too-noisy { color: var(--requeue); font-weight: 600; }
    li.test, li.brief, figure.trend, table.matrix, table.estimates, table.performance { content-visibility: auto; contain-intrinsic-size: auto 160px; }
    li.brief { contain-intrinsic-size: auto 22px; } table.matrix, table.estimates { contain-intrinsic-size: auto 600px; }
    span.busy { display: inline-block; width: 60px; height: 8px; background: #eaeef2; vertical-align: middle; } span.busy > span { display: block; height: 8px; background: var(--steal); }
    footer { margin-top: 32px; color: var(--muted); }

    """
}
