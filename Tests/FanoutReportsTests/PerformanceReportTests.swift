import FanoutCore
import FanoutTestSupport
import Foundation
import Testing
@testable import FanoutReports
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Verdicts in the console summary, JUnit and report.json, and results of several destinations side by side.
@Suite(.timeLimit(.minutes(2))) struct PerformanceReportTests {
    static let perfTest = "DemoKitTests.PerformanceTests/testMeasureSorting"
    static let values = [0.318, 0.317, 0.319, 0.318, 0.318, 0.318, 0.317, 0.319, 0.318, 0.318]

    static func regression(failsRun: Bool) -> PerformanceVerdict {
        PerformanceVerdict(kind: .regression, baselineAverage: 0.018, change: 16.667,
                           message: "average 318.0 ms against the baseline 18.0 ms (+1666.7%, +300.0 ms): "
                               + "more than 10% and 100.0 ms slower", failsRun: failsRun)
    }

    /// One passing performance test with a regression verdict, plus a passing ordinary test.
    static func report(failsRun: Bool, verdict: PerformanceVerdict? = nil) -> RunReport {
        var b = ReportBuilder(destinations: ["local"])
        b.passed(perfTest, duration: 3.3)
        b.passed("DemoKitTests.ArithmeticTests/testAdd")
        b.measurement(perfTest, average: 0.318, rsd: 0.2, values: values, hardwareClass: "Xeon × 2",
                      verdict: verdict ?? regression(failsRun: failsRun))
        b.exitCode = failsRun ? 1 : 0
        return b.build()
    }

    /// Wide enough that no line of these reports wraps (wrapping has its own tests).
    func plain(_ report: RunReport) -> String {
        ConsoleSummary(color: false, width: 200).render(report)
    }

    // MARK: - Console

    @Test func regressionShowsInMeasurementsAndVerdictArea() {
        let text = plain(Self.report(failsRun: false))
        #expect(text.contains("Measurements (1): 1 regression\n"), "\(text)")
        #expect(text.contains("  \(Self.perfTest): Time 318.0 ms ± 0.2% (10 values) · REGRESSION against 18.0 ms "
            + "(+1666.7%)"), "\(text)")
        #expect(text.contains("      average 318.0 ms against the baseline 18.0 ms (+1666.7%, +300.0 ms): more than"))
        for line in ConsoleSummary(color: false).render(Self.report(failsRun: true)).split(separator: "\n") {
            #expect(ConsoleText.width(line) <= 100, "\(line)")
        }
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.last == "Fanout: 2 passed, 0 failed, 0 skipped, 1 performance regression")
        #expect(lines.dropLast().last?.hasPrefix("PASSED · all 2 tests that ran passed · exit 0") == true)
        #expect(lines.dropLast(2).last == "PERFORMANCE · 1 regression: \(Self.perfTest) +1666.7% (not failing the "
            + "run: see --fail-on-perf-regression)")
    }

    @Test func regressionThatFailsTheRunSaysSo() {
        let text = plain(Self.report(failsRun: true))
        #expect(text.contains("REGRESSION against 18.0 ms (+1666.7%), fails the run"))
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.dropLast().last?.hasPrefix(
            "FAILED · 1 performance regression fails the run; every test passed · exit 1") == true,
            "\(lines.suffix(3))")
        #expect(lines.dropLast(2).last == "PERFORMANCE · 1 regression: \(Self.perfTest) +1666.7%")
    }

    @Test func everyVerdictKindIsShown() {
        var b = ReportBuilder(destinations: ["local"])
        b.passed("M.C/testA")
        b.measurement("M.C/testA", average: 0.209, rsd: 98.5, values: [0.01, 0.4], verdict: PerformanceVerdict(
            kind: .tooNoisy, message: "standard deviation 282.1 ms (135% of the average) is more than 10% of the "
                + "average and more than 100.0 ms: too noisy to judge"))
        b.measurement("M.C/testB", average: 0.019, rsd: 1, values: [0.019], verdict: PerformanceVerdict(
            kind: .passed, baselineAverage: 0.018, change: 0.0556, message: "within"))
        b.measurement("M.C/testC", average: 0.5, rsd: 1, values: [0.5], verdict: PerformanceVerdict(
            kind: .recorded, message: "no baseline"))
        b.measurement("M.C/testD", average: 0.5, rsd: 1, values: [0.5])
        let text = plain(b.build())
        #expect(text.contains("Measurements (4): 1 too noisy, 1 within baseline, 1 recorded (no baseline)\n"))
        #expect(text.contains("M.C/testA: Time 209.0 ms ± 98.5% (2 values) · TOO NOISY (no baseline)\n"))
        #expect(text.contains("      standard deviation 282.1 ms (135% of the average) is more than 10%"))
        #expect(text.contains("M.C/testB: Time 19.0 ms ± 1.0% (1 value) · passed against 18.0 ms (+5.6%)\n"))
        #expect(text.contains("M.C/testC: Time 500.0 ms ± 1.0% (1 value) · recorded (no baseline)\n"))
        #expect(text.contains("M.C/testD: Time 500.0 ms ± 1.0% (1 value)\n"), "not judged: no verdict")
        #expect(!text.contains("PERFORMANCE"), "no regression, no line in the verdict area")
        #expect(text.hasSuffix("Fanout: 1 passed, 0 failed, 0 skipped\n"))
    }

    @Test func colorMarksTheVerdictAndNothingWithoutIt() {
        let colored = ConsoleSummary(color: true).render(Self.report(failsRun: true))
        #expect(colored.contains("\u{1B}[1;31mREGRESSION\u{1B}[0m"))
        #expect(colored.contains("\u{1B}[1;31mPERFORMANCE\u{1B}[0m · 1 regression"))
        #expect(!plain(Self.report(failsRun: true)).contains("\u{1B}["))
    }

    @Test func hardwareClassIsNamedWhenMeasurementsCameFromSeveral() {
        var b = ReportBuilder(destinations: ["local"])
        b.passed("M.C/testA")
        b.measurement("M.C/testA", average: 0.5, rsd: 1, values: [0.5], hardwareClass: "Xeon × 2")
        b.measurement("M.C/testA", average: 0.4, rsd: 1, values: [0.4], hardwareClass: "EPYC × 8")
        let text = plain(b.build())
        #expect(text.contains("M.C/testA · Xeon × 2: Time 500.0 ms"))
        #expect(text.contains("M.C/testA · EPYC × 8: Time 400.0 ms"))
    }

    // MARK: - Destinations side by side

    static func threeDestinations() -> RunReport {
        var b = ReportBuilder(destinations: ["debug", "release", "asan"])
        b.unit(1, destination: "debug", startedAt: 0.5, duration: 4)
        b.unit(2, destination: "release", startedAt: 1, duration: 2)
        b.unit(3, destination: "asan", startedAt: 0.2, duration: 10)
        for d in ["debug", "release", "asan"] {
            let unit = ["debug": 1, "release": 2, "asan": 3][d] ?? 1
            b.passed("Core.Math/testSame", destination: d, duration: 1, unit: unit)
        }
        b.passed("Core.Math/testReleaseOnly", destination: "debug", unit: 1)
        b.failed("Core.Math/testReleaseOnly", destination: "release", issues: [Issue(kind: .assertion, message: "x")],
                 unit: 2)
        b.passed("Core.Math/testReleaseOnly", destination: "asan", unit: 3)
        b.passed("Core.Net/testSkippedOnAsan", destination: "debug", unit: 1)
        b.passed("Core.Net/testSkippedOnAsan", destination: "release", unit: 2)
        b.result("Core.Net/testSkippedOnAsan", .skipped, destination: "asan",
                 attempts: [Attempt(outcome: .skipped, duration: 0, skipReason: "asan", unit: 3, agent: "local")])
        b.passed("Core.Net/testDebugOnly", destination: "debug", unit: 1)
        return b.build()
    }

    @Test func perDestinationCountsAndTimes() {
        let text = plain(Self.threeDestinations())
        #expect(text.contains("Destinations (3, side by side)\n"))
        #expect(text.contains("  destination  tests  passed  failed  skipped  not run  test time    span\n"), "\(text)")
        #expect(text.contains("  debug            4       4       0        0        0     1.04 s  4.00 s\n"), "\(text)")
        #expect(text.contains("  release          3       2       1        0        0     1.21 s  2.00 s\n"), "\(text)")
        #expect(text.contains("  asan             3       2       0        1        0     1.01 s  10.0 s\n"), "\(text)")
    }

    @Test func testsWhoseOutcomeDiffersAreSideBySideAndFailuresOnSomeCalledOut() throws {
        let text = plain(Self.threeDestinations())
        #expect(text.contains("  1 test fails on only some destinations; 1 other differs (skipped, flaky or not run on "
            + "some):\n"), "\(text)")
        let lines = text.split(separator: "\n").map(String.init)
        let header = try #require(lines.firstIndex { $0.hasPrefix("  test ") })
        #expect(lines[header].hasSuffix("debug      release    asan"), "\(lines[header])")
        #expect(lines[header + 1].hasPrefix("  Core.Math/testReleaseOnly"), "the failure on some comes first")
        #expect(lines[header + 1].hasSuffix("PASSED     FAILED     PASSED"), "\(lines[header + 1])")
        #expect(lines[header + 2].hasPrefix("  Core.Net/testSkippedOnAsan"))
        #expect(lines[header + 2].hasSuffix("PASSED     PASSED     SKIPPED"))
        #expect(!text.contains("Core.Math/testSame  "), "same everywhere: not listed")
        #expect(!text.contains("Core.Net/testDebugOnly  "), "ran on one destination only: nothing to compare")
    }

    @Test func sameOutcomesEverywhereSaysSo() {
        let text = plain(Sample.report())
        #expect(text.contains("Destinations (2, side by side)"))
        #expect(text.contains("  Every test has the same outcome on every destination it ran on."))
    }

    @Test func oneDestinationHasNoSideBySide() {
        #expect(!plain(Self.report(failsRun: false)).contains("side by side"))
    }

    @Test func manyDestinationsFallBackToOneLinePerTestAndFitTheWidth() {
        let names = (1...8).map { "destination-\($0)" }
        var b = ReportBuilder(destinations: names)
        for (i, d) in names.enumerated() {
            b.unit(i + 1, destination: d)
            if i == 3 {
                b.failed("Core.Math/testFlips", destination: d, issues: [Issue(kind: .assertion, message: "x")],
                         unit: i + 1)
            } else {
                b.passed("Core.Math/testFlips", destination: d, unit: i + 1)
            }
        }
        let text = ConsoleSummary(color: false, width: 100).render(b.build())
        #expect(text.contains("  Core.Math/testFlips: destination-1 PASSED · destination-2 PASSED"), "\(text)")
        #expect(text.contains("destination-4 FAILED"))
        for line in text.split(separator: "\n") { #expect(ConsoleText.width(line) <= 100, "\(line)") }
    }

    // MARK: - JUnit

    private func testcase(_ report: RunReport, _ name: String) throws -> XMLElement {
        let doc = try XMLTestSupport.parse(JUnitWriter().render(report))
        return try #require(try XMLTestSupport.elements(doc, "//testcase").first {
            XMLTestSupport.attribute($0, "name") == name
        })
    }

    @Test func junitCarriesTheVerdictAsPropertiesAndOutput() throws {
        let report = Self.report(failsRun: false)
        let tc = try testcase(report, "testMeasureSorting")
        let properties = try tc.nodes(forXPath: "properties/property").compactMap { $0 as? XMLElement }
        let byName = Dictionary(uniqueKeysWithValues: properties.map {
            (XMLTestSupport.attribute($0, "name") ?? "", XMLTestSupport.attribute($0, "value") ?? "")
        })
        #expect(byName["performance.Time.verdict"] == "regression")
        #expect(byName["performance.Time.average"] == "0.318000")
        #expect(byName["performance.Time.baseline"] == "0.018000")
        #expect(byName["performance.Time.change"] == "16.667000")
        let out = try #require(try tc.nodes(forXPath: "system-out").first?.stringValue)
        #expect(out.contains("performance: Time 318.0 ms ± 0.2% (10 values) · REGRESSION: average 318.0 ms against "
            + "the baseline 18.0 ms"))
        #expect(try tc.nodes(forXPath: "failure").isEmpty, "without --fail-on-perf-regression it stays green")
        let doc = try XMLTestSupport.parse(JUnitWriter().render(report))
        #expect(XMLTestSupport.attribute(doc.rootElement(), "failures") == "0")
        // The other test case is untouched.
        let plainCase = try testcase(report, "testAdd")
        #expect(plainCase.childCount == 0)
    }

    @Test func junitFailsTheTestCaseOnlyWhenTheRunFailedOnIt() throws {
        let report = Self.report(failsRun: true)
        let tc = try testcase(report, "testMeasureSorting")
        let failure = try #require(try tc.nodes(forXPath: "failure").first as? XMLElement)
        #expect(XMLTestSupport.attribute(failure, "type") == "performance-regression")
        #expect(XMLTestSupport.attribute(failure, "message")?.hasPrefix("Time: average 318.0 ms against the baseline")
            == true)
        #expect(failure.stringValue?.contains("--fail-on-perf-regression") == true)
        #expect(XMLTestSupport.attribute(tc, "file") == "/src/Tests/PerfTests.swift")
        #expect(XMLTestSupport.attribute(tc, "line") == "7")
        let doc = try XMLTestSupport.parse(JUnitWriter().render(report))
        #expect(XMLTestSupport.attribute(doc.rootElement(), "failures") == "1")
        let suite = try #require(try XMLTestSupport.elements(doc, "/testsuites/testsuite").first)
        #expect(XMLTestSupport.attribute(suite, "failures") == "1")
    }

    @Test func junitShowsTooNoisyOnAFailedTestCaseBeforeItsLog() throws {
        var b = ReportBuilder(destinations: ["local"])
        b.unit(1, log: "UNIT-LOG")
        b.failed(Self.perfTest, issues: [Issue(kind: .assertion, message: "The relative standard deviation of the "
            + "measurements is 98.544% which is higher than the max allowed of 10.000%.")])
        b.measurement(Self.perfTest, average: 0.209, rsd: 98.5, values: [0.01, 0.4], verdict: PerformanceVerdict(
            kind: .tooNoisy, message: "too noisy to judge"))
        let tc = try testcase(b.build(), "testMeasureSorting")
        #expect(try tc.nodes(forXPath: "failure").count == 1, "the test's own failure, no second one")
        let outs = try tc.nodes(forXPath: "system-out")
        #expect(outs.count == 1)
        let out = try #require(outs.first?.stringValue)
        #expect(out.hasPrefix("performance: Time 209.0 ms ± 98.5% (2 values) · TOO NOISY: too noisy to judge\n\n"))
        #expect(out.contains("UNIT-LOG"))
    }

    // MARK: - report.json

    @Test func jsonKeepsVerdictAndHardwareClass() throws {
        let report = Self.report(failsRun: true)
        let data = try JSONReportWriter().encode(report)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"hardwareClass\" : \"Xeon × 2\""))
        #expect(text.contains("\"kind\" : \"regression\""))
        #expect(text.contains("\"failsRun\" : true"))
        let back = try JSONReportReader().decode(data)
        #expect(back == report)
        #expect(back.measurements[0].verdict?.failsRun == true)
    }

    @Test func jsonWithoutTheNewFieldsStillReads() throws {
        var report = Self.report(failsRun: false)
        report.measurements[0].verdict = nil
        report.measurements[0].hardwareClass = nil
        let text = String(decoding: try JSONReportWriter().encode(report), as: UTF8.self)
        #expect(!text.contains("hardwareClass") && !text.contains("verdict"), "optional fields are left out")
        #expect(try JSONReportReader().decode(Data(text.utf8)) == report)
    }
}
