import FanoutCore
import FanoutTestSupport
@testable import FanoutReports
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2))) struct FailureGroupsTests {
    @Test func varyingPartsAreMasked() {
        #expect(FailureGroups.normalize(#"XCTAssertEqual failed: ("41") is not equal to ("42")"#)
            == #"XCTAssertEqual failed: ("N") is not equal to ("N")"#)
        #expect(FailureGroups.normalize("Asynchronous wait failed - Exceeded timeout of 0.2 seconds")
            == "Asynchronous wait failed - Exceeded timeout of N seconds")
        #expect(FailureGroups.normalize("cannot open /tmp/run-12/file.txt: no such file")
            == "cannot open <path>: no such file")
        #expect(FailureGroups.normalize("object 0x7ffd5e8a1b20 deallocated") == "object 0x… deallocated")
        #expect(FailureGroups.normalize("request 123e4567-e89b-12d3-a456-426614174000 failed") == "request <uuid> failed")
        // Names with digits glued to letters are not numbers; only the first line counts.
        #expect(FailureGroups.normalize("test42 uses utf8\nframe 3 at 0x1") == "test42 uses utf8")
    }

    @Test func oneCauseFailingManyTestsIsOneGroupAndTheLargestComesFirst() {
        var b = ReportBuilder()
        for i in 0..<40 {
            b.failed("M.C/test\(i)", issues: [Issue(kind: .assertion, message: #"XCTAssertEqual failed: ("\#(i)") is not equal to ("\#(i + 1)")"#,
                                                   location: SourceLocation(file: "/src/Tests/C.swift", line: 10 + i))])
        }
        b.failed("M.D/testOther", issues: [Issue(kind: .assertion, message: "XCTAssertTrue failed")])
        b.crashed("M.E/testCrash", message: "Fatal error: index 5 out of range", diagnostics: "", unit: 2)
        b.passed("M.F/testFine")
        let groups = FailureGroups.groups(b.build())
        #expect(groups.count == 3)
        #expect(groups.map(\.results.count) == [40, 1, 1])
        #expect(groups[0].outcome == .failed)
        #expect(groups.flatMap(\.results).count == 42, "every test that needs attention is in exactly one group")
        #expect(Set(groups.flatMap(\.results).map(\.id)).count == 42)
    }
}

@Suite(.timeLimit(.minutes(2))) struct MarkdownWriterTests {
    @Test func aGreenRunSaysPassedWithItsCountsAndTiming() {
        var b = ReportBuilder(destinations: ["debug", "release"])
        b.passed("M.C/testA", destination: "debug")
        b.passed("M.C/testA", destination: "release")
        let text = MarkdownWriter().render(b.build())
        #expect(text.hasPrefix("## ✅ Fanout: PASSED · 2 tests · exit 0"))
        #expect(text.contains("| debug | 1 | 0 | 0 | 0 | 0 | 0 | 0 |"))
        #expect(text.contains("| release | 1 | 0 | 0 | 0 | 0 | 0 | 0 |"))
        #expect(text.contains("Wall 75.5 s · makespan 13.5 s · lower bound 11.0 s · 1.23 × LB · 2 agents, 4 slots"))
        #expect(!text.contains("### Failures"))
    }

    @Test func failuresAreGroupedWithTheirPlaceAndMessage() {
        var b = ReportBuilder()
        for i in 0..<3 {
            b.failed("M.C/test\(i)", issues: [Issue(kind: .assertion, message: "expected \(i) got \(i + 1)",
                                                  location: SourceLocation(file: "/src/Tests/C.swift", line: 7 + i))])
        }
        b.flaky("M.F/testFlaky", issue: Issue(kind: .assertion, message: "once"), diagnostics: nil, firstUnit: 3, retryUnit: 4)
        b.warnings = ["agent mac-1 was lost"]
        let text = MarkdownWriter().render(b.build())
        #expect(text.hasPrefix("## ❌ Fanout: FAILED · 4 tests · 3 need attention · exit 1"))
        #expect(text.contains("### Failures: 3 tests in 1 group"))
        #expect(text.contains("<b>3 failed</b> · <code>expected N got N</code>"))
        #expect(text.contains("- `M.C/test1` · `/src/Tests/C.swift:8` · unit 1 on local slot 0"))
        #expect(text.contains("> expected 1 got 2"))
        #expect(text.contains("### Flaky: 1 test"))
        #expect(text.contains("`M.F/testFlaky` · 1 failed attempt before the pass"))
        #expect(text.contains("### Warnings\n\n- agent mac\\-1 was lost"))
    }

    @Test func hostileTestOutputShowsAsText() {
        var b = ReportBuilder()
        b.failed("M.C/testX", issues: [Issue(kind: .assertion, message: "<script>alert(1)</script> \u{1B}]0;owned\u{07} *bold* | [link](http://x) \u{202E}evil")])
        let text = MarkdownWriter().render(b.build())
        #expect(!text.contains("<script>"))
        #expect(text.contains("&lt;script&gt;alert\\(1\\)&lt;/script&gt;"))
        #expect(!text.contains("\u{1B}"), "no terminal escape survives")
        #expect(!text.contains("\u{202E}"), "no bidi override survives")
        #expect(text.contains("\\*bold\\*"), "Markdown outside HTML blocks is escaped")
        // The group's summary line is an HTML block, where GitHub shows backslashes as they are: HTML escaping only.
        let summary = text.split(separator: "\n").first { $0.hasPrefix("<details") }.map(String.init) ?? ""
        #expect(summary.contains("<code>&lt;script&gt;alert(N)&lt;/script&gt;"), "\(summary)")
        #expect(summary.contains("*bold* | [link](http://x)"), "\(summary)")
        #expect(!summary.contains("\\"), "no backslash shows on GitHub: \(summary)")
        #expect(text.contains("\\[link\\]\\(http://x\\)"))
        #expect(text.contains("\\|"))
    }

    @Test func twentyThousandFailuresStayUnderTheCapAndSayWhatIsLeftOut() {
        var b = ReportBuilder()
        for i in 0..<20_000 {
            // Many distinct causes (one per 4 tests), each with a long message: the worst case for size.
            b.failed("Module\(i % 50).Class\(i % 400)/test\(i)",
                     issues: [Issue(kind: .assertion, message: "failure kind \(String(repeating: "x", count: i % 5000 / 4)) \(i / 4 % 2 == 0 ? "a" : "b")\(i / 4)",
                                    location: SourceLocation(file: "/src/Tests/Class\(i % 400).swift", line: i % 900))])
        }
        let report = b.build()
        let writer = MarkdownWriter(groupLimit: 10_000)
        let text = writer.render(report)
        #expect(text.utf8.count <= 1_000_000, "\(text.utf8.count) bytes")
        #expect(text.utf8.count > 900_000, "it fills what it may before cutting: \(text.utf8.count) bytes")
        #expect(text.contains("more entries are not shown: a job summary is capped at 1000 kB"))
        #expect(text.hasPrefix("## ❌ Fanout: FAILED · 20000 tests · 20000 need attention"))
        #expect(text.hasSuffix("</sub>\n"))
    }

    @Test func annotationsPointAtTheFileRelativeToTheWorkspaceAndEscapeTheirValues() {
        var b = ReportBuilder()
        b.failed("M.C/testA", issues: [Issue(kind: .assertion, message: "100% wrong,\nsecond line",
                                            location: SourceLocation(file: "/home/runner/work/app/Tests/C.swift", line: 12))])
        b.failed("M.C/testB", issues: [Issue(kind: .assertion, message: "no place")])
        for i in 0..<15 {
            b.failed("M.D/test\(i)", issues: [Issue(kind: .assertion, message: "m", location: SourceLocation(file: "/x/D.swift", line: i + 1))])
        }
        let lines = GitHubAnnotations.errors(b.build(), workspace: "/home/runner/work/app")
        #expect(lines.count == 10, "GitHub shows at most 10 error annotations per step")
        #expect(lines[0] == "::error file=Tests/C.swift,line=12,title=M.C/testA failed::100%25 wrong,%0Asecond line")
        #expect(!lines.contains { $0.contains("testB") }, "a failure without a place has no annotation")
        #expect(GitHubAnnotations.property("a:b,c") == "a%3Ab%2Cc")
    }
}
