import FanoutCore
import FanoutTestSupport
import Foundation
import Testing
@testable import FanoutReports

@Suite(.timeLimit(.minutes(2))) struct ConsoleSummaryTests {
    let report = Sample.report()
    var plain: String { ConsoleSummary(color: false).render(report) }

    /// The text with wrapped lines joined again (a line break plus its continuation indent become one space), so a
    /// test can look for a whole message whatever the width.
    private func unwrapped(_ text: String) -> String {
        text.replacingOccurrences(of: #"\n {7,}"#, with: " ", options: .regularExpression)
    }

    private func visibleLines(_ text: String) -> [String] {
        TextSanitizer.strippingANSI(text).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    @Test func headerNamesRunDestinationsAgentsAndSlots() throws {
        let first = try #require(plain.split(separator: "\n").first)
        #expect(first == "Fanout run 2024-05-01-120000-ab12 · destinations linux, linux-release · 2 agents, 4 slots")
        #expect(plain.contains("  agents: local (local, 2 slots), mac-1 (ssh 127.0.1.2, 2 slots)\n"))
        #expect(plain.contains("  fanout 0.1.0 · product /src/Demo/.build/debug/DemoPackageTests.xctest\n"))
    }

    @Test func countsLineAddsUpToTheTotal() {
        #expect(plain.contains(
            "11 tests: 4 passed, 2 failed, 1 crashed, 1 timed out, 1 not run, 1 skipped, 1 flaky"))
        #expect(plain.contains("  linux: 9 tests: 3 passed, 1 failed, 1 crashed"))
        #expect(plain.contains("  linux-release: 2 tests: 1 passed, 1 failed\n"))
    }

    @Test func everyFailureShowsItsLocationAndMessage() {
        let text = unwrapped(plain)
        #expect(text.contains("FAILED    CoreTests.ApproximateEqualityTests/testFar · linux\n"))
        #expect(text.contains("      \(Sample.failedFile):18: \(Sample.firstMessage)"))
        #expect(text.contains("      \(Sample.failedFile):19: \(Sample.secondMessage)"))
        #expect(text.contains("FAILED    CoreTests.ApproximateEqualityTests/testFar · linux-release"))
        #expect(text.contains("\(Sample.failedFile):18: RELEASE-ONLY mismatch"))
        #expect(text.contains("CRASHED   ParserTests.Crashy/testBoom · linux\n      crashed: signal 11 (SIGSEGV)"))
        #expect(text.contains("TIMED OUT ParserTests.Slow/testHang · linux\n      timed out after 60.00 s"))
        #expect(text.contains("NOT RUN   ParserTests.Lost/testNever · linux\n"
            + "      agent mac-2 lost and the re-queue budget is spent"))
        #expect(text.contains("ran on agent mac-1, unit 3 (slot 0, 0.50 s, ended: signal 11)"))
        // Failures are not listed among the passes: exactly five entries.
        let failuresSection = text.components(separatedBy: "Failures (5)").last ?? ""
        #expect(!failuresSection.contains("testClose"))
    }

    @Test func crashShowsTheEndOfItsBacktraceIndented() {
        let text = plain
        #expect(text.contains("last 15 lines of the diagnostics:"))
        #expect(text.contains("      | #30 0x0000 in frame30 at /src/Sources/Crash.swift:30\n"))
        #expect(text.contains("      | #16 0x0000 in frame16"))
        #expect(!text.contains("#15 0x0000 in frame15 "), "only the last 15 lines")
        #expect(text.contains("      | HANG-DIAGNOSTICS waiting on semaphore"))
    }

    @Test func flakyTestsAreListedWithTheirFirstFailure() {
        let text = plain
        #expect(text.contains("Flaky (1): passed on a retry after failing"))
        #expect(text.contains("FLAKY     CoreTests.Network/testRetry · linux"))
        #expect(text.contains("attempt 1 of 2 failed on agent local, unit 1:"))
        #expect(text.contains(#"/src/Tests/CoreTests/NetworkTests.swift:40: threw error "URLError(-1001)""#))
    }

    @Test func noEscapeCodesWithoutColorAndSomeWithIt() {
        #expect(!plain.contains("\u{1B}"))
        let colored = ConsoleSummary(color: true).render(report)
        #expect(colored.contains("\u{1B}[1;31mFAILED"))
        #expect(TextSanitizer.strippingANSI(colored) == plain, "color changes nothing but the codes")
    }

    @Test func hostileTextCannotInjectEscapeCodes() {
        var b = ReportBuilder()
        b.failed("M.C/testEvil", issues: [Issue(kind: .assertion, message: "\u{1B}[2J\u{1B}[31mcleared\u{7}\u{0}")])
        let text = ConsoleSummary(color: false).render(b.build())
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        #expect(text.contains("      cleared\u{FFFD}\u{FFFD}"))
    }

    @Test(arguments: [false, true])
    func noLineIsWiderThan100Columns(color: Bool) {
        var b = ReportBuilder(destinations: ["linux-debug-with-a-long-name", "linux-release"])
        let longName = "LongModuleNameForTesting.AVeryLongClassNameThatGoesOnAndOnAndOnForeverTests/"
            + "testSomethingWithAnExtremelyDescriptiveNameThatNobodyWouldTypeTwice"
        b.failed(longName, issues: [Issue(
            kind: .assertion, message: String(repeating: "word ", count: 80) + String(repeating: "x", count: 250),
            location: SourceLocation(file: "/very/long/path/" + String(repeating: "dir/", count: 30) + "File.swift",
                                     line: 12))])
        b.crashed("M.C/testCrash", message: "crashed", diagnostics: String(repeating: "frame-", count: 60), unit: 2)
        b.measurement("M.C/testPerf", average: 0.5, rsd: 3, values: [0.5])
        b.classReport(longName.components(separatedBy: "/")[0], estimate: 3_600, actual: 7_300,
                      source: "no history: test count × 0.10 s/test, and a long explanation of why")
        b.classReport("M.C", destination: "linux-debug-with-a-long-name", estimate: 1, actual: 2)
        b.warnings = [String(repeating: "warning text ", count: 20)]
        let text = ConsoleSummary(color: color).render(b.build())
        for line in visibleLines(text) {
            #expect(ConsoleText.width(line) <= 100, "\(ConsoleText.width(line)) columns: \(line)")
        }
        // Wrapping loses nothing: the long message is all there.
        let joined = visibleLines(text).joined()
        #expect(joined.replacingOccurrences(of: " ", with: "").contains(String(repeating: "x", count: 250)))
    }

    @Test func slowestClassesSortedByActualTimeWithEstimateAndSource() throws {
        let text = ConsoleSummary(color: false, slowestClasses: 3).render(report)
        #expect(text.contains("Slowest classes (top 3 of 6, by actual time)"))
        let lines = text.split(separator: "\n").map(String.init)
        let header = try #require(lines.firstIndex { $0.hasPrefix("  class") })
        #expect(lines[header].contains("estimate") && lines[header].contains("actual")
            && lines[header].contains("source"))
        let rows = lines[(header + 1)...(header + 3)]
        #expect(rows.map { $0.split(separator: " ").first ?? "" }
            == ["ParserTests.Slow", "CoreTests.ApproximateEqualityTests", "CoreTests.ApproximateEqualityTests"])
        #expect(rows.first?.contains("5.00 s") == true)
        #expect(rows.first?.contains("60.0 s") == true)
        #expect(!text.contains("* partial"), "no partial time among the top 3")
        // In the full table: the crashed class has no complete time, and a long name is cut in the middle.
        #expect(plain.contains("  ParserTests.Crashy  "))
        #expect(plain.contains("—*"))
        #expect(plain.contains("* partial: the class was split, crashed or timed out"))
        #expect(plain.contains("  ParserTests.Appro…mateEqualityTests  linux"))
        #expect(rows.first?.contains("+1100%") == true)
        #expect(rows.first?.contains("history (5 runs)") == true)
        #expect(rows.dropFirst().first?.contains("linux ") == true, "destination column with two destinations")
        #expect(!text.contains("ParserTests.Crashy  "), "classes below the top 3 are left out")
    }

    @Test func timingComparesPredictionWithReality() {
        let text = plain
        #expect(text.contains("makespan     13.5 s actual, 12.3 s predicted"))
        #expect(text.contains("lower bound  11.0 s (LB, from this run's per-test durations) · makespan 1.23 × LB"))
        #expect(text.contains("wall         75.5 s, of which preparation (build, discovery) 21.4 s"))
    }

    /// A long class that ran whole bounds the run above its tests' own bound: the summary says so.
    @Test func aWholeClassThatHeldTheRunUpIsNamed() {
        #expect(!plain.contains("over the classes and pieces as scheduled"), "no class line when both bounds agree")
        var long = report
        long.timing = Timing(wall: 30, preparation: 1, makespan: 21.9, lowerBound: 9.7, classLowerBound: 21.9)
        let text = ConsoleSummary(color: false).render(long)
        #expect(text.contains("lower bound  9.70 s (LB, from this run's per-test durations) · makespan 2.26 × LB"))
        #expect(text.contains("21.9 s over the classes and pieces as scheduled"))
    }

    /// Work stealing is counted in the timing section, and only when it happened.
    @Test func stealsAreCounted() {
        #expect(!plain.contains("stealing "))
        var stolen = report
        stolen.steals = [StealReport(from: 1, to: [5, 6], tests: 9, at: 0.5, expectedBefore: 8, expectedAfter: 3),
                         StealReport(from: 2, to: [7], tests: 1, at: 2, expectedBefore: 1.5, expectedAfter: 1)]
        let text = ConsoleSummary(color: false, width: 200).render(stolen)
        #expect(text.contains("stealing     3 units took over 10 tests that 2 running units had not started "
            + "(expected to end 5.50 s sooner in all)"), "\(text)")
    }

    @Test func measurementsShowAverageDeviationAndCount() {
        #expect(plain.contains("CoreTests.PerfTests/testMeasureSort · linux: Time 12.3 ms ± 2.5% (10 values)"))
    }

    @Test func verdictAndClosingLine() throws {
        let lines = plain.split(separator: "\n").map(String.init)
        #expect(lines.last == "Fanout: 5 passed, 4 failed, 1 skipped, 1 not run")
        #expect(lines.dropLast().last == "FAILED · 5 tests need attention: 2 failed, 1 crashed, 1 timed out, 1 not run"
            + " · exit 1 · 75.5 s")
    }

    @Test func passingRunSaysSoPlainly() throws {
        var b = ReportBuilder()
        b.passed("M.C/testA")
        b.passed("M.C/testB")
        b.skipped("M.C/testC", reason: "later")
        b.flaky("M.D/testE", issue: Issue(kind: .assertion, message: "once"), diagnostics: nil, firstUnit: 1,
                retryUnit: 2)
        let text = ConsoleSummary(color: false).render(b.build())
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.last == "Fanout: 3 passed, 0 failed, 1 skipped")
        #expect(lines.dropLast().last?.hasPrefix("PASSED · all 3 tests that ran passed (1 flaky) · exit 0") == true)
        #expect(!text.contains("Failures"))
        #expect(!text.contains(" · linux"), "one destination is not repeated on every line")
    }

    @Test func interruptedRunSaysWhatHappened() {
        var b = ReportBuilder()
        b.passed("M.C/testA")
        b.notRun("M.C/testB", reason: "interrupted", unit: 1)
        b.interrupted = true
        b.exitCode = 130
        let text = ConsoleSummary(color: false).render(b.build())
        #expect(text.contains("Interrupted: the run was stopped before it finished"))
        #expect(text.contains("INTERRUPTED · by SIGINT; 1 not run · exit 130"))
        #expect(text.hasSuffix("Fanout: 1 passed, 0 failed, 0 skipped, 1 not run\n"))
    }
}

@Suite(.timeLimit(.minutes(2))) struct ConsoleTextTests {
    @Test func wrapsAtSpacesAndKeepsEveryWord() {
        let text = "the quick brown fox jumps over the lazy dog again and again"
        let lines = ConsoleText.wrap(text, width: 20, indent: "  ", continuation: "    ")
        #expect(lines == ["  the quick brown", "    fox jumps over", "    the lazy dog", "    again and again"])
    }

    @Test func breaksWordsLongerThanALine() {
        let lines = ConsoleText.wrap(String(repeating: "a", count: 25), width: 10, indent: "> ")
        #expect(lines == ["> aaaaaaaa", "> aaaaaaaa", "> aaaaaaaa", "> a"])
    }

    @Test func keepsLineBreaksAndIndentation() {
        #expect(ConsoleText.wrap("a\n  b\n\nc", width: 10, indent: "| ") == ["| a", "|   b", "|", "| c"])
    }

    @Test func measuresWideCharactersAsTwoColumns() {
        #expect(ConsoleText.width("abc") == 3)
        #expect(ConsoleText.width("🚀") == 2)
        #expect(ConsoleText.width("漢字") == 4)
        #expect(ConsoleText.width("é") == 1)
        for line in ConsoleText.wrap(String(repeating: "🚀", count: 30), width: 11) {
            #expect(ConsoleText.width(line) <= 11)
        }
    }

    @Test func truncatesInTheMiddle() {
        #expect(ConsoleText.truncateMiddle("ModuleName.VeryLongClassName", to: 15) == "ModuleN…assName")
        #expect(ConsoleText.truncateMiddle("short", to: 15) == "short")
        #expect(ConsoleText.width(ConsoleText.truncateMiddle("ModuleName.VeryLongClassName", to: 15)) <= 15)
    }
}
