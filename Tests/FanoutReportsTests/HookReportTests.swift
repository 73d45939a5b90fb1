import FanoutCore
import FanoutReports
import Foundation
import Testing

/// Hooks in the report: the console's line, the HTML page's section (a hook that did not pass, with its output,
/// escaped), and report.json keeping every field.
@Suite struct HookReportTests {
    static func report() -> RunReport {
        var report = Sample.report()
        report.hooks = [
            HookReport(scope: .run, phase: .setUp, command: "./prepare.sh", status: .passed, detail: "exit 0",
                       startedAt: 0.1, duration: 0.5, output: ""),
            HookReport(scope: .slot, phase: .setUp, agent: "mac-1", slot: 1, worker: 3,
                       command: #"createdb "app_test_$FANOUT_WORKER""#, status: .failed, detail: "exit 1", startedAt: 0.7,
                       duration: 0.25, output: "createdb: error: <database> \"app_test_3\" already exists\n"),
            HookReport(scope: .slot, phase: .tearDown, agent: "mac-1", slot: 1, worker: 3, command: "dropdb x",
                       status: .passed, detail: "exit 0", startedAt: 2, duration: 2.5, output: ""),
        ]
        return report
    }

    @Test func theConsoleSaysHowManyHowLongAndWhichDidNotPass() {
        let text = ConsoleSummary(color: false).render(Self.report())
        let line = text.components(separatedBy: "  hooks        ").dropFirst().first?.components(separatedBy: "\n  wall").first
            .map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        #expect(line == "3 hooks, 3.25 s in all (longest: slot 1 (worker 3) of mac-1 teardown, 2.50 s) · 1 did not pass (see warnings)",
                "\(text)")
        #expect(!ConsoleSummary(color: false).render(Sample.report()).contains("hooks  "), "no hooks, no line")
    }

    @Test func thePageShowsAFailedHookWithItsOutputEscaped() {
        let html = HTMLWriter().render(Self.report())
        #expect(html.contains("<a href=\"#hooks\">Hooks</a>"))
        #expect(html.contains("<section id=\"hooks\">"))
        #expect(html.contains("3 hooks, 3.25 s in all; 1 did not pass:"))
        #expect(html.contains("slot 1 (worker 3) of mac-1 set-up: failed (exit 1)"))
        #expect(html.contains("createdb: error: &lt;database&gt; &quot;app_test_3&quot; already exists")
                || html.contains("createdb: error: &lt;database&gt; \"app_test_3\" already exists"), "escaped output")
        #expect(!html.contains("<database>"))
        #expect(!HTMLWriter().render(Sample.report()).contains("id=\"hooks\""), "no hooks, no section")
    }

    @Test func reportJSONKeepsEveryField() throws {
        let report = Self.report()
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(report)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        #expect(try decoder.decode(RunReport.self, from: data).hooks == report.hooks)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""phase":"set_up""#) && text.contains(#""status":"failed""#) && text.contains(#""worker":3"#))
    }
}
