import FanoutCore
import FanoutTestSupport
import Foundation

/// The report most tests read: every outcome, two destinations, two modules with the same class name, a
/// measurement, and logs and diagnostics with unique markers to find them by.
enum Sample {
    static let failedFile = "/src/Tests/CoreTests/ApproximateEqualityTests.swift"
    static let firstMessage = #"XCTAssertEqual failed: ("1.0") is not equal to ("2.0")"#
    static let secondMessage = #"XCTAssertTrue failed - "b" & <c> isn't ready"#
    static let unit1Log = "\u{1B}[32mTest Suite 'Selected tests' started\u{1B}[0m\nLOG-OF-UNIT-1\r\nend of unit 1"
    static let backtrace = (1...30).map { "#\($0) 0x0000 in frame\($0) at /src/Sources/Crash.swift:\($0)" }
        .joined(separator: "\n")

    static func report() -> RunReport {
        var b = ReportBuilder(destinations: ["linux", "linux-release"])
        b.unit(1, agent: "local", slot: 0, suites: ["CoreTests.ApproximateEqualityTests", "CoreTests.Arithmetic",
                                                      "CoreTests.Network", "CoreTests.PerfTests"],
               ending: "exit 1", log: unit1Log, startedAt: 0.5, duration: 4)
        b.unit(2, agent: "local", slot: 1, suites: ["ParserTests.ApproximateEqualityTests"], log: "LOG-OF-UNIT-2",
               startedAt: 0.6, duration: 1)
        b.unit(3, agent: "mac-1", slot: 0, suites: ["ParserTests.Crashy"], ending: "signal 11",
               log: "LOG-OF-UNIT-3\nTest Case 'Crashy.testBoom' started", startedAt: 0.7, duration: 0.5)
        b.unit(4, agent: "mac-1", slot: 1, suites: ["ParserTests.Slow"], ending: "timed out",
               log: "LOG-OF-UNIT-4", startedAt: 1, duration: 60)
        b.unit(5, agent: "mac-2", slot: 0, suites: ["ParserTests.Lost"], ending: "agent lost", log: "",
               startedAt: 1.5, duration: 3)
        b.unit(6, agent: "local", slot: 0, suites: ["CoreTests.Network"], log: "LOG-OF-UNIT-6", startedAt: 5,
               duration: 0.3)
        b.unit(7, destination: "linux-release", agent: "mac-1", slot: 0,
               suites: ["CoreTests.ApproximateEqualityTests"], ending: "exit 1", log: "LOG-OF-UNIT-7",
               startedAt: 0.8, duration: 2)

        b.passed("CoreTests.ApproximateEqualityTests/testClose", unit: 1)
        b.failed("CoreTests.ApproximateEqualityTests/testFar", issues: [
            Issue(kind: .assertion, message: firstMessage, location: SourceLocation(file: failedFile, line: 18)),
            Issue(kind: .assertion, message: secondMessage, location: SourceLocation(file: failedFile, line: 19)),
        ], unit: 1)
        b.skipped("CoreTests.Arithmetic/testSkipped", reason: "not supported on Linux", unit: 1)
        b.flaky("CoreTests.Network/testRetry",
                issue: Issue(kind: .thrown, message: #"threw error "URLError(-1001)""#,
                             location: SourceLocation(file: "/src/Tests/CoreTests/NetworkTests.swift", line: 40)),
                diagnostics: "FLAKY-DIAGNOSTICS connection reset", firstUnit: 1, retryUnit: 6)
        b.passed("CoreTests.PerfTests/testMeasureSort", duration: 1.5, unit: 1)
        b.passed("ParserTests.ApproximateEqualityTests/testClose", unit: 2)
        b.crashed("ParserTests.Crashy/testBoom", message: "crashed: signal 11 (SIGSEGV)", diagnostics: backtrace,
                  unit: 3)
        b.timedOut("ParserTests.Slow/testHang", message: "timed out after 60.00 s (limit of its unit)",
                   diagnostics: "HANG-DIAGNOSTICS waiting on semaphore", unit: 4)
        b.notRun("ParserTests.Lost/testNever", reason: "agent mac-2 lost and the re-queue budget is spent", unit: 5)
        b.passed("CoreTests.ApproximateEqualityTests/testClose", destination: "linux-release", unit: 7)
        b.failed("CoreTests.ApproximateEqualityTests/testFar", destination: "linux-release", issues: [
            Issue(kind: .assertion, message: "RELEASE-ONLY mismatch",
                  location: SourceLocation(file: failedFile, line: 18)),
        ], unit: 7)

        b.measurement("CoreTests.PerfTests/testMeasureSort", average: 0.0123, rsd: 2.5,
                      values: [0.012, 0.0125, 0.0124, 0.0121, 0.0123, 0.0122, 0.0124, 0.0123, 0.0123, 0.0125])
        b.classReport("CoreTests.ApproximateEqualityTests", estimate: 2, actual: 3, tests: 2)
        b.classReport("CoreTests.PerfTests", estimate: 1, actual: 1.6, source: "test count × 0.50 s/test", tests: 1)
        b.classReport("ParserTests.Slow", estimate: 5, actual: 60, outcome: .timedOut, tests: 1)
        b.classReport("ParserTests.Crashy", estimate: 0.4, actual: nil, outcome: .crashed, tests: 1)
        b.classReport("ParserTests.ApproximateEqualityTests", estimate: 0.5, actual: 0.4,
                      source: "borrowed from linux-release × 1.20", tests: 1)
        b.classReport("CoreTests.ApproximateEqualityTests", destination: "linux-release", estimate: 2, actual: 2.5,
                      tests: 2)
        b.warnings = ["agent mac-2 lost after 1.50 s (connection reset); its unit went back to the queue"]
        return b.build()
    }
}
