import FanoutCore
import FanoutTestSupport
@testable import FanoutReports
import Foundation
import Testing

@Suite(.timeLimit(.minutes(3))) struct HTMLWriterTests {
    /// Occurrences of `needle` in `text`.
    private func count(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    /// The text of one `<section id="…">`.
    private func section(_ id: String, of html: String) throws -> String {
        let start = try #require(html.range(of: "<section id=\"\(id)\">"), "no section \(id)")
        let end = try #require(html.range(of: "</section>", range: start.upperBound..<html.endIndex))
        return String(html[start.lowerBound..<end.upperBound])
    }

    /// A failed UI test's screenshots are shown beside its failure, other files linked; every path is escaped.
    @Test func attachmentsAreShownBesideTheFailure() {
        var b = ReportBuilder()
        var attempt = Attempt(outcome: .failed, duration: 1, issues: [Issue(kind: .assertion, message: "no button")],
                              unit: 1, agent: "mac-1")
        attempt.attachments = ["attachments/iphone/App.LoginTests/testLogin/unit1-Failure_screenshot.png",
                               "attachments/iphone/App.LoginTests/testLogin/unit1-<b>&log.txt"]
        b.result("App.LoginTests/testLogin", .failed, attempts: [attempt])
        let html = HTMLWriter().render(b.build())
        #expect(html.contains("<div class=\"attachments\"><a href=\"attachments/iphone/App.LoginTests/testLogin/unit1-Failure_screenshot.png\">"
            + "<img src=\"attachments/iphone/App.LoginTests/testLogin/unit1-Failure_screenshot.png\" alt=\"unit1-Failure_screenshot.png\" loading=\"lazy\"></a>"))
        #expect(html.contains("unit1-&lt;b&gt;&amp;log.txt</a>") && !html.contains("<b>&log"))
    }

    @Test func theHeaderStatesTheVerdictCountsTimingAndWhereItRan() {
        let html = HTMLWriter().render(Sample.report())
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<span class=\"verdict failed\">FAILED</span> Fanout · 11 tests · 5 need attention · exit 1</h1>"))
        #expect(html.contains("<tr><td>linux</td><td>3</td><td>1</td><td>1</td><td>1</td><td>1</td><td>1</td><td>1</td></tr>"))
        #expect(html.contains("<tr><td>linux-release</td><td>1</td><td>1</td><td>0</td><td>0</td><td>0</td><td>0</td><td>0</td></tr>"))
        // The same timing line as summary.md.
        #expect(html.contains("Wall 75.5 s · makespan 13.5 s · lower bound 11.0 s · 1.23 × LB · 2 agents, 4 slots"))
        #expect(html.contains("Predicted 12.3 s (plan's lower bound 10.5 s) · preparation 21.4 s"))
        #expect(html.contains("<tr><td>mac-1</td><td>ssh</td><td>2</td><td>127.0.1.2</td>"))
        #expect(html.contains("<dt>Run</dt><dd>2024-05-01-120000-ab12, started 2024-05-01T12:00:00.250Z</dd>"))
        #expect(html.contains("<dt>Fanout</dt><dd>0.1.0</dd>"))
        #expect(html.contains("bundle <code>/src/Demo/.build/debug/DemoPackageTests.xctest</code>, sha256 <code>abc123</code>"))
        #expect(html.contains("<dt>Destinations</dt><dd>linux, linux-release</dd>"))

        var green = ReportBuilder()
        green.passed("M.C/testA")
        let passed = HTMLWriter().render(green.build())
        #expect(passed.contains("<span class=\"verdict passed\">PASSED</span> Fanout · 1 tests · exit 0</h1>"))
        #expect(passed.contains("<h2>Failures</h2>\n<p>None.</p>"))
        #expect(!passed.contains("<section id=\"matrix\">"), "one destination: no matrix")
        #expect(!passed.contains("href=\"#matrix\""), "and no link to it")
    }

    @Test func failuresAreGroupedByCauseWithEverythingNeededToTriage() throws {
        let report = Sample.report()
        let html = HTMLWriter().render(report)
        let failures = try section("failures", of: html)
        #expect(failures.contains("<h2>Failures: 5 tests in 5 groups</h2>"))
        #expect(count("<details class=\"group\" open>", in: failures) == 3, "the first three groups are open")
        #expect(count("<details class=\"group\">", in: failures) == 2)
        // The full message: every failing issue with its place, escaped.
        #expect(failures.contains("/src/Tests/CoreTests/ApproximateEqualityTests.swift:18: XCTAssertEqual failed: (&quot;1.0&quot;) is not equal to (&quot;2.0&quot;)\n"
            + "/src/Tests/CoreTests/ApproximateEqualityTests.swift:19: XCTAssertTrue failed - &quot;b&quot; &amp; &lt;c&gt; isn&#39;t ready"))
        #expect(failures.contains("· unit 1 on local slot 0"))
        // Crash diagnostics, the unit's log (colors stripped) and the unit's command.
        #expect(failures.contains("#30 0x0000 in frame30 at /src/Sources/Crash.swift:30"))
        #expect(failures.contains("LOG-OF-UNIT-3"))
        #expect(failures.contains("Test Suite &#39;Selected tests&#39; started\nLOG-OF-UNIT-1"))
        #expect(failures.contains("HANG-DIAGNOSTICS waiting on semaphore"))
        #expect(failures.contains("agent mac-2 lost and the re-queue budget is spent"))
        #expect(failures.contains("RELEASE-ONLY mismatch"))
        #expect(failures.contains("<code>/opt/bin/FanoutPackageTests.xctest ParserTests.Crashy</code>"))
        #expect(!failures.contains("testClose"), "passed tests are not failures")
        #expect(!failures.contains("testRetry"), "a flaky test is not a failure")
    }

    @Test func longDiagnosticsAndLogsAreCutWithANoteAndRetriesAreListed() throws {
        var b = ReportBuilder()
        let log = (1...250).map { "log line \($0)" }.joined(separator: "\n")
        b.unit(3, suites: ["M.C"], ending: "killed by SIGSEGV", log: log)
        b.unit(4, agent: "mac-1", slot: 1, suites: ["M.C"], ending: "killed by SIGSEGV", log: "second")
        let trace = (1...300).map { "frame \($0)" }.joined(separator: "\n")
        b.result("M.C/testBoom", .crashed, attempts: [
            Attempt(outcome: .crashed, duration: 1, issues: [Issue(kind: .crash, message: "crashed: signal 11")], unit: 4,
                    agent: "mac-1", diagnostics: "earlier"),
            Attempt(outcome: .crashed, duration: 1, issues: [Issue(kind: .crash, message: "crashed: signal 11")], unit: 3,
                    agent: "local", diagnostics: trace),
        ])
        let html = HTMLWriter().render(b.build())
        let failures = try section("failures", of: html)
        #expect(failures.contains("frame 200</pre>"))
        #expect(!failures.contains("frame 201"))
        #expect(failures.contains("100 more lines are cut"))
        #expect(failures.contains("The first 150 lines are cut; the last 100 are shown."))
        #expect(failures.contains("log line 250"))
        #expect(!failures.contains("log line 150\n"), "only the tail of the log")
        #expect(failures.contains("<summary>2 attempts</summary>"))
        #expect(failures.contains("<li>crashed in 1.00 s · unit 4 on mac-1 · crashed: signal 11</li>"))
    }

    @Test func aUnitsLogIsShownOnceAndLaterFailuresOfTheUnitLinkToIt() throws {
        var b = ReportBuilder()
        b.unit(1, suites: ["M.C"], ending: "exit 1", log: "UNIQUE-LOG-LINE")
        b.failed("M.C/testA", issues: [Issue(kind: .assertion, message: "a")], unit: 1)
        b.failed("M.C/testB", issues: [Issue(kind: .assertion, message: "b")], unit: 1)
        let failures = try section("failures", of: HTMLWriter().render(b.build()))
        #expect(count("UNIQUE-LOG-LINE", in: failures) == 1)
        #expect(failures.contains("<li class=\"test failed\" id=\"f0\"><div class=\"tid\"><code>M.C/testA</code>"))
        #expect(failures.contains("Unit 1&#39;s log is shown with <a href=\"#f0\">M.C/testA</a>."))
    }

    @Test func theMatrixPutsTestsThatDifferBetweenDestinationsFirstAndOmitsAllPassed() throws {
        var b = ReportBuilder(destinations: ["a", "b"])
        for d in ["a", "b"] {
            b.passed("M.C/testAllPass", destination: d)
            b.failed("M.C/testBothFail", destination: d, issues: [Issue(kind: .assertion, message: "no")])
        }
        b.passed("M.C/testDiffers", destination: "a")
        b.failed("M.C/testDiffers", destination: "b", issues: [Issue(kind: .assertion, message: "only on b")])
        b.failed("M.D/testZ", destination: "a", issues: [Issue(kind: .assertion, message: "only on a")])
        b.passed("M.D/testZ", destination: "b")
        let html = HTMLWriter().render(b.build())
        let matrix = try section("matrix", of: html)
        #expect(matrix.contains("2 tests with an outcome that differs between destinations (listed first); 1 test passed on every destination and is not shown."))
        #expect(!matrix.contains("testAllPass"))
        let differs = try #require(matrix.range(of: "M.C/testDiffers")).lowerBound
        let z = try #require(matrix.range(of: "M.D/testZ")).lowerBound
        let both = try #require(matrix.range(of: "M.C/testBothFail")).lowerBound
        #expect(differs < z && z < both, "differing tests first, each part by id")
        #expect(matrix.contains("<tr class=\"differs\"><td><code>M.C/testDiffers</code></td><td class=\"passed\">passed</td><td class=\"failed\">failed</td></tr>"))
        #expect(matrix.contains("<tr><td><code>M.C/testBothFail</code></td><td class=\"failed\">failed</td><td class=\"failed\">failed</td></tr>"))
    }

    @Test func theTimelineHasOneBarPerUnitClassedByHowItEnded() throws {
        var b = ReportBuilder()
        b.unit(1, ending: "exit 0", startedAt: 0, duration: 4)
        b.unit(2, slot: 1, ending: "exit 1", startedAt: 0, duration: 2)
        b.unit(3, agent: "mac-1", ending: "timed out after 60.0 s", startedAt: 0, duration: 6)
        b.unit(4, agent: "mac-1", slot: 1, ending: "agent lost: connection reset", startedAt: 1, duration: 1)
        b.unit(5, slot: 1, ending: "exit 0", startedAt: 2, duration: 3)
        b.units[5]?.takenFrom = 1
        b.units[1]?.handedOver = 4
        b.passed("M.C/testA", unit: 1)
        let report = b.build()
        let html = HTMLWriter().render(report)
        let timeline = try section("timeline", of: html)
        #expect(count("<rect class=\"unit", in: timeline) == report.units.count)
        #expect(timeline.contains("<rect class=\"unit stolen passed\" data-unit=\"5\""))
        #expect(timeline.contains("<rect class=\"unit passed\" data-unit=\"1\""))
        #expect(timeline.contains("<rect class=\"unit failed\" data-unit=\"2\""))
        #expect(timeline.contains("<rect class=\"unit crashed\" data-unit=\"3\""))
        #expect(timeline.contains("<rect class=\"unit requeued\" data-unit=\"4\""))
        #expect(timeline.contains("took over tests of unit 1"))
        #expect(count("<text class=\"row\"", in: timeline) == 4, "one row per agent slot")
        #expect(timeline.contains("<line class=\"predicted\""))
        #expect(timeline.contains("<line class=\"lower-bound\""))
        // x is scaled to the span (the plan's 12.25 s predicted end is the longest): unit 3 starts at the left edge.
        #expect(timeline.contains("data-unit=\"3\" x=\"150.0\""))
    }

    /// The colour a CSS rule of the page gives (`rect.unit.failed` → `#cf222e`): its fill or background
    /// `var(--…)`, looked up in `:root`.
    private func fill(_ selector: String, in html: String) throws -> String {
        let rule = try #require(html.range(of: selector + " { "), "no rule for \(selector)")
        let body = html[rule.upperBound...].prefix { $0 != "}" }
        let use = try #require(body.range(of: "var("), "\(selector) has no colour of its own")
        let name = String(body[use.upperBound...].prefix { $0 != ")" })
        let value = try #require(html.range(of: name + ": "), "\(name) is not defined")
        return String(html[value.upperBound...].prefix { $0 != ";" })
    }

    /// Units Fanout stopped for the run's good are neither lost nor failed: one whose not-yet-started tests idle
    /// slots took over (work stealing), and one whose twin finished first (straggler backup). Their bars have calm
    /// colours and legend entries of their own, never the colour of "re-queued (agent lost…)", and their tests keep
    /// their verdicts' colours.
    @Test func unitsStoppedByStealingOrByTheirTwinHaveCalmColoursOfTheirOwn() throws {
        var b = ReportBuilder()
        b.unit(1, ending: UnitEnding.handedOver.description, startedAt: 0, duration: 6)
        b.units[1]?.handedOver = 3
        b.unit(2, slot: 1, ending: "exit 0", startedAt: 2, duration: 3)
        b.units[2]?.takenFrom = 1
        b.unit(3, agent: "mac-1", ending: "stopped: its twin (straggler backup) finished first", startedAt: 0,
               duration: 8)
        b.unit(4, agent: "mac-1", slot: 1, ending: "exit 0", startedAt: 1, duration: 2)
        b.unit(5, agent: "mac-1", slot: 1, ending: "agent lost: connection reset", startedAt: 4, duration: 1)
        b.unit(6, slot: 1, ending: "exit 1", startedAt: 5, duration: 1)
        b.units[6]?.takenFrom = 1
        b.passed("M.Stolen/testA", unit: 1)
        b.failed("M.Stolen/testB", issues: [Issue(kind: .assertion, message: "B-FAILED-BEFORE-THE-HAND-OVER")], unit: 1)
        b.passed("M.Twin/testC", unit: 4)
        let html = HTMLWriter().render(b.build())
        let timeline = try section("timeline", of: html)
        #expect(timeline.contains("<rect class=\"unit handed-over\" data-unit=\"1\""))
        #expect(timeline.contains("<rect class=\"unit twin-stopped\" data-unit=\"3\""))
        #expect(timeline.contains("<rect class=\"unit stolen passed\" data-unit=\"2\""))
        #expect(timeline.contains("<rect class=\"unit requeued\" data-unit=\"5\""), "a lost agent's unit is re-queued")
        // The stolen colour marks a unit that took over tests and passed; one that failed stays red.
        #expect(timeline.contains("<rect class=\"unit stolen failed\" data-unit=\"6\""))
        #expect(!html.contains("rect.unit.stolen {") && html.contains("rect.unit.stolen.passed {"))
        // The legend names each, and re-queued means only what went wrong.
        #expect(timeline.contains("<span class=\"key handed-over\"></span>handed its tests over (work stealing)"))
        #expect(timeline.contains("<span class=\"key twin-stopped\"></span>stopped: its twin finished first"))
        let requeued = try #require(timeline.range(of: "<span class=\"key requeued\"></span>"))
        let requeuedText = timeline[requeued.upperBound...].prefix { $0 != "<" }
        #expect(!requeuedText.contains("handed over") && !requeuedText.contains("stopped"), "\(requeuedText)")
        // Their own colours: calm (none of the alarm colours), and told apart from each other.
        let alarms = try ["rect.unit.failed", "rect.unit.crashed", "rect.unit.requeued"].map { try fill($0, in: html) }
        let handedOver = try fill("rect.unit.handed-over", in: html), twin = try fill("rect.unit.twin-stopped", in: html)
        #expect(!alarms.contains(handedOver) && !alarms.contains(twin) && handedOver != twin, "\(handedOver) \(twin)")
        #expect(try fill(".key.handed-over", in: html) == handedOver && fill(".key.twin-stopped", in: html) == twin)
        // A test that failed in the unit before it handed its other tests over is still shown failed.
        let failures = try section("failures", of: html)
        let failed = try #require(failures.range(of: "<li class=\"test failed\""))
        #expect(failures[failed.upperBound...].contains("B-FAILED-BEFORE-THE-HAND-OVER"))
    }

    @Test func estimatesSlowestFlakyPerformanceAndWarningsAreShown() throws {
        var b = ReportBuilder()
        b.classReport("M.Small", estimate: 1, actual: 1.1)
        b.classReport("M.Big", estimate: 2, actual: 30, source: "test count × 0.10 s/test")
        b.passed("M.Big/testSlow", duration: 29)
        b.flaky("M.F/testFlaky", issue: Issue(kind: .assertion, message: "once"), diagnostics: nil, firstUnit: 3, retryUnit: 4)
        b.measurement("M.P/testSort", average: 0.0123, rsd: 2.5, values: (0..<10).map { 0.012 + Double($0) * 0.0001 },
                      hardwareClass: "Xeon × 8", verdict: PerformanceVerdict(kind: .regression, baselineAverage: 0.01, change: 0.23, message: "slower"))
        b.warnings = ["history moved aside"]
        let html = HTMLWriter().render(b.build())
        let estimates = try section("estimates", of: html)
        let big = try #require(estimates.range(of: "M.Big")).lowerBound
        let small = try #require(estimates.range(of: "M.Small")).lowerBound
        #expect(big < small, "worst miss first")
        #expect(estimates.contains("<td>+28.0 s</td>"))
        #expect(try section("slowest", of: html).contains("<td><code>M.Big/testSlow</code></td><td>linux</td><td>29.0 s</td>"))
        #expect(try section("flaky", of: html).contains("M.F/testFlaky</code> · 1 failed attempt before the pass · attempt 1 on local: once"))
        let performance = try section("performance", of: html)
        #expect(performance.contains("<h3>linux · Xeon × 8</h3>"))
        #expect(performance.contains("<td>12.3 ms</td><td>2.5%</td>"))
        #expect(performance.contains("REGRESSION against 10.0 ms (+23%)"))
        #expect(count("<svg class=\"spark\"", in: performance) == 1)
        #expect(count("<polyline points=\"", in: performance) == 1)
        #expect(try section("warnings", of: html).contains("<li>history moved aside</li>"))
    }

    @Test func hostileNamesMessagesAndLogsShowAsText() {
        var b = ReportBuilder(destinations: ["linux", "<b>dest</b>"])
        let img = #""><img src=x onerror=alert(1)>"#
        b.unit(1, agent: "agent\(img)", suites: ["M.C"], ending: "exit 1",
               log: "<script>alert('log')</script>\n\u{1B}]0;owned\u{07}\(img)")
        b.failed("M.C/<script>alert(1)</script>", issues: [
            Issue(kind: .assertion, message: "<script>alert(2)</script> \(img) \u{202E}evil \u{1B}[31mred",
                  location: SourceLocation(file: "/src/\(img).swift", line: 3)),
        ], unit: 1)
        b.failed("M.C/testOther\(img)", destination: "<b>dest</b>", issues: [Issue(kind: .assertion, message: img)], unit: 1)
        b.classReport("M.C\(img)", estimate: 1, actual: 2)
        b.measurement("M.C/\(img)", average: 1, rsd: 1, values: [1, 2, 3], hardwareClass: img)
        b.warnings = ["<script>alert(3)</script>"]
        let html = HTMLWriter().render(b.build())
        #expect(count("<script", in: html) == 0, "the writer emits no script, and none comes from the report")
        #expect(!html.contains("<img"))
        #expect(!html.contains("<b>dest"))
        #expect(html.contains("M.C/&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("&lt;script&gt;alert(2)&lt;/script&gt; &quot;&gt;&lt;img src=x onerror=alert(1)&gt;"))
        #expect(html.contains("&lt;script&gt;alert(&#39;log&#39;)&lt;/script&gt;"))
        #expect(html.contains("&lt;script&gt;alert(3)&lt;/script&gt;"))
        #expect(html.contains("agent&quot;&gt;&lt;img"))
        #expect(!html.contains("\u{1B}"), "no terminal escape survives")
        #expect(!html.contains("\u{202E}"), "no bidi override survives")
        #expect(!html.contains("\u{07}"))
        #expect(HTMLEscaping.escape(#"a&b<c>"d'e"#) == "a&amp;b&lt;c&gt;&quot;d&#39;e")
    }

    @Test func thePageNeedsNoNetwork() {
        let html = HTMLWriter().render(Sample.report())
        #expect(!html.contains("http://"))
        #expect(!html.contains("https://"))
        #expect(!html.contains("src="))
        #expect(!html.contains("url("))
        #expect(!html.contains("@import"))
        #expect(count("<script", in: html) == 0)
        let hrefs = html.components(separatedBy: "href=\"").dropFirst()
        #expect(hrefs.count == 8)
        #expect(hrefs.allSatisfy { $0.hasPrefix("#") }, "only links within the page")
    }

    @Test func tenThousandTestsWithTwoThousandFailuresStayUnderFiveMegabytes() throws {
        var b = ReportBuilder(destinations: ["debug", "release"])
        let log = (1...400).map { "line \($0) " + String(repeating: "y", count: 120) }.joined(separator: "\n")
        let trace = (1...300).map { "#\($0) 0x00007f in frame\($0) " + String(repeating: "z", count: 80) }.joined(separator: "\n")
        for u in 0..<200 {
            b.unit(u, destination: u % 2 == 0 ? "debug" : "release", agent: "agent-\(u % 8)", slot: u % 4,
                   suites: (0..<30).map { "Module.Class\(u)x\($0)" }, ending: "exit 1", log: log,
                   startedAt: Double(u / 32) * 10, duration: 9)
        }
        for i in 0..<5_000 {
            for (k, d) in ["debug", "release"].enumerated() {
                let unit = (i % 100) * 2 + k
                let test = "Module\(i % 20).Class\(i % 300)/test\(i)"
                if i % 5 == 0 {
                    b.result(test, i % 10 == 0 ? .crashed : .failed, destination: d, attempts: [Attempt(
                        outcome: i % 10 == 0 ? .crashed : .failed, duration: 0.3,
                        issues: [Issue(kind: .assertion, message: "failure \(i) " + String(repeating: "x", count: 2_000),
                                       location: SourceLocation(file: "/src/Tests/Class\(i % 300).swift", line: i % 900))],
                        unit: unit, agent: "agent-\(unit % 8)", diagnostics: trace)])
                } else {
                    b.passed(test, destination: d, duration: 0.01, unit: unit)
                }
            }
        }
        let report = b.build()
        #expect(report.results.count == 10_000)
        #expect(report.counts.failures == 2_000)
        let html = HTMLWriter().render(report)
        #expect(html.utf8.count < 5_000_000, "\(html.utf8.count) bytes")
        let failures = try section("failures", of: html)
        let full = count("<li class=\"test ", in: failures), brief = count("<li class=\"brief\">", in: failures)
        #expect(full + brief == 2_000, "every failure is listed, in full or by id")
        #expect(full > 0 && full <= 200)
        #expect(failures.contains("more are listed by id only"))
        #expect(count("<rect class=\"unit", in: html) == 200)
        #expect(html.hasSuffix("</html>\n"))
    }
}
