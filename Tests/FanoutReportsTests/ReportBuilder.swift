import FanoutCore
import Foundation

/// Builds `RunReport`s by hand for the writers' tests: each call adds one result (and the unit it ran in, unless
/// the test adds units itself), so a test states only what it is about.
struct ReportBuilder {
    var runID = "2024-05-01-120000-ab12"
    var destinations: [String]
    var startedAt = Date(timeIntervalSince1970: 1_714_564_800.25)
    var units: [Int: UnitReport] = [:]
    var results: [TestResult] = []
    var classes: [ClassReport] = []
    var measurements: [MeasurementRecord] = []
    var warnings: [String] = []
    var interrupted = false
    var exitCode: Int32?

    init(destinations: [String] = ["linux"]) {
        self.destinations = destinations
    }

    static func id(_ text: String) -> TestID {
        // "Module.Class/test"
        let parts = text.split(separator: "/", maxSplits: 1)
        let suite = parts[0].split(separator: ".", maxSplits: 1)
        return TestID(module: String(suite[0]), suite: String(suite[1]), name: String(parts[1]))
    }

    mutating func unit(_ id: Int, destination: String? = nil, agent: String = "local", slot: Int = 0,
                       suites: [String] = [], ending: String = "exit 0", log: String = "", startedAt: Double = 1,
                       duration: Double = 2) {
        units[id] = UnitReport(id: id, destination: destination ?? destinations[0], framework: .xctest, agent: agent,
                               slot: slot, suites: suites, testCount: 1, estimate: duration, startedAt: startedAt,
                               duration: duration, ending: ending,
                               command: "/opt/bin/FanoutPackageTests.xctest \(suites.joined(separator: ","))",
                               log: log)
    }

    /// Adds a result whose attempts ran in the given units (created when missing).
    mutating func result(_ test: String, _ outcome: Outcome, destination: String? = nil, attempts: [Attempt]) {
        let destination = destination ?? destinations[0]
        let id = Self.id(test)
        for attempt in attempts where units[attempt.unit] == nil {
            unit(attempt.unit, destination: destination, suites: [id.suite.description])
        }
        results.append(TestResult(id: id, framework: .xctest, destination: destination, outcome: outcome,
                                  attempts: attempts))
    }

    mutating func passed(_ test: String, destination: String? = nil, duration: Double = 0.012, unit: Int = 1) {
        result(test, .passed, destination: destination,
               attempts: [Attempt(outcome: .passed, duration: duration, unit: unit, agent: agent(of: unit))])
    }

    mutating func failed(_ test: String, destination: String? = nil, issues: [Issue], unit: Int = 1) {
        result(test, .failed, destination: destination,
               attempts: [Attempt(outcome: .failed, duration: 0.2, issues: issues, unit: unit, agent: agent(of: unit))])
    }

    mutating func skipped(_ test: String, reason: String?, unit: Int = 1) {
        result(test, .skipped, attempts: [Attempt(outcome: .skipped, duration: 0, skipReason: reason, unit: unit,
                                                  agent: agent(of: unit))])
    }

    mutating func crashed(_ test: String, message: String, diagnostics: String, unit: Int) {
        result(test, .crashed, attempts: [Attempt(
            outcome: .crashed, duration: 0.5, issues: [Issue(kind: .crash, message: message)], unit: unit,
            agent: agent(of: unit), diagnostics: diagnostics)])
    }

    mutating func timedOut(_ test: String, message: String, diagnostics: String?, unit: Int) {
        result(test, .timedOut, attempts: [Attempt(
            outcome: .timedOut, duration: 60, issues: [Issue(kind: .timeout, message: message)], unit: unit,
            agent: agent(of: unit), diagnostics: diagnostics)])
    }

    mutating func notRun(_ test: String, reason: String, unit: Int) {
        result(test, .notRun, attempts: [Attempt(outcome: .notRun, duration: 0, skipReason: reason, unit: unit,
                                                 agent: agent(of: unit))])
    }

    /// Failed in `firstUnit` with `issue` (and `diagnostics`), then passed in `retryUnit`.
    mutating func flaky(_ test: String, issue: Issue, diagnostics: String?, firstUnit: Int, retryUnit: Int) {
        result(test, .flaky, attempts: [
            Attempt(outcome: .failed, duration: 0.3, issues: [issue], unit: firstUnit, agent: agent(of: firstUnit),
                    diagnostics: diagnostics),
            Attempt(outcome: .passed, duration: 0.25, unit: retryUnit, agent: agent(of: retryUnit)),
        ])
    }

    mutating func measurement(_ test: String, average: Double, rsd: Double, values: [Double],
                              destination: String? = nil, hardwareClass: String? = nil,
                              verdict: PerformanceVerdict? = nil) {
        measurements.append(MeasurementRecord(
            destination: destination ?? destinations[0], agent: "local",
            measurement: Measurement(test: Self.id(test), metric: "Time", unit: "seconds",
                                     identifier: "org.swift.XCTPerformanceMetric_WallClockTime", values: values,
                                     average: average, relativeStandardDeviation: rsd,
                                     maxPercentRelativeStandardDeviation: 10, maxStandardDeviation: 0.1,
                                     location: SourceLocation(file: "/src/Tests/PerfTests.swift", line: 7)),
            hardwareClass: hardwareClass, verdict: verdict))
    }

    mutating func classReport(_ suite: String, destination: String? = nil, estimate: Double, actual: Double?,
                              source: String = "history (5 runs)", outcome: Outcome = .passed, tests: Int = 3) {
        let parts = suite.split(separator: ".", maxSplits: 1)
        classes.append(ClassReport(
            suite: SuiteID(module: String(parts[0]), name: String(parts[1])), framework: .xctest,
            destination: destination ?? destinations[0], testCount: tests, estimate: estimate,
            estimateSource: source, actual: actual, outcome: outcome, timingIsComplete: actual != nil,
            agent: "local"))
    }

    private func agent(of unit: Int) -> String { units[unit]?.agent ?? "local" }

    func build() -> RunReport {
        let sorted = results.sorted { a, b in
            let ra = destinations.firstIndex(of: a.destination) ?? .max
            let rb = destinations.firstIndex(of: b.destination) ?? .max
            return (ra, a.id) < (rb, b.id)
        }
        let counts = Counts(sorted.map(\.outcome))
        let code: Int32 = exitCode ?? (counts.failures > 0 ? 1 : counts.notRun > 0 ? 3 : 0)
        return RunReport(
            runID: runID, fanoutVersion: "0.1.0", startedAt: startedAt,
            finishedAt: startedAt.addingTimeInterval(75.5), interrupted: interrupted,
            product: ProductInfo(package: "/src/Demo", bundle: "/src/Demo/.build/debug/DemoPackageTests.xctest",
                                 sha256: "abc123"),
            destinations: destinations,
            agents: [AgentInfo(name: "local", transport: "local", slots: 2),
                     AgentInfo(name: "mac-1", transport: "ssh", slots: 2, host: "127.0.1.2")],
            plan: PlanReport(slots: 4, lowerBound: 10.5, predictedMakespan: 12.25, totalEstimate: 42),
            units: units.values.sorted { $0.id < $1.id }, classes: classes, results: sorted,
            measurements: measurements, warnings: warnings,
            timing: Timing(wall: 75.5, preparation: 21.4, makespan: 13.5, lowerBound: 11.0),
            exitCode: code)
    }
}

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
