import FanoutCore
import Foundation

/// Builds `RunReport`s by hand for tests, so a test states only what it is about. The writers' tests add results one
/// by one (each with the unit it ran in, unless the test adds units itself): every outcome, units with logs, several
/// destinations. The history's tests place whole runs on a timeline (``init(_:minute:destination:)``) and add a class
/// at a time with its tests' results (``addClass(_:module:tests:actual:outcome:complete:testSeconds:destination:)``).
public struct ReportBuilder {
    public var runID = "2024-05-01-120000-ab12"
    public var destinations: [String]
    public var startedAt = Date(timeIntervalSince1970: 1_714_564_800.25)
    public var units: [Int: UnitReport] = [:]
    public var results: [TestResult] = []
    public var classes: [ClassReport] = []
    public var measurements: [MeasurementRecord] = []
    public var warnings: [String] = []
    public var interrupted = false
    /// Nil: 1 when a test failed, 3 when one did not run, else 0.
    public var exitCode: Int32?
    /// What every report of this builder shares: the run around the tests.
    public var frame = Frame.writers

    /// The run around the tests: the product, the agents, the plan and the timing.
    public struct Frame: Sendable {
        public var fanoutVersion: String
        /// Seconds from the start to the end of the run.
        public var length: Double
        public var product: ProductInfo
        public var agents: [AgentInfo]
        public var plan: PlanReport
        public var timing: Timing
        /// The report's destinations: those the builder was given, in that order, else (false) every destination of
        /// its classes and the builder's own, sorted.
        public var destinationsAsGiven: Bool

        /// Two agents (one over SSH), four slots.
        public static let writers = Frame(
            fanoutVersion: "0.1.0", length: 75.5,
            product: ProductInfo(package: "/src/Demo", bundle: "/src/Demo/.build/debug/DemoPackageTests.xctest",
                                 sha256: "abc123"),
            agents: [AgentInfo(name: "local", transport: "local", slots: 2),
                     AgentInfo(name: "mac-1", transport: "ssh", slots: 2, host: "127.0.1.2")],
            plan: PlanReport(slots: 4, lowerBound: 10.5, predictedMakespan: 12.25, totalEstimate: 42),
            timing: Timing(wall: 75.5, preparation: 21.4, makespan: 13.5, lowerBound: 11.0), destinationsAsGiven: true)

        /// One agent (`agent-1`) of two slots.
        public static let recorded = Frame(
            fanoutVersion: "0.1.0-test", length: 30,
            product: ProductInfo(package: "/src/app", bundle: "/src/app/.build/debug/AppPackageTests.xctest"),
            agents: [AgentInfo(name: "agent-1", transport: "local", slots: 2)],
            plan: PlanReport(slots: 2, lowerBound: 10, predictedMakespan: 12, totalEstimate: 20),
            timing: Timing(wall: 25, preparation: 5, makespan: 18, lowerBound: 15), destinationsAsGiven: false)
    }

    public init(destinations: [String] = ["linux"]) {
        self.destinations = destinations
    }

    /// A run on a timeline: `minute` places it, so the order of runs never depends on the order they are recorded in.
    /// Its tests ran on `agent-1`, and it exits 0 unless ``build(exitCode:)`` says otherwise.
    public init(_ runID: String, minute: Int, destination: String = "local") {
        self.runID = runID
        self.startedAt = Date(timeIntervalSince1970: 1_800_000_000 + Double(minute) * 60)
        self.destinations = [destination]
        self.exitCode = 0
        self.frame = .recorded
    }

    /// The first destination: where what is added goes unless it names another.
    public var destination: String { destinations[0] }

    /// `Module.Class/test`
    public static func id(_ text: String) -> TestID {
        let parts = text.split(separator: "/", maxSplits: 1)
        let suite = parts[0].split(separator: ".", maxSplits: 1)
        return TestID(module: String(suite[0]), suite: String(suite[1]), name: String(parts[1]))
    }

    // MARK: - A result at a time

    public mutating func unit(_ id: Int, destination: String? = nil, agent: String = "local", slot: Int = 0,
                              suites: [String] = [], ending: String = "exit 0", log: String = "",
                              startedAt: Double = 1, duration: Double = 2) {
        units[id] = UnitReport(id: id, destination: destination ?? destinations[0], framework: .xctest, agent: agent,
                               slot: slot, suites: suites, testCount: 1, estimate: duration, startedAt: startedAt,
                               duration: duration, ending: ending,
                               command: "/opt/bin/FanoutPackageTests.xctest \(suites.joined(separator: ","))",
                               log: log)
    }

    /// Adds a result whose attempts ran in the given units (created when missing).
    public mutating func result(_ test: String, _ outcome: Outcome, destination: String? = nil,
                                attempts: [Attempt]) {
        let destination = destination ?? destinations[0]
        let id = Self.id(test)
        for attempt in attempts where units[attempt.unit] == nil {
            unit(attempt.unit, destination: destination, suites: [id.suite.description])
        }
        results.append(TestResult(id: id, framework: .xctest, destination: destination, outcome: outcome,
                                  attempts: attempts))
    }

    public mutating func passed(_ test: String, destination: String? = nil, duration: Double = 0.012, unit: Int = 1) {
        result(test, .passed, destination: destination,
               attempts: [Attempt(outcome: .passed, duration: duration, unit: unit, agent: agent(of: unit))])
    }

    public mutating func failed(_ test: String, destination: String? = nil, issues: [Issue], unit: Int = 1) {
        result(test, .failed, destination: destination,
               attempts: [Attempt(outcome: .failed, duration: 0.2, issues: issues, unit: unit, agent: agent(of: unit))])
    }

    public mutating func skipped(_ test: String, reason: String?, unit: Int = 1) {
        result(test, .skipped, attempts: [Attempt(outcome: .skipped, duration: 0, skipReason: reason, unit: unit,
                                                  agent: agent(of: unit))])
    }

    public mutating func crashed(_ test: String, message: String, diagnostics: String, unit: Int) {
        result(test, .crashed, attempts: [Attempt(
            outcome: .crashed, duration: 0.5, issues: [Issue(kind: .crash, message: message)], unit: unit,
            agent: agent(of: unit), diagnostics: diagnostics)])
    }

    public mutating func timedOut(_ test: String, message: String, diagnostics: String?, unit: Int) {
        result(test, .timedOut, attempts: [Attempt(
            outcome: .timedOut, duration: 60, issues: [Issue(kind: .timeout, message: message)], unit: unit,
            agent: agent(of: unit), diagnostics: diagnostics)])
    }

    public mutating func notRun(_ test: String, reason: String, unit: Int) {
        result(test, .notRun, attempts: [Attempt(outcome: .notRun, duration: 0, skipReason: reason, unit: unit,
                                                 agent: agent(of: unit))])
    }

    /// Failed in `firstUnit` with `issue` (and `diagnostics`), then passed in `retryUnit`.
    public mutating func flaky(_ test: String, issue: Issue, diagnostics: String?, firstUnit: Int, retryUnit: Int) {
        result(test, .flaky, attempts: [
            Attempt(outcome: .failed, duration: 0.3, issues: [issue], unit: firstUnit, agent: agent(of: firstUnit),
                    diagnostics: diagnostics),
            Attempt(outcome: .passed, duration: 0.25, unit: retryUnit, agent: agent(of: retryUnit)),
        ])
    }

    public mutating func measurement(_ test: String, average: Double, rsd: Double, values: [Double],
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

    public mutating func classReport(_ suite: String, destination: String? = nil, estimate: Double, actual: Double?,
                                     source: String = "history (5 runs)", outcome: Outcome = .passed, tests: Int = 3) {
        let parts = suite.split(separator: ".", maxSplits: 1)
        classes.append(ClassReport(
            suite: SuiteID(module: String(parts[0]), name: String(parts[1])), framework: .xctest,
            destination: destination ?? destinations[0], testCount: tests, estimate: estimate,
            estimateSource: source, actual: actual, outcome: outcome, timingIsComplete: actual != nil,
            agent: "local"))
    }

    private func agent(of unit: Int) -> String { units[unit]?.agent ?? "local" }

    // MARK: - A class at a time (runs for the history)

    /// The agent a recorded run's tests ran on.
    private var recordingAgent: String { frame.agents.first?.name ?? "agent-1" }

    /// A class whose tests each took `testSeconds` (one attempt each, with the outcome of the class when it is a
    /// test outcome).
    @discardableResult
    public mutating func addClass(_ name: String, module: String = "AppTests", tests: Int = 2, actual: Double?,
                                  outcome: Outcome = .passed, complete: Bool = true, testSeconds: Double = 0.5,
                                  destination: String? = nil) -> Self {
        let destination = destination ?? self.destination
        let suite = SuiteID(module: module, name: name)
        classes.append(ClassReport(suite: suite, framework: .xctest, destination: destination, testCount: tests,
                                   estimate: 1, estimateSource: "test count", actual: actual, outcome: outcome,
                                   timingIsComplete: complete, agent: recordingAgent))
        let attemptOutcome: Outcome = outcome == .flaky ? .passed : outcome
        for index in 0..<tests {
            results.append(TestResult(
                id: TestID(suite: suite, name: "test\(index)"), framework: .xctest, destination: destination,
                outcome: outcome,
                attempts: outcome == .notRun ? [] : [Attempt(outcome: attemptOutcome, duration: testSeconds, unit: 1,
                                                            agent: recordingAgent)]))
        }
        return self
    }

    /// One test with explicit attempts, e.g. `[(.failed, 0.2), (.passed, 0.3)]` for a flaky one.
    public mutating func addTest(_ id: TestID, outcome: Outcome, attempts: [(Outcome, Double)],
                                 destination: String? = nil) {
        let agent = recordingAgent
        results.append(TestResult(
            id: id, framework: .xctest, destination: destination ?? self.destination, outcome: outcome,
            attempts: attempts.map { attempt in
                Attempt(outcome: attempt.0, duration: attempt.1,
                        issues: attempt.0 == .failed ? [Issue(kind: .assertion, message: "boom")] : [],
                        unit: 1, agent: agent)
            }))
    }

    public mutating func addUnit(id: Int, suites: [String], duration: Double, cpuSeconds: Double? = nil,
                                 peakMemoryBytes: Int64? = nil) {
        var unit = UnitReport(id: id, destination: destination, framework: .xctest, agent: recordingAgent, slot: 0,
                              suites: suites, testCount: 2, estimate: 1, startedAt: 0, duration: duration,
                              ending: "exit 0", command: "AppPackageTests.xctest \(suites.joined(separator: ","))",
                              log: "")
        unit.cpuSeconds = cpuSeconds
        unit.peakMemoryBytes = peakMemoryBytes
        units[id] = unit
    }

    public mutating func addMeasurement(_ test: TestID, values: [Double],
                                        identifier: String = "org.swift.XCTPerformanceMetric_WallClockTime",
                                        hardwareClass: String? = nil, baseline: Double? = nil) {
        let average = values.reduce(0, +) / Double(values.count)
        let measurement = FanoutCore.Measurement(
            test: test, metric: "Time", unit: "seconds", identifier: identifier,
            values: values, average: average, relativeStandardDeviation: 12.5,
            maxPercentRelativeStandardDeviation: 10, maxStandardDeviation: 0.1)
        measurements.append(MeasurementRecord(
            destination: destination, agent: recordingAgent, measurement: measurement, hardwareClass: hardwareClass,
            verdict: baseline.map { PerformanceVerdict(kind: .passed, baselineAverage: $0, message: "judged") }))
    }

    // MARK: - The report

    public func build(exitCode: Int32? = nil) -> RunReport {
        let destinations = frame.destinationsAsGiven
            ? self.destinations : Array(Set(classes.map(\.destination) + self.destinations)).sorted()
        let sorted = results.sorted { a, b in
            let ra = destinations.firstIndex(of: a.destination) ?? .max
            let rb = destinations.firstIndex(of: b.destination) ?? .max
            return (ra, a.id) < (rb, b.id)
        }
        let counts = Counts(sorted.map(\.outcome))
        let code: Int32 = exitCode ?? self.exitCode ?? (counts.failures > 0 ? 1 : counts.notRun > 0 ? 3 : 0)
        return RunReport(
            runID: runID, fanoutVersion: frame.fanoutVersion, startedAt: startedAt,
            finishedAt: startedAt.addingTimeInterval(frame.length), interrupted: interrupted,
            product: frame.product, destinations: destinations, agents: frame.agents, plan: frame.plan,
            units: units.values.sorted { $0.id < $1.id }, classes: classes, results: sorted,
            measurements: measurements, warnings: warnings, timing: frame.timing, exitCode: code)
    }
}
