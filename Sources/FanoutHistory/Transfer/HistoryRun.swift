import FanoutCore
import struct Foundation.Date

/// Everything the history keeps of one run, as one value: what ``HistoryStore/record(_:)`` makes of a `RunReport`,
/// what an export holds per run, what an import writes back, and what a JUnit file becomes.
///
/// It mirrors the store's tables rather than the report (no logs, no command lines, only the first failure message of
/// an attempt), so an export read back into a fresh store gives the same rows, and so the same estimates, flaky
/// statistics and measurements. Its JSON shape is the `runs[]` entry of docs/history-format.md: change it only
/// together with ``HistoryExport/currentVersion``.
public struct HistoryRun: Codable, Sendable, Hashable {
    /// The run's identity: a run already in the store under this id is never imported again.
    public var runID: String
    public var startedAt: Date
    public var finishedAt: Date
    public var fanoutVersion: String
    public var exitCode: Int32
    public var interrupted: Bool
    /// The destinations the run targeted. Per-test timings of a destination are read only from runs that list it.
    public var destinations: [String]
    /// The SHA-256 of the test product the run ran (report.json's `product.sha256`), when known: two runs of one
    /// product that gave a test both verdicts are the evidence of a flake (``FlakeScore``).
    public var product: String?
    public var slots: Int
    public var wall: Double?
    public var preparation: Double?
    public var makespan: Double?
    public var lowerBound: Double?
    public var predictedMakespan: Double?
    public var plannedLowerBound: Double?
    public var totalEstimate: Double?
    /// Final outcome counts over `tests`, as the report computed them.
    public var counts: Counts
    public var units: [UnitRun]
    public var classes: [ClassRun]
    public var tests: [TestRun]
    public var measurements: [MeasurementRun]

    public init(runID: String, startedAt: Date, finishedAt: Date, fanoutVersion: String, exitCode: Int32,
                interrupted: Bool, destinations: [String], product: String? = nil, slots: Int, wall: Double? = nil,
                preparation: Double? = nil,
                makespan: Double? = nil, lowerBound: Double? = nil, predictedMakespan: Double? = nil,
                plannedLowerBound: Double? = nil, totalEstimate: Double? = nil, counts: Counts,
                units: [UnitRun] = [], classes: [ClassRun] = [], tests: [TestRun] = [],
                measurements: [MeasurementRun] = []) {
        self.runID = runID
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.fanoutVersion = fanoutVersion
        self.exitCode = exitCode
        self.interrupted = interrupted
        self.destinations = destinations
        self.product = product
        self.slots = slots
        self.wall = wall
        self.preparation = preparation
        self.makespan = makespan
        self.lowerBound = lowerBound
        self.predictedMakespan = predictedMakespan
        self.plannedLowerBound = plannedLowerBound
        self.totalEstimate = totalEstimate
        self.counts = counts
        self.units = units
        self.classes = classes
        self.tests = tests
        self.measurements = measurements
    }

    /// One test process of the run: what the history keeps of a report's ``UnitReport`` (its ``UnitSummary``, its
    /// times and the agent's cores; no command, no log), made only here (from a report, or from the store's rows), so
    /// it has no public initializer. Its JSON is one flat object, as docs/history-format.md has it.
    @dynamicMemberLookup
    public struct UnitRun: Codable, Sendable, Hashable {
        public var summary: UnitSummary
        public var estimate: Double?
        /// Seconds since the run started.
        public var startedAt: Double?
        public var duration: Double?
        /// Online CPUs of the agent's machine.
        public var cores: Int?

        init(summary: UnitSummary, estimate: Double?, startedAt: Double?, duration: Double?, cores: Int?) {
            self.summary = summary
            self.estimate = estimate
            self.startedAt = startedAt
            self.duration = duration
            self.cores = cores
        }

        public subscript<T>(dynamicMember path: KeyPath<UnitSummary, T>) -> T { summary[keyPath: path] }

        private enum CodingKeys: String, CodingKey { case estimate, startedAt, duration, cores }

        public init(from decoder: any Decoder) throws {
            summary = try UnitSummary(from: decoder)
            let c = try decoder.container(keyedBy: CodingKeys.self)
            estimate = try c.decodeIfPresent(Double.self, forKey: .estimate)
            startedAt = try c.decodeIfPresent(Double.self, forKey: .startedAt)
            duration = try c.decodeIfPresent(Double.self, forKey: .duration)
            cores = try c.decodeIfPresent(Int.self, forKey: .cores)
        }

        public func encode(to encoder: any Encoder) throws {
            try summary.encode(to: encoder)
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encodeIfPresent(estimate, forKey: .estimate)
            try c.encodeIfPresent(startedAt, forKey: .startedAt)
            try c.encodeIfPresent(duration, forKey: .duration)
            try c.encodeIfPresent(cores, forKey: .cores)
        }
    }

    /// One class (or Swift Testing suite) on one destination: the samples class estimates come from.
    public struct ClassRun: Codable, Sendable, Hashable {
        public var destination: String
        public var framework: Framework
        public var module: String
        public var suite: String
        public var testCount: Int
        public var estimate: Double?
        public var estimateSource: String
        /// Measured seconds of the whole class.
        public var actual: Double?
        public var outcome: Outcome
        /// Only a class that ran whole, in one process, and ended normally teaches the estimator.
        public var timingComplete: Bool
        public var agent: String?
        /// CPU seconds its tests consumed.
        public var cpuSeconds: Double?

        public init(destination: String, framework: Framework, module: String, suite: String, testCount: Int,
                    estimate: Double?, estimateSource: String, actual: Double?, outcome: Outcome,
                    timingComplete: Bool, agent: String?, cpuSeconds: Double? = nil) {
            self.destination = destination
            self.framework = framework
            self.module = module
            self.suite = suite
            self.testCount = testCount
            self.estimate = estimate
            self.estimateSource = estimateSource
            self.actual = actual
            self.outcome = outcome
            self.timingComplete = timingComplete
            self.agent = agent
            self.cpuSeconds = cpuSeconds
        }

        public var id: SuiteID { SuiteID(module: module, name: suite) }
    }

    /// One test on one destination: its final outcome and every attempt (a flaky test has two or more).
    public struct TestRun: Codable, Sendable, Hashable {
        public var destination: String
        public var module: String
        public var suite: String
        public var name: String
        public var framework: Framework
        public var outcome: Outcome
        public var attempts: [TestAttempt]
        /// Found order-dependent in this run: its polluters (empty when they were not narrowed down); nil: not.
        public var orderPolluters: [String]?

        public init(destination: String, id: TestID, framework: Framework, outcome: Outcome,
                    attempts: [TestAttempt], orderPolluters: [String]? = nil) {
            self.orderPolluters = orderPolluters
            self.destination = destination
            self.module = id.suite.module
            self.suite = id.suite.name
            self.name = id.name
            self.framework = framework
            self.outcome = outcome
            self.attempts = attempts
        }

        public var id: TestID { TestID(module: module, suite: suite, name: name) }
    }

    public struct TestAttempt: Codable, Sendable, Hashable {
        public var outcome: Outcome
        /// Seconds; for a timed-out attempt, how long it had run when it was killed (it takes at least that long).
        public var duration: Double?
        public var agent: String
        /// The unit (`units[].id`) the attempt ran in.
        public var unit: Int
        /// The message of its first failing issue.
        public var failure: String?
        /// CPU seconds its process consumed while it ran (kept to the millisecond).
        public var cpuSeconds: Double?
        /// The nth test its process started (1-based): the attempts of the same unit with a lower position ran
        /// before it there (what `fanout bisect` replays). nil: not known (recorded before Fanout kept it).
        public var position: Int?
        /// An order check: the unit whose order it replayed.
        public var replayOf: Int?

        public init(outcome: Outcome, duration: Double?, agent: String, unit: Int, failure: String? = nil,
                    cpuSeconds: Double? = nil, position: Int? = nil, replayOf: Int? = nil) {
            self.position = position
            self.replayOf = replayOf
            self.outcome = outcome
            self.duration = duration
            self.agent = agent
            self.unit = unit
            self.failure = failure
            self.cpuSeconds = cpuSeconds
        }
    }

    /// One `measure {}` result.
    public struct MeasurementRun: Codable, Sendable, Hashable {
        public var destination: String
        public var agent: String
        public var module: String
        public var suite: String
        public var name: String
        public var metric: String
        public var unit: String
        public var identifier: String
        public var samples: [Double]
        public var average: Double?
        public var relativeStandardDeviation: Double?
        public var maxRelativeStandardDeviation: Double?
        public var maxStandardDeviation: Double?
        /// The agent's hardware class ("" when it could not be read; absent for a measurement recorded before
        /// Fanout kept it, which no performance trend uses) and the baseline average it was judged against.
        public var hardwareClass: String?
        public var baseline: Double?

        public init(destination: String, agent: String, test: TestID, metric: String, unit: String,
                    identifier: String, samples: [Double], average: Double?, relativeStandardDeviation: Double?,
                    maxRelativeStandardDeviation: Double?, maxStandardDeviation: Double?, hardwareClass: String? = nil,
                    baseline: Double? = nil) {
            self.destination = destination
            self.agent = agent
            self.module = test.suite.module
            self.suite = test.suite.name
            self.name = test.name
            self.metric = metric
            self.unit = unit
            self.identifier = identifier
            self.samples = samples
            self.average = average
            self.relativeStandardDeviation = relativeStandardDeviation
            self.maxRelativeStandardDeviation = maxRelativeStandardDeviation
            self.maxStandardDeviation = maxStandardDeviation
            self.hardwareClass = hardwareClass
            self.baseline = baseline
        }

        public init(_ record: MeasurementRecord) {
            let m = record.measurement
            self.init(destination: record.destination, agent: record.agent, test: m.test, metric: m.metric, unit: m.unit,
                      identifier: m.identifier, samples: m.values, average: m.average,
                      relativeStandardDeviation: m.relativeStandardDeviation,
                      maxRelativeStandardDeviation: m.maxPercentRelativeStandardDeviation,
                      maxStandardDeviation: m.maxStandardDeviation,
                      hardwareClass: record.hardwareClass ?? Baseline.unknownHardwareClass,
                      baseline: record.verdict?.baselineAverage)
        }
    }
}

extension HistoryRun {
    /// What the history keeps of a finished run.
    public init(_ report: RunReport) {
        let plan = report.plan, timing = report.timing
        let cores = Dictionary(report.agents.map { ($0.name, $0.cores) }, uniquingKeysWith: { first, _ in first })
        self.init(
            runID: report.runID, startedAt: report.startedAt, finishedAt: report.finishedAt,
            fanoutVersion: report.fanoutVersion, exitCode: report.exitCode, interrupted: report.interrupted,
            destinations: report.destinations, product: report.product.sha256, slots: plan.slots, wall: timing.wall,
            preparation: timing.preparation, makespan: timing.makespan, lowerBound: timing.lowerBound,
            predictedMakespan: plan.predictedMakespan, plannedLowerBound: plan.lowerBound,
            totalEstimate: plan.totalEstimate, counts: report.counts,
            units: report.units.map { unit in
                UnitRun(summary: unit.summary, estimate: unit.estimate, startedAt: unit.startedAt,
                        duration: unit.duration, cores: cores[unit.agent] ?? nil)
            },
            classes: report.classes.map { entry in
                ClassRun(destination: entry.destination, framework: entry.framework, module: entry.suite.module,
                         suite: entry.suite.name, testCount: entry.testCount, estimate: entry.estimate,
                         estimateSource: entry.estimateSource, actual: entry.actual, outcome: entry.outcome,
                         timingComplete: entry.timingIsComplete, agent: entry.agent, cpuSeconds: entry.cpuSeconds)
            },
            tests: report.results.map { test in
                TestRun(destination: test.destination, id: test.id, framework: test.framework, outcome: test.outcome,
                        // A contended attempt (set aside, run again alone) says nothing of the test: no flake.
                        attempts: test.attempts.filter { $0.contended == nil || test.attempts.allSatisfy { $0.contended != nil } }.map { attempt in
                            TestAttempt(outcome: attempt.outcome, duration: attempt.duration, agent: attempt.agent,
                                        unit: attempt.unit,
                                        failure: attempt.issues.first(where: \.isFailure)?.message,
                                        cpuSeconds: attempt.cpuSeconds, position: attempt.position,
                                        replayOf: attempt.replayOf)
                        },
                        orderPolluters: test.orderDependence.map { ($0.polluters ?? []).map(\.description) })
            },
            measurements: report.measurements.map(MeasurementRun.init))
    }
}
