import FanoutCore
import FanoutTestSupport
import Foundation
import Testing
@testable import FanoutReports

/// Selective testing in every format: each skipped test target with the run that vouches for it, why each other
/// one ran, and a run with nothing to run that says so; target names are escaped like any text from the package.
@Suite(.timeLimit(.minutes(1))) struct SelectiveReportTests {
    static func decision(_ target: String, cause: SelectiveCause, reason: String) -> SelectiveDecision {
        SelectiveDecision(target: target, module: target, destination: "local", cause: cause, reason: reason,
                          fingerprint: String(repeating: "a", count: 64))
    }

    static func report(ran: Bool = true) -> RunReport {
        var b = ReportBuilder()
        if ran {
            b.unit(1, suites: ["BothTests.BothTests"], duration: 1)
            b.passed("BothTests.BothTests/testLeft")
        }
        var r = b.build()
        if !ran { r.results = [] }
        var selective = SelectiveReport(decisions: [
            decision("<Leaf>Tests", cause: .unchanged, reason: "unchanged since run r1 at commit 1a2b3c4d5e6f"),
            decision("BothTests", cause: .changed, reason: "changed since its last full pass (run r1 at commit 1a2b3c4d5e6f): files of Right"),
        ], notes: ["ios runs xcodebuild: selective testing covers Swift packages only"])
        if !ran { selective.decisions[1] = decision("BothTests", cause: .unchanged, reason: "unchanged since run r1 at commit 1a2b3c4d5e6f") }
        selective.filesHashed = 14
        selective.hashSeconds = 0.01
        r.selective = selective
        r.exitCode = 0
        return r
    }

    @Test func theConsoleListsEverySkipWithItsEvidenceAndWhyTheOthersRan() {
        let console = ConsoleSummary(color: false, width: 200).render(Self.report())
        #expect(console.contains("Selective: 1 test target skipped as unchanged, 1 run · the inputs of 14 files hashed"))
        #expect(console.contains("<Leaf>Tests: skipped: unchanged since run r1 at commit 1a2b3c4d5e6f"))
        #expect(console.contains("BothTests: ran: changed since its last full pass (run r1 at commit 1a2b3c4d5e6f): files of Right"))
        #expect(console.contains("note: ios runs xcodebuild"))
        #expect(console.contains("1 test target skipped as unchanged (selective)"), "the closing line counts the skips")
    }

    @Test func nothingToRunSaysWhyItPassed() {
        let console = ConsoleSummary(color: false, width: 200).render(Self.report(ran: false))
        #expect(console.contains("PASSED · nothing to run: every test target is unchanged since its last full pass (selective)"))
    }

    @Test func markdownAndHTMLShowTheSameLinesEscaped() {
        let markdown = MarkdownWriter().render(Self.report())
        #expect(markdown.contains("### Selective testing: 1 test target skipped as unchanged, 1 run"))
        #expect(markdown.contains("`<Leaf>Tests` · skipped: unchanged since run r1 at commit 1a2b3c4d5e6f"))
        let html = HTMLWriter().render(Self.report())
        #expect(html.contains("<section id=\"selective\">"))
        #expect(html.contains("&lt;Leaf&gt;Tests"))
        #expect(!html.contains("<Leaf>"), "a target's name is text, never markup")
        #expect(html.contains("changed since its last full pass (run r1 at commit 1a2b3c4d5e6f): files of Right"))
    }

    @Test func reportJSONKeepsEveryDecision() throws {
        let r = Self.report()
        let data = try JSONReportWriter().encode(r)
        let back = try JSONReportReader().decode(data)
        #expect(back.selective == r.selective)
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let decisions = (json?["selective"] as? [String: Any])?["decisions"] as? [[String: Any]]
        #expect(decisions?.first?["cause"] as? String == "unchanged")
        #expect(decisions?.last?["cause"] as? String == "changed")
    }
}
