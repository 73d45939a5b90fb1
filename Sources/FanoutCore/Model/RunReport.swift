import struct Foundation.Date

/// The merged model of one run: the single source of every output format (JSON, JUnit, console).
/// Documented field by field in `docs/report-schema.md`; bump `schemaVersion` on any incompatible change.
public struct RunReport: Codable, Sendable, Hashable {
    public static let currentSchemaVersion = 1

    public var schemaVersion: Int
    public var runID: String
    public var fanoutVersion: String
    public var startedAt: Date
    public var finishedAt: Date
    /// True when the run was stopped before it finished (SIGINT/SIGTERM): the report holds what was done by then.
    public var interrupted: Bool
    /// Where the tests came from: the package path or the bundle path given.
    public var product: ProductInfo
    public var destinations: [String]
    public var agents: [AgentInfo]
    public var plan: PlanReport
    public var units: [UnitReport]
    /// One entry per class (or suite) and destination: estimate versus actual time.
    public var classes: [ClassReport]
    /// Every test that was asked for, exactly once per destination, sorted by destination then id.
    public var results: [TestResult]
    public var measurements: [MeasurementRecord]
    /// Infrastructure problems that did not stop the run (an agent lost, history moved aside, ...).
    public var warnings: [String]
    /// Work stealing: every time idle slots took over tests a running unit had not started. Absent in older reports.
    public var steals: [StealReport]?
    /// The shard of a run split across CI jobs (`--shard I/N`); absent when the run was not sharded.
    public var shard: Shard?
    /// A `--repeat` run (flake hunting): repetitions, seed, and the first failure; absent in an ordinary run.
    public var repeatRun: RepeatReport?
    /// `--shuffle SEED`: the seed that dealt classes to processes (run again with it to get the same processes).
    public var shuffleSeed: Int?
    /// `--selective`: each test target's decision (skipped as unchanged, or run and why) and what the run recorded;
    /// absent when the run was not selective.
    public var selective: SelectiveReport?
    /// `hooks:` of fanout.yml: every set-up and teardown that ran, in the order they started; absent when the
    /// config has none.
    public var hooks: [HookReport]?
    public var timing: Timing
    public var exitCode: Int32

    public init(schemaVersion: Int = RunReport.currentSchemaVersion, runID: String, fanoutVersion: String,
                startedAt: Date, finishedAt: Date, interrupted: Bool, product: ProductInfo, destinations: [String],
                agents: [AgentInfo], plan: PlanReport, units: [UnitReport], classes: [ClassReport],
                results: [TestResult], measurements: [MeasurementRecord], warnings: [String], timing: Timing,
                exitCode: Int32) {
        self.schemaVersion = schemaVersion
        self.runID = runID
        self.fanoutVersion = fanoutVersion
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.interrupted = interrupted
        self.product = product
        self.destinations = destinations
        self.agents = agents
        self.plan = plan
        self.units = units
        self.classes = classes
        self.results = results
        self.measurements = measurements
        self.warnings = warnings
        self.timing = timing
        self.exitCode = exitCode
    }

    /// Counts of final outcomes over `results` (muted failures apart).
    public var counts: Counts { Counts(results: results) }
}

public struct ProductInfo: Codable, Sendable, Hashable {
    public var package: String?
    public var bundle: String
    public var sha256: String?

    public init(package: String?, bundle: String, sha256: String? = nil) {
        self.package = package
        self.bundle = bundle
        self.sha256 = sha256
    }
}

public struct AgentInfo: Codable, Sendable, Hashable {
    public var name: String
    /// `local` or `ssh`.
    public var transport: String
    public var slots: Int
    public var host: String?
    /// Bytes of the test product uploaded to this agent for this run (0 when its cache already had it).
    public var deployedBytes: Int?
    /// Seconds from connecting to the product being ready on the agent.
    public var deploySeconds: Double?
    /// Why the agent was skipped or lost during the run, if it was.
    public var problem: String?
    /// Mean start-up cost of one test process measured on this agent (unit time minus the suites' own time), in
    /// seconds. Used to size batches; never counted as test time in the history.
    public var overhead: Double?
    /// The agent's machine: online CPUs, physical memory in bytes, and an identity shared by agents on one machine.
    /// Absent when the agent could not tell (and in reports written before they were measured).
    public var cores: Int?
    public var memoryBytes: Int64?
    public var machine: String?
    /// CPU seconds (user + system) its units consumed (superseded twins included), and that as a share of its cores
    /// over the run's makespan: cpuSeconds / (cores × makespan). Agents on one machine all report that machine's
    /// cores, so each one's `cpuBusy` is its share of the whole machine, and the machine's busy share is the sum
    /// over its agents. Absent when its units' CPU was not measured (`cpuBusy` also when its cores are unknown).
    public var cpuSeconds: Double?
    public var cpuBusy: Double?

    public init(name: String, transport: String, slots: Int, host: String? = nil, deployedBytes: Int? = nil,
                deploySeconds: Double? = nil, problem: String? = nil, overhead: Double? = nil) {
        self.name = name
        self.transport = transport
        self.slots = slots
        self.host = host
        self.deployedBytes = deployedBytes
        self.deploySeconds = deploySeconds
        self.problem = problem
        self.overhead = overhead
    }
}

public struct PlanReport: Codable, Sendable, Hashable {
    public var slots: Int
    /// max(total estimated work / slots, longest unit), in seconds.
    public var lowerBound: Double
    public var predictedMakespan: Double
    public var totalEstimate: Double
    /// Whether computing work waited for a free core (CPU-aware packing; `--no-cpu-packing` turns it off). Nil in
    /// reports written before it was recorded, and in merged reports.
    public var cpuPacking: Bool?

    public init(slots: Int, lowerBound: Double, predictedMakespan: Double, totalEstimate: Double, cpuPacking: Bool? = nil) {
        self.slots = slots
        self.lowerBound = lowerBound
        self.predictedMakespan = predictedMakespan
        self.totalEstimate = totalEstimate
        self.cpuPacking = cpuPacking
    }
}

/// Idle slots took over tests a running unit had not started yet (work stealing).
public struct StealReport: Codable, Sendable, Hashable {
    /// The unit that handed its tests over, and the units that took them.
    public var from: Int
    public var to: [Int]
    public var tests: Int
    /// Seconds since the run started.
    public var at: Double
    /// Expected seconds until the original's work was all done, without and with the steal (from this run's test
    /// times where known, else the estimates): `expectedBefore − expectedAfter` is the expected saving.
    public var expectedBefore: Double
    public var expectedAfter: Double

    public init(from: Int, to: [Int], tests: Int, at: Double, expectedBefore: Double, expectedAfter: Double) {
        self.from = from
        self.to = to
        self.tests = tests
        self.at = at
        self.expectedBefore = expectedBefore
        self.expectedAfter = expectedAfter
    }
}

/// One test process that ran (or was meant to run) a unit: its ``UnitSummary`` (whose fields it reads and writes as
/// its own, and encodes as its own keys) and the process itself.
@dynamicMemberLookup
public struct UnitReport: Codable, Sendable, Hashable {
    public var summary: UnitSummary
    public var estimate: Double
    /// Seconds since the run started.
    public var startedAt: Double
    public var duration: Double
    /// The command line that ran (already quoted for a shell), for reproducing the unit by hand.
    public var command: String
    /// Standard output then standard error of the process, cut to a bounded size (head and tail kept).
    public var log: String
    /// Work stealing: the running unit whose not-yet-started tests this unit took over.
    public var takenFrom: Int?
    /// Work stealing: how many of its tests this unit handed over to other units before it started them.
    public var handedOver: Int?
    /// Seconds its processes were ready to run but waited for a core (``ResourceUsage/cpuWaitSeconds``): what
    /// sharing the cores cost it. Absent when the agent could not measure it.
    public var cpuWaitSeconds: Double?
    /// An order check (`--retries`): the test (`Module.Class/test`) it replayed after the tests that preceded its
    /// failure; only that test's attempt counts.
    public var replayOf: String?

    public init(id: Int, destination: String, framework: Framework, agent: String, slot: Int, suites: [String],
                testCount: Int, estimate: Double, startedAt: Double, duration: Double, ending: String,
                command: String, log: String, takenFrom: Int? = nil, handedOver: Int? = nil) {
        self.summary = UnitSummary(id: id, destination: destination, framework: framework, agent: agent, slot: slot,
                                   suites: suites, testCount: testCount, ending: ending)
        self.estimate = estimate
        self.startedAt = startedAt
        self.duration = duration
        self.command = command
        self.log = log
        self.takenFrom = takenFrom
        self.handedOver = handedOver
    }

    public subscript<T>(dynamicMember path: WritableKeyPath<UnitSummary, T>) -> T {
        get { summary[keyPath: path] }
        set { summary[keyPath: path] = newValue }
    }

    private enum CodingKeys: String, CodingKey {
        case estimate, startedAt, duration, command, log, takenFrom, handedOver, cpuWaitSeconds, replayOf
    }

    public init(from decoder: any Decoder) throws {
        summary = try UnitSummary(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        estimate = try c.decode(Double.self, forKey: .estimate)
        startedAt = try c.decode(Double.self, forKey: .startedAt)
        duration = try c.decode(Double.self, forKey: .duration)
        command = try c.decode(String.self, forKey: .command)
        log = try c.decode(String.self, forKey: .log)
        takenFrom = try c.decodeIfPresent(Int.self, forKey: .takenFrom)
        handedOver = try c.decodeIfPresent(Int.self, forKey: .handedOver)
        cpuWaitSeconds = try c.decodeIfPresent(Double.self, forKey: .cpuWaitSeconds)
        replayOf = try c.decodeIfPresent(String.self, forKey: .replayOf)
    }

    public func encode(to encoder: any Encoder) throws {
        try summary.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(estimate, forKey: .estimate)
        try c.encode(startedAt, forKey: .startedAt)
        try c.encode(duration, forKey: .duration)
        try c.encode(command, forKey: .command)
        try c.encode(log, forKey: .log)
        try c.encodeIfPresent(takenFrom, forKey: .takenFrom)
        try c.encodeIfPresent(handedOver, forKey: .handedOver)
        try c.encodeIfPresent(cpuWaitSeconds, forKey: .cpuWaitSeconds)
        try c.encodeIfPresent(replayOf, forKey: .replayOf)
    }
}

public struct ClassReport: Codable, Sendable, Hashable {
    public var suite: SuiteID
    public var framework: Framework
    public var destination: String
    public var testCount: Int
    public var estimate: Double
    public var estimateSource: String
    /// Measured seconds of the class (its suite time when the framework reports one, else the sum of its tests).
    public var actual: Double?
    public var outcome: Outcome
    /// True when the whole class ran in one process and ended normally (passed or failed, no crash, no time-out,
    /// not split): only such times teach the timing history.
    public var timingIsComplete: Bool
    public var agent: String?
    /// CPU seconds its tests consumed: the sum of their attempts' `cpuSeconds` when every attempt that ran has one,
    /// else its share of its units' CPU in proportion to its time in each unit (see `RunReportAssembly.classCPU`);
    /// absent when not measured.
    public var cpuSeconds: Double?

    public init(suite: SuiteID, framework: Framework, destination: String, testCount: Int, estimate: Double,
                estimateSource: String, actual: Double?, outcome: Outcome, timingIsComplete: Bool,
                agent: String? = nil) {
        self.suite = suite
        self.framework = framework
        self.destination = destination
        self.testCount = testCount
        self.estimate = estimate
        self.estimateSource = estimateSource
        self.actual = actual
        self.outcome = outcome
        self.timingIsComplete = timingIsComplete
        self.agent = agent
    }
}

public struct MeasurementRecord: Codable, Sendable, Hashable {
    public var destination: String
    public var agent: String
    public var measurement: Measurement
    /// The agent's hardware class (CPU model and count): baselines apply per destination AND hardware class.
    public var hardwareClass: String?
    /// The verdict against the baseline of this destination and hardware class (nil when not judged).
    public var verdict: PerformanceVerdict?
    /// Earlier runs' results of the same test and metric on this destination and hardware class, from the timing
    /// history. Nil when no history was read (none yet, or a report written before trends existed).
    public var trend: PerformanceTrend?
    /// Whether nothing else ran on its agent from its test's start to the measurement. Nil in reports written
    /// before Fanout said.
    public var measuredAlone: Bool?

    public init(destination: String, agent: String, measurement: Measurement, hardwareClass: String? = nil,
                verdict: PerformanceVerdict? = nil, trend: PerformanceTrend? = nil, measuredAlone: Bool? = nil) {
        self.destination = destination
        self.agent = agent
        self.measurement = measurement
        self.hardwareClass = hardwareClass
        self.verdict = verdict
        self.trend = trend
        self.measuredAlone = measuredAlone
    }
}

public struct Timing: Codable, Sendable, Hashable {
    /// Wall-clock seconds from start to the last result, build and discovery included.
    public var wall: Double
    /// Seconds spent building and discovering before the first unit started.
    public var preparation: Double
    /// Seconds from the first unit's start to the last unit's end.
    public var makespan: Double
    /// The lower bound from this run's per-TEST durations and CPU: max(total test time / slots, the longest single
    /// test, each destination's test time / the slots serving it, CPU time / cores when CPU was measured). It does
    /// not depend on how Fanout grouped the tests: no schedule, not even one that runs every test in a process of
    /// its own, ends sooner. `boundBy` names the term that binds.
    public var lowerBound: Double
    /// The same bound over the pieces of work Fanout scheduled as one (a whole class, or a group of methods of a
    /// split class): how close the run came to the best schedule of the units it chose. Never below `lowerBound`.
    /// Absent in reports written before it existed.
    public var classLowerBound: Double?
    /// makespan / lowerBound (1.0 is perfect).
    public var efficiency: Double
    /// CPU seconds (user + system) of every unit of the run, and the cores of the machines that ran them (each
    /// machine counted once, however many agents it holds). Absent when not measured.
    public var cpuSeconds: Double?
    public var cores: Int?
    /// cpuSeconds / cores: no schedule on these machines ends sooner. Part of `lowerBound`. (CPU of an agent whose
    /// cores are unknown is left out of it; in a merged report it is the largest shard's, see `ReportMerger`.)
    public var cpuLowerBound: Double?
    /// Which term of `lowerBound` binds: `slots` (test time / slots), `longest test`, `cpu` (CPU time / cores), or
    /// `destination NAME` (its test time / the slots serving it).
    public var boundBy: String?
    /// Where the run's time went, phase by phase in order (``PhaseTimeline``): from the command's start to the history
    /// written, one phase after another, so the time outside the tests (`tests` is the makespan) is all named. The
    /// report files' own writing comes after and is not in it (`fanout run --timings` prints it). Absent in reports
    /// written before Fanout kept it, and in merged reports.
    public var phases: [PhaseTime]?

    public init(wall: Double, preparation: Double, makespan: Double, lowerBound: Double, classLowerBound: Double? = nil) {
        self.wall = wall
        self.preparation = preparation
        self.makespan = makespan
        self.lowerBound = lowerBound
        self.classLowerBound = classLowerBound
        self.efficiency = lowerBound > 0 ? makespan / lowerBound : 1
    }
}

extension Timing {
    /// How busy the run kept the cores it counts: `cpuSeconds / (cores × makespan)`; 1.0 is every core computing from
    /// the first unit's start to the last unit's end. Nil when CPU or cores were not measured, or nothing ran.
    public var cpuBusy: Double? {
        guard let cpu = cpuSeconds, let cores, cores > 0, makespan > 0 else { return nil }
        return cpu / (Double(cores) * makespan)
    }
}

public struct Counts: Codable, Sendable, Hashable {
    public var total = 0, passed = 0, flaky = 0, failed = 0, skipped = 0, crashed = 0, timedOut = 0, notRun = 0
    /// Tests that failed, crashed or timed out while muted by quarantine: counted here, not as failures, since they
    /// do not fail the run.
    public var muted = 0

    public init(_ outcomes: [Outcome] = []) {
        for o in outcomes { add(o) }
    }

    /// Counts of results, where a muted failure counts as `muted` instead of as its outcome.
    public init(results: [TestResult]) {
        for r in results {
            if r.isMutedFailure {
                total += 1
                muted += 1
            } else {
                add(r.outcome)
            }
        }
    }

    private enum CodingKeys: String, CodingKey {
        case total, passed, flaky, failed, skipped, crashed, timedOut, notRun, muted
    }

    /// Counts written before quarantine have no `muted`: 0.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        total = try c.decode(Int.self, forKey: .total)
        passed = try c.decode(Int.self, forKey: .passed)
        flaky = try c.decode(Int.self, forKey: .flaky)
        failed = try c.decode(Int.self, forKey: .failed)
        skipped = try c.decode(Int.self, forKey: .skipped)
        crashed = try c.decode(Int.self, forKey: .crashed)
        timedOut = try c.decode(Int.self, forKey: .timedOut)
        notRun = try c.decode(Int.self, forKey: .notRun)
        muted = try c.decodeIfPresent(Int.self, forKey: .muted) ?? 0
    }

    public mutating func add(_ o: Outcome) {
        total += 1
        switch o {
        case .passed: passed += 1
        case .flaky: flaky += 1
        case .failed: failed += 1
        case .skipped: skipped += 1
        case .crashed: crashed += 1
        case .timedOut: timedOut += 1
        case .notRun: notRun += 1
        }
    }

    public var failures: Int { failed + crashed + timedOut }
}
