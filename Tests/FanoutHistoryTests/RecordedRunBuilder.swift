import FanoutCore
import Foundation

/// Builds small but complete runs for the history to record, placed on a timeline (`minute`): one call per class
/// adds its ClassReport and the results of its tests. (The writers' tests have their own `ReportBuilder`: every
/// outcome, units with logs, two destinations; a run on a timeline is what the history's tests need.)
struct RecordedRunBuilder {
    var runID: String
    var startedAt: Date
    var destination: String
    var classes: [ClassReport] = []
    var results: [TestResult] = []
    var units: [UnitReport] = []
    var measurements: [MeasurementRecord] = []

    /// `minute` places runs on a timeline, so their order never depends on the order they are recorded in.
    init(_ runID: String, minute: Int, destination: String = "local") {
        self.runID = runID
        self.startedAt = Date(timeIntervalSince1970: 1_800_000_000 + Double(minute) * 60)
        self.destination = destination
    }

    /// A class whose tests each took `testSeconds` (one attempt each, with the outcome of the class when it is a
    /// test outcome).
    @discardableResult
    mutating func addClass(_ name: String, module: String = "AppTests", tests: Int = 2, actual: Double?,
                           outcome: Outcome = .passed, complete: Bool = true, testSeconds: Double = 0.5,
                           destination: String? = nil) -> Self {
        let destination = destination ?? self.destination
        let suite = SuiteID(module: module, name: name)
        classes.append(ClassReport(suite: suite, framework: .xctest, destination: destination, testCount: tests,
                                   estimate: 1, estimateSource: "test count", actual: actual, outcome: outcome,
                                   timingIsComplete: complete, agent: "agent-1"))
        let attemptOutcome: Outcome = outcome == .flaky ? .passed : outcome
        for index in 0..<tests {
            results.append(TestResult(
                id: TestID(suite: suite, name: "test\(index)"), framework: .xctest, destination: destination,
                outcome: outcome,
                attempts: outcome == .notRun ? [] : [Attempt(outcome: attemptOutcome, duration: testSeconds, unit: 1,
                                                            agent: "agent-1")]))
        }
        return self
    }

    /// One test with explicit attempts, e.g. `[(.failed, 0.2), (.passed, 0.3)]` for a flaky one.
    mutating func addTest(_ id: TestID, outcome: Outcome, attempts: [(Outcome, Double)], destination: String? = nil) {
        results.append(TestResult(
            id: id, framework: .xctest, destination: destination ?? self.destination, outcome: outcome,
            attempts: attempts.map { attempt in
                Attempt(outcome: attempt.0, duration: attempt.1,
                        issues: attempt.0 == .failed ? [Issue(kind: .assertion, message: "boom")] : [],
                        unit: 1, agent: "agent-1")
            }))
    }

    mutating func addUnit(id: Int, suites: [String], duration: Double, cpuSeconds: Double? = nil,
                          peakMemoryBytes: Int64? = nil) {
        var unit = UnitReport(id: id, destination: destination, framework: .xctest, agent: "agent-1", slot: 0,
                              suites: suites, testCount: 2, estimate: 1, startedAt: 0, duration: duration,
                              ending: "exit 0", command: "AppPackageTests.xctest \(suites.joined(separator: ","))",
                              log: "")
        unit.cpuSeconds = cpuSeconds
        unit.peakMemoryBytes = peakMemoryBytes
        units.append(unit)
    }

    mutating func addMeasurement(_ test: TestID, values: [Double], identifier: String = "org.swift.XCTPerformanceMetric_WallClockTime",
                                 hardwareClass: String? = nil, baseline: Double? = nil) {
        let average = values.reduce(0, +) / Double(values.count)
        let measurement = FanoutCore.Measurement(
            test: test, metric: "Time", unit: "seconds", identifier: identifier,
            values: values, average: average, relativeStandardDeviation: 12.5,
            maxPercentRelativeStandardDeviation: 10, maxStandardDeviation: 0.1)
        measurements.append(MeasurementRecord(
            destination: destination, agent: "agent-1", measurement: measurement, hardwareClass: hardwareClass,
            verdict: baseline.map { PerformanceVerdict(kind: .passed, baselineAverage: $0, message: "judged") }))
    }

    func build(exitCode: Int32 = 0) -> RunReport {
        RunReport(
            runID: runID, fanoutVersion: "0.1.0-test", startedAt: startedAt,
            finishedAt: startedAt.addingTimeInterval(30), interrupted: false,
            product: ProductInfo(package: "/src/app", bundle: "/src/app/.build/debug/AppPackageTests.xctest"),
            destinations: Array(Set(classes.map(\.destination) + [destination])).sorted(),
            agents: [AgentInfo(name: "agent-1", transport: "local", slots: 2)],
            plan: PlanReport(slots: 2, lowerBound: 10, predictedMakespan: 12, totalEstimate: 20),
            units: units, classes: classes,
            results: results.sorted { ($0.destination, $0.id) < ($1.destination, $1.id) },
            measurements: measurements, warnings: [],
            timing: Timing(wall: 25, preparation: 5, makespan: 18, lowerBound: 15), exitCode: exitCode)
    }
}

/// A fresh folder under the system temporary folder, removed by `remove()`.
struct TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("fanout-history-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func files() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: url.path).sorted() }

    func remove() { try? FileManager.default.removeItem(at: url) }
}
