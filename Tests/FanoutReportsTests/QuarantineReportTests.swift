import FanoutCore
import FanoutTestSupport
import Foundation
import Testing
@testable import FanoutReports
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Quarantined tests in every format: a muted failure is shown, apart from the failures, and never counted as one;
/// a test skipped by quarantine is listed with its entry.
@Suite(.timeLimit(.minutes(1))) struct QuarantineReportTests {
    static let entry = QuarantineEntry(test: "CoreTests.Network/testFetch", mode: .mute, reason: "fails 1 run in 10 <DNS>",
                                       owner: "@alice", issue: "https://example.com/issues/12", added: "2026-11-01",
                                       expires: "2026-12-01")

    /// A muted failure, a muted pass, a test skipped by quarantine, an ordinary pass.
    static func report() -> RunReport {
        var b = ReportBuilder()
        b.unit(1, suites: ["CoreTests.Network", "CoreTests.Disk"], duration: 3)
        b.failed("CoreTests.Network/testFetch", issues: [Issue(kind: .assertion, message: "lookup timed out")])
        b.passed("CoreTests.Network/testRetry")
        b.passed("CoreTests.Disk/testWrite")
        var r = b.build()
        var skipEntry = entry
        skipEntry.test = "CoreTests.Disk/testSlow"
        skipEntry.mode = .skip
        r.results.append(QuarantineEffect.skippedResult(TestID(module: "CoreTests", suite: "Disk", name: "testSlow"),
                                                         framework: .xctest, destination: r.results[0].destination,
                                                         entry: skipEntry))
        for i in r.results.indices where r.results[i].id.suite.name == "Network" { r.results[i].quarantine = entry }
        r.exitCode = Verdict.exitCode(Counts(results: r.results)).rawValue
        return r
    }

    @Test func theRunPassesAndTheCountsKeepTheMutedFailureApart() {
        let r = Self.report()
        #expect(r.exitCode == 0)
        #expect(r.counts.muted == 1 && r.counts.failed == 0 && r.counts.skipped == 1 && r.counts.passed == 2)
    }

    /// GitLab's JUnit reader (gitlabhq lib/gitlab/ci/parsers/test/junit.rb, `create_test_case`) decides a case's
    /// status by its child elements alone: `failure` → failed, else `error` → error, else `skipped` → skipped,
    /// else success; Jenkins' JUnit plugin (CaseResult) reads a case the same way. A gate fails the job on any
    /// failed or errored case. Read by those rules, the muted failure must be skipped, the muted pass a success.
    @Test func aJUnitGateReadingLikeGitLabAndJenkinsCountsNoFailure() throws {
        let xml = JUnitWriter().render(Self.report())
        let doc = try XMLTestSupport.parse(xml)
        var status: [String: String] = [:]
        for testcase in try XMLTestSupport.elements(doc, "//testcase") {
            let children = Set((testcase.children ?? []).compactMap { ($0 as? XMLElement)?.name })
            let s = children.contains("failure") ? "failed" : children.contains("error") ? "error"
                : children.contains("skipped") ? "skipped" : "success"
            status[(XMLTestSupport.attribute(testcase, "classname") ?? "") + "/" + (XMLTestSupport.attribute(testcase, "name") ?? "")] = s
        }
        #expect(status["CoreTests.Network/testFetch"] == "skipped")
        #expect(status["CoreTests.Network/testRetry"] == "success")
        #expect(status["CoreTests.Disk/testSlow"] == "skipped")
        #expect(!status.values.contains("failed") && !status.values.contains("error"), "\(status)")
        let suites = try XMLTestSupport.elements(doc, "/testsuites")
        #expect(XMLTestSupport.attribute(suites.first, "failures") == "0")
        #expect(XMLTestSupport.attribute(suites.first, "errors") == "0")
        #expect(XMLTestSupport.attribute(suites.first, "skipped") == "2")
        // The failure is not lost: its message and the entry are on the case, for the person reading it.
        let fetch = try XMLTestSupport.elements(doc, "//testcase[@name='testFetch']").first
        let skipped = try #require(fetch?.elements(forName: "skipped").first)
        #expect(XMLTestSupport.attribute(skipped, "message")?.contains("muted by quarantine, failed: lookup timed out") == true)
        #expect(fetch?.elements(forName: "system-out").first?.stringValue?.contains("lookup timed out") == true)
        let properties = (try? XMLTestSupport.elements(doc, "//testcase[@name='testFetch']/properties/property")) ?? []
        #expect(properties.contains { XMLTestSupport.attribute($0, "name") == "quarantine.expires"
            && XMLTestSupport.attribute($0, "value") == "2026-12-01" })
    }

    @Test func consoleMarkdownAndHTMLListThemApartFromTheFailures() {
        let r = Self.report()
        let console = ConsoleSummary(color: false).render(r)
        #expect(console.contains("Quarantined (2 muted, 1 of them failed and did not fail the run; 1 skipped)"))
        #expect(console.contains("muted, failed: lookup timed out"))
        #expect(console.contains("fails 1 run in 10 <DNS> · @alice, https://example.com/issues/12 · until 2026-12-01"))
        #expect(!console.contains("Failures ("), "a muted failure is not among the failures: \(console)")
        #expect(console.contains("PASSED · 1 muted test failed (quarantined, listed above)"))

        let markdown = MarkdownWriter().render(r)
        #expect(markdown.contains("## ✅ Fanout: PASSED"))
        #expect(markdown.contains("### Quarantined: 2 muted (1 failed without failing the run), 1 skipped"))
        #expect(markdown.contains("muted failures |"))
        #expect(!markdown.contains("### Failures"))

        let html = HTMLWriter().render(r)
        #expect(html.contains("<section id=\"quarantined\">"))
        #expect(html.contains("fails 1 run in 10 &lt;DNS&gt;"), "escaped")
        #expect(html.contains("<th>muted failures</th>"))
    }

    @Test func reportJSONCarriesTheEntryAndReadsBack() throws {
        let data = try JSONReportWriter.encoder(indented: false).encode(Self.report())
        let back = try JSONConventions.decoder().decode(RunReport.self, from: data)
        #expect(back.results.first { $0.id.name == "testFetch" }?.quarantine == Self.entry)
        #expect(back.results.first { $0.id.name == "testWrite" }?.quarantine == nil)
        #expect(back.counts.muted == 1)
    }
}
