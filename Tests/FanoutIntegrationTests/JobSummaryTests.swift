import FanoutAgents
import FanoutCore
import Foundation
import Testing

/// `fanout run` as a GitHub Actions step: summary.md beside report.json, the same text appended to the step summary,
/// error annotations on the failing line, and `fanout report markdown` giving the same text from report.json (and
/// `fanout report html` the same report.html).
@Suite(.timeLimit(.minutes(3))) struct JobSummaryTests {
    @Test func aRunOnGitHubActionsWritesTheStepSummaryAndAnnotatesTheFailure() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let config = dir.file("fanout.yml")
        try "destination:\n  name: local\n  environment: { DEMO_FAIL: \"1\" }\n".write(toFile: config, atomically: true, encoding: .utf8)
        let stepSummary = dir.file("step-summary.md")
        try "earlier step\n".write(toFile: stepSummary, atomically: true, encoding: .utf8)
        let fanout = try fanoutExecutable()
        let line = "cd \(ShellQuote.quote(dir.path)) && GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=\(ShellQuote.quote(stepSummary)) "
            + "GITHUB_WORKSPACE=\(ShellQuote.quote(repositoryRoot.path)) exec "
            + ShellQuote.join([fanout, "run", "--config", config, "--bundle", bundle, "--filter", "ArithmeticTests",
                               "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite")])
        let (ending, out, _) = await LocalTransport(slots: 1).capture(Command(executable: "/bin/sh", arguments: ["-c", line]), timeout: 120)
        #expect(ending == .exited(1), "a failing test fails the step")
        let stdout = String(decoding: out, as: UTF8.self)

        let summary = try String(contentsOfFile: dir.file("r/summary.md"), encoding: .utf8)
        #expect(summary.hasPrefix("## ❌ Fanout: FAILED · 5 tests · 1 need attention · exit 1"))
        #expect(summary.contains("`DemoKitTests.ArithmeticTests/testMultiply`"))
        #expect(summary.contains("deliberate failure"))
        let published = try String(contentsOfFile: stepSummary, encoding: .utf8)
        #expect(published == "earlier step\n" + summary, "appended after what earlier steps wrote, never replacing it")

        let annotations = stdout.split(separator: "\n").filter { $0.hasPrefix("::error ") }
        #expect(annotations.count == 1, "\(stdout)")
        #expect(annotations.first?.hasPrefix("::error file=Tests/Fixtures/DemoSuite/Tests/DemoKitTests/ArithmeticTests.swift,line=21,") == true,
                "the failing line, relative to the workspace: \(annotations)")

        let (code, again, err) = try await runCLI(["report", "markdown", "--from", dir.file("r/report.json")])
        #expect(code == 0, "\(err)")
        #expect(again == summary, "the same text from report.json alone")
        let (badCode, _, badErr) = try await runCLI(["report", "markdown", "--from", dir.file("missing.json")])
        #expect(badCode == 2)
        #expect(badErr.contains("missing.json"))

        // report.html beside it, named on the Report line, and `fanout report html` writes the same page again.
        #expect(stdout.contains("/r/summary.md and \(dir.file("r"))/report.html"), "\(stdout)")
        let page = try String(contentsOfFile: dir.file("r/report.html"), encoding: .utf8)
        #expect(page.contains("<span class=\"verdict failed\">FAILED</span>"))
        #expect(page.contains("DemoKitTests.ArithmeticTests/testMultiply"))
        let (htmlCode, written, htmlErr) = try await runCLI(["report", "html", "--from", dir.file("r/report.json"),
                                                            "--out", dir.file("again.html")])
        #expect(htmlCode == 0, "\(htmlErr)")
        #expect(written == dir.file("again.html") + "\n", "it says where the page went")
        #expect(try String(contentsOfFile: dir.file("again.html"), encoding: .utf8) == page)
    }
}
