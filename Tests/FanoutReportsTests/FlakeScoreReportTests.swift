import FanoutCore
import FanoutTestSupport
import Foundation
import Testing
@testable import FanoutReports

/// A test's flake score, next to its result in every format: whether a failure is likely a flake, from report.json
/// alone.
@Suite(.timeLimit(.minutes(1))) struct FlakeScoreReportTests {
    static let score = FlakeScore(attempts: 24, failures: 3, runs: 20, flakyRuns: 1, mixedProducts: 2,
                                  firstSeen: Date(timeIntervalSince1970: 1_800_000_000),
                                  lastSeen: Date(timeIntervalSince1970: 1_800_086_400))
    static let summary = "flake score 12.5 % (4.3-31.0 %): 3 of 24 attempts failed on builds it also passed on"

    /// One failed test and one flaky test with scores, one failed test without.
    static func report() -> RunReport {
        var b = ReportBuilder()
        b.unit(1, suites: ["CoreTests.Network"], duration: 3)
        b.unit(2, suites: ["CoreTests.Network"], duration: 1)
        b.failed("CoreTests.Network/testFetch", issues: [Issue(kind: .assertion, message: "XCTAssertEqual failed")])
        b.failed("CoreTests.Network/testBroken", issues: [Issue(kind: .assertion, message: "always fails")])
        b.flaky("CoreTests.Network/testRetry", issue: Issue(kind: .assertion, message: "timed out <waiting>"),
                diagnostics: nil, firstUnit: 1, retryUnit: 2)
        var r = b.build()
        for i in r.results.indices where r.results[i].id.name != "testBroken" { r.results[i].flakeScore = score }
        return r
    }

    @Test func theSummarySaysTheRateItsIntervalAndTheEvidence() {
        #expect(Self.score.summary == Self.summary)
    }

    @Test func everyFormatShowsItNextToTheTest() throws {
        let r = Self.report()
        let console = ConsoleSummary(color: false).render(r)
        #expect(console.components(separatedBy: Self.summary).count == 3, "the failure and the flaky test: \(console)")
        let markdown = MarkdownWriter().render(r)
        #expect(markdown.components(separatedBy: MarkdownWriter.escape(Self.summary)).count == 3, "\(markdown)")
        let html = HTMLWriter().render(r)
        #expect(html.components(separatedBy: Self.summary).count == 3)
        #expect(html.contains("<p class=\"flake\">" + Self.summary + "</p>"))
    }

    @Test func reportJSONCarriesTheCountsAndTheDerivedInterval() throws {
        let data = try JSONReportWriter.encoder(indented: false).encode(Self.report())
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let results = try #require(json["results"] as? [[String: Any]])
        let fetch = try #require(results.first { ($0["id"] as? [String: Any])?["name"] as? String == "testFetch" }
            ?? results.first { "\($0["id"] ?? "")".contains("testFetch") })
        let score = try #require(fetch["flakeScore"] as? [String: Any], "\(fetch)")
        #expect(score["attempts"] as? Int == 24 && score["failures"] as? Int == 3 && score["mixedProducts"] as? Int == 2)
        #expect(score["rate"] as? Double == 0.125)
        let low = try #require(score["low"] as? Double), high = try #require(score["high"] as? Double)
        #expect(abs(low - 0.0434) < 0.001 && abs(high - 0.3100) < 0.001, "\(low)-\(high)")
        #expect(results.first { "\($0["id"] ?? "")".contains("testBroken") }?["flakeScore"] == nil, "no evidence, no score")
        // Read back: the counts decide, the derived fields are recomputed.
        let back = try JSONConventions.decoder().decode(RunReport.self, from: data)
        #expect(back.results.first { $0.id.name == "testFetch" }?.flakeScore == Self.score)
    }
}
