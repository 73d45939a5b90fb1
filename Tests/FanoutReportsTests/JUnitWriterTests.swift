import FanoutCore
import FanoutTestSupport
import Foundation
import Testing
@testable import FanoutReports
#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite(.serialized, .timeLimit(.minutes(2))) struct JUnitWriterTests {
    let report = Sample.report()

    private func document(_ report: RunReport, writer: JUnitWriter = JUnitWriter()) throws -> XMLDocument {
        try XMLTestSupport.parse(writer.render(report))
    }

    /// Jenkins' JUnit Attachments convention: one `[[ATTACHMENT|path]]` line per file, in the failing case's output.
    @Test func attachmentsAreLinkedInTheFailingCasesOutput() throws {
        var b = ReportBuilder()
        var attempt = Attempt(outcome: .failed, duration: 1, issues: [Issue(kind: .assertion, message: "no button")],
                              unit: 1, agent: "mac-1")
        attempt.attachments = ["attachments/d/App.LoginTests/testLogin/unit1-shot.png"]
        b.result("App.LoginTests/testLogin", .failed, attempts: [attempt])
        let doc = try document(b.build())
        let out = try doc.nodes(forXPath: "//testcase[@name='testLogin']/system-out").first?.stringValue ?? ""
        #expect(out.hasPrefix("[[ATTACHMENT|attachments/d/App.LoginTests/testLogin/unit1-shot.png]]"), "\(out.prefix(200))")
    }

    private func testcase(_ doc: XMLDocument, classname: String, name: String) throws -> XMLElement {
        let all = try XMLTestSupport.elements(doc, "//testcase")
        return try #require(all.first {
            XMLTestSupport.attribute($0, "classname") == classname && XMLTestSupport.attribute($0, "name") == name
        }, "no testcase \(classname) \(name)")
    }

    private func attr(_ element: XMLElement?, _ name: String) -> String? { XMLTestSupport.attribute(element, name) }

    @Test func totalsOnTestsuites() throws {
        let doc = try document(report)
        let root = try #require(doc.rootElement())
        #expect(root.name == "testsuites")
        #expect(attr(root, "name") == "fanout \(report.runID)")
        #expect(attr(root, "tests") == "11")
        #expect(attr(root, "failures") == "2")
        #expect(attr(root, "errors") == "3", "crashed + timed-out + not-run")
        #expect(attr(root, "skipped") == "1")
        let total = report.results.reduce(0) { $0 + $1.duration }
        #expect(attr(root, "time") == String(format3: total))
    }

    @Test func oneSuitePerDestinationAndModule() throws {
        let doc = try document(report)
        let suites = try XMLTestSupport.elements(doc, "/testsuites/testsuite")
        #expect(suites.map { attr($0, "name") } == ["linux/CoreTests", "linux/ParserTests", "linux-release/CoreTests"])
        let counts = suites.map { s in ["tests", "failures", "errors", "skipped"].map { attr(s, $0) ?? "?" } }
        #expect(counts == [["5", "1", "0", "1"], ["4", "0", "3", "0"], ["2", "1", "0", "0"]])
        for suite in suites {
            let destination = try XMLTestSupport.elements(doc, "//testsuite[@name='\(attr(suite, "name")!)']"
                + "/properties/property[@name='destination']")
            #expect(destination.count == 1)
            let expected = attr(suite, "name")?.split(separator: "/").first.map(String.init)
            #expect(attr(destination.first, "value") == expected)
            #expect(Double(attr(suite, "time") ?? "") != nil)
        }
        // Earliest unit of linux/CoreTests started 0.5 s after 12:00:00.25.
        #expect(attr(suites.first, "timestamp") == "2024-05-01T12:00:00")
    }

    @Test func sameClassNameInTwoModulesStaysApart() throws {
        let doc = try document(report)
        let core = try testcase(doc, classname: "CoreTests.ApproximateEqualityTests", name: "testClose [linux]")
        let parser = try testcase(doc, classname: "ParserTests.ApproximateEqualityTests", name: "testClose [linux]")
        #expect((core.parent as? XMLElement).flatMap { attr($0, "name") } == "linux/CoreTests")
        #expect((parser.parent as? XMLElement).flatMap { attr($0, "name") } == "linux/ParserTests")
        #expect(attr(core, "time") == "0.012")
        #expect(core.children?.isEmpty ?? true, "a plain pass has no children")
    }

    @Test func destinationSuffixOnlyWithSeveralDestinations() throws {
        var b = ReportBuilder()
        b.passed("M.C/testA")
        let doc = try document(b.build())
        #expect(try XMLTestSupport.elements(doc, "//testcase").map { attr($0, "name") } == ["testA"])
    }

    @Test func failureListsEveryIssue() throws {
        let doc = try document(report)
        let test = try testcase(doc, classname: "CoreTests.ApproximateEqualityTests", name: "testFar [linux]")
        let failure = try #require(test.elements(forName: "failure").first)
        #expect(attr(failure, "message") == Sample.firstMessage)
        #expect(attr(failure, "type") == "assertion")
        let body = failure.stringValue ?? ""
        #expect(body.contains("\(Sample.failedFile):18: \(Sample.firstMessage)"))
        #expect(body.contains("\(Sample.failedFile):19: \(Sample.secondMessage)"))
        #expect(attr(test, "file") == Sample.failedFile)
        #expect(attr(test, "line") == "18")
        #expect(test.elements(forName: "error").isEmpty)
        // The failing case carries its unit's (small) log, ANSI codes stripped, CRLF folded.
        let out = try #require(test.elements(forName: "system-out").first?.stringValue)
        #expect(out.contains("Test Suite 'Selected tests' started\nLOG-OF-UNIT-1\nend of unit 1"))
        #expect(!out.contains("\u{1B}") && !out.contains("[32m") && !out.contains("\r"))
    }

    @Test func crashIsAnErrorWithTheBacktrace() throws {
        let doc = try document(report)
        let test = try testcase(doc, classname: "ParserTests.Crashy", name: "testBoom [linux]")
        let error = try #require(test.elements(forName: "error").first)
        #expect(attr(error, "type") == "crash")
        #expect(attr(error, "message") == "crashed: signal 11 (SIGSEGV)")
        let body = error.stringValue ?? ""
        #expect(body.contains("#30 0x0000 in frame30 at /src/Sources/Crash.swift:30"))
        #expect(body.contains("ended: signal 11"))
        #expect(test.elements(forName: "failure").isEmpty)
    }

    @Test func timeoutAndNotRunAreErrorsOfTheirOwnType() throws {
        let doc = try document(report)
        let hang = try testcase(doc, classname: "ParserTests.Slow", name: "testHang [linux]")
        let timeout = try #require(hang.elements(forName: "error").first)
        #expect(attr(timeout, "type") == "timeout")
        #expect(attr(timeout, "message") == "timed out after 60.00 s (limit of its unit)")
        #expect(timeout.stringValue?.contains("HANG-DIAGNOSTICS") == true)

        let never = try testcase(doc, classname: "ParserTests.Lost", name: "testNever [linux]")
        let notRun = try #require(never.elements(forName: "error").first)
        #expect(attr(notRun, "type") == "not-run")
        #expect(attr(notRun, "message") == "agent mac-2 lost and the re-queue budget is spent")
    }

    @Test func skippedCarriesItsReason() throws {
        let doc = try document(report)
        let test = try testcase(doc, classname: "CoreTests.Arithmetic", name: "testSkipped [linux]")
        let skipped = try #require(test.elements(forName: "skipped").first)
        #expect(attr(skipped, "message") == "not supported on Linux")
        #expect(test.elements(forName: "failure").isEmpty && test.elements(forName: "error").isEmpty)
    }

    @Test func flakyIsAPassWithOneFlakyFailurePerFailedAttempt() throws {
        let doc = try document(report)
        let test = try testcase(doc, classname: "CoreTests.Network", name: "testRetry [linux]")
        #expect(test.elements(forName: "failure").isEmpty && test.elements(forName: "error").isEmpty)
        let flakes = test.elements(forName: "flakyFailure")
        #expect(flakes.count == 1)
        #expect(attr(flakes.first, "type") == "thrown")
        #expect(attr(flakes.first, "message") == #"threw error "URLError(-1001)""#)
        let trace = flakes.first?.elements(forName: "stackTrace").first?.stringValue ?? ""
        #expect(trace.contains(#"/src/Tests/CoreTests/NetworkTests.swift:40: threw error "URLError(-1001)""#))
        #expect(trace.contains("attempt 1 of 2"))
        let systemErr = flakes.first?.elements(forName: "system-err").first?.stringValue
        #expect(systemErr == "FLAKY-DIAGNOSTICS connection reset")
        #expect(attr(test, "time") == "0.250", "the time of the attempt that passed")
    }

    @Test func repeatedFailuresBecomeReruns() throws {
        var b = ReportBuilder()
        b.result("M.C/testBad", .failed, attempts: [
            Attempt(outcome: .crashed, duration: 1, issues: [Issue(kind: .crash, message: "signal 6")], unit: 1,
                    agent: "local", diagnostics: "abort()"),
            Attempt(outcome: .failed, duration: 2, issues: [Issue(kind: .assertion, message: "still wrong")], unit: 2,
                    agent: "local"),
        ])
        let doc = try document(b.build())
        let test = try testcase(doc, classname: "M.C", name: "testBad")
        #expect(attr(test.elements(forName: "failure").first, "message") == "still wrong")
        let reruns = test.elements(forName: "rerunError")
        #expect(reruns.count == 1)
        #expect(attr(reruns.first, "type") == "crash")
        #expect(reruns.first?.elements(forName: "system-err").first?.stringValue == "abort()")
    }

    /// What CI systems read besides the counts: the shard of a sharded run and the agents on every suite,
    /// `classname="Module.Class"`, `file`/`line` on a failure, and Surefire's `rerunFailure` for earlier attempts.
    @Test func shardAgentsAndTheAttributesCIReadsAreOnEverySuite() throws {
        var b = ReportBuilder()
        b.unit(1, agent: "linux-1")
        b.unit(2, agent: "linux-2")
        b.passed("AppTests.LoginTests/testA", unit: 1)
        b.result("AppTests.LoginTests/testB", .failed, attempts: [
            Attempt(outcome: .failed, duration: 1, issues: [Issue(kind: .assertion, message: "first")], unit: 1,
                    agent: "linux-1"),
            Attempt(outcome: .failed, duration: 1,
                    issues: [Issue(kind: .assertion, message: "again",
                                   location: SourceLocation(file: "Tests/AppTests/LoginTests.swift", line: 42))],
                    unit: 2, agent: "linux-2"),
        ])
        b.passed("CoreTests.MathTests/testAdd", unit: 2)
        var report = b.build()
        report.shard = Shard(index: 2, count: 4)
        let doc = try document(report)
        for suite in try XMLTestSupport.elements(doc, "/testsuites/testsuite") {
            let name = try #require(attr(suite, "name"))
            func property(_ key: String) throws -> [String?] {
                try XMLTestSupport.elements(doc, "//testsuite[@name='\(name)']/properties/property[@name='\(key)']")
                    .map { attr($0, "value") }
            }
            #expect(try property("shard") == ["2/4"], "\(name)")
            #expect(try property("fanout.run-id") == [report.runID], "\(name)")
            #expect(try property("agents") == [name.hasSuffix("AppTests") ? "linux-1, linux-2" : "linux-2"], "\(name)")
        }
        let failed = try testcase(doc, classname: "AppTests.LoginTests", name: "testB")
        #expect(attr(failed, "file") == "Tests/AppTests/LoginTests.swift" && attr(failed, "line") == "42")
        #expect(attr(failed.elements(forName: "failure").first, "message") == "again")
        let rerun = try #require(failed.elements(forName: "rerunFailure").first)
        #expect(attr(rerun, "message") == "first")

        report.shard = nil
        #expect(try XMLTestSupport.elements(try document(report), "//property[@name='shard']").isEmpty,
                "no shard property on a run that was not sharded")
    }

    @Test func eachUnitLogAppearsOnceAtSuiteLevel() throws {
        let doc = try document(report)
        let suiteOutputs = try XMLTestSupport.elements(doc, "/testsuites/testsuite/system-out")
            .compactMap(\.stringValue)
        for marker in ["LOG-OF-UNIT-1", "LOG-OF-UNIT-2", "LOG-OF-UNIT-3", "LOG-OF-UNIT-4", "LOG-OF-UNIT-6",
                       "LOG-OF-UNIT-7"] {
            let count = suiteOutputs.reduce(0) { $0 + $1.components(separatedBy: marker).count - 1 }
            #expect(count == 1, "\(marker) appears \(count) times in suite outputs")
        }
        // The unit's command is there to reproduce it by hand.
        #expect(suiteOutputs.joined().contains("$ /opt/bin/FanoutPackageTests.xctest ParserTests.Crashy"))
        #expect(suiteOutputs.joined().contains("=== unit 5 · agent mac-2 slot 0"))
        #expect(suiteOutputs.joined().contains("(no output)"))
    }

    @Test func passingUnitLogsCanBeLeftOut() throws {
        let doc = try document(report, writer: JUnitWriter(includePassingUnitLogs: false))
        let all = try XMLTestSupport.elements(doc, "/testsuites/testsuite/system-out")
            .compactMap(\.stringValue).joined()
        #expect(!all.contains("LOG-OF-UNIT-2"))
        #expect(!all.contains("LOG-OF-UNIT-6"))
        #expect(all.contains("LOG-OF-UNIT-1") && all.contains("LOG-OF-UNIT-3"))
    }

    @Test func largeLogsAreCutToTheirTailInTheTestCase() throws {
        var b = ReportBuilder()
        let log = (1...5_000).map { "line \($0)" }.joined(separator: "\n")
        b.unit(1, suites: ["M.C"], ending: "exit 1", log: log)
        b.failed("M.C/testX", issues: [Issue(kind: .assertion, message: "no")], unit: 1)
        let doc = try document(b.build(), writer: JUnitWriter(inlineLogLimit: 1_000, inlineLogTailLines: 10))
        let test = try testcase(doc, classname: "M.C", name: "testX")
        let out = try #require(test.elements(forName: "system-out").first?.stringValue)
        #expect(out.hasSuffix("line 4991\nline 4992\nline 4993\nline 4994\nline 4995\nline 4996\nline 4997\n"
            + "line 4998\nline 4999\nline 5000"))
        #expect(!out.contains("line 4990\n"))
        #expect(out.contains("4990 earlier lines"))
        // The whole log is still in the suite.
        let suiteOut = try XMLTestSupport.elements(doc, "/testsuites/testsuite/system-out").first?.stringValue
        #expect(suiteOut?.contains("line 1\nline 2\n") == true)
    }

    @Test func emptyReportIsStillAValidDocument() throws {
        let doc = try document(ReportBuilder().build())
        #expect(attr(doc.rootElement(), "tests") == "0")
        #expect(try XMLTestSupport.elements(doc, "//testsuite").isEmpty)
    }

    @Test func hostileNamesMessagesAndLogsAreEscaped() throws {
        let name = "test \"quoted\" & 'single' <script>alert('x')</script> 🚀"
            + "\u{0}\u{1}\u{7}\u{B}\u{C}\u{1F}\u{FFFE}\u{FFFF}"
        let message = "expected <a> & \"b\"\nsecond line\twith tab\r\u{1B}[31mred\u{1B}[0m ]]> end"
        let log = "ok\u{1B}]8;;https://x.test\u{7}link\u{1B}]8;;\u{7} \u{1B}[2K\u{1B}[1Gprogress\u{8}\u{0} <done> & ]]>"
        var b = ReportBuilder()
        b.unit(1, suites: ["Mod.C<&>"], ending: "exit 1", log: log)
        b.result("Mod.C<&>/\(name)", .failed, attempts: [Attempt(
            outcome: .failed, duration: 0.1,
            issues: [Issue(kind: .assertion, message: message,
                           location: SourceLocation(file: "/a&b/<x>.swift", line: 3))],
            unit: 1, agent: "local", diagnostics: nil)])
        let xml = JUnitWriter().render(b.build())
        #expect(!xml.contains("<script>"))
        #expect(!xml.contains("\u{1B}"))
        let doc = try XMLTestSupport.parse(xml)
        let test = try #require(try XMLTestSupport.elements(doc, "//testcase").first)
        let cleanName = "test \"quoted\" & 'single' <script>alert('x')</script> 🚀"
            + String(repeating: "\u{FFFD}", count: 8)
        #expect(attr(test, "name") == cleanName)
        #expect(attr(test, "classname") == "Mod.C<&>")
        #expect(attr(test, "file") == "/a&b/<x>.swift")
        let failure = try #require(test.elements(forName: "failure").first)
        // Newlines, tabs and CR inside an attribute survive parsing; ANSI codes do not.
        #expect(attr(failure, "message") == "expected <a> & \"b\"\nsecond line\twith tab\rred ]]> end")
        #expect(failure.stringValue?.contains("/a&b/<x>.swift:3: expected <a> & \"b\"") == true)
        let out = try #require(test.elements(forName: "system-out").first?.stringValue)
        #expect(out.hasSuffix("oklink progress\u{FFFD}\u{FFFD} <done> & ]]>"))
        let property = try XMLTestSupport.elements(doc, "//property[@name='module']").first
        #expect(attr(property, "value") == "Mod")
    }
}
