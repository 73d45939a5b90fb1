import Foundation

/// One measured case: a strategy on a fleet, run for real.
struct CaseResult: Codable, Sendable {
    /// `fanout`, `count`, `name`, `timings`, `swift-test-parallel`.
    var strategy: String
    var label: String
    /// `local` (8 slots on this machine) or `ssh` (the 4-agent fleet).
    var fleet: String
    var slots: Int
    /// Seconds from starting the command (or the listing, for static shards) to its end; builds excluded.
    var wall: Double
    /// First test process start to last test process end, when known.
    var makespan: Double?
    /// Sum of the test methods' own durations in this run.
    var testTime: Double?
    var testsPassed: Int
    var testsExpected: Int
    /// Test processes started (units or shards), when known.
    var processes: Int?
    var note: String?
    /// How the command ended (0 expected), when it is one command.
    var exitCode: Int32?
    /// A Fanout run's own lower bound, `timing.lowerBound` of its report.json: from its per-test durations AND its
    /// CPU time / cores, so its makespan can never be below it. Absent for the other strategies (no report) and in
    /// results recorded before reports measured CPU.
    var lowerBound: Double?
    /// Which term of `lowerBound` binds (`slots`, `longest test`, `cpu`, `destination NAME`), when the report says.
    var boundBy: String?
    /// Every run of this case when it ran more than once (in round order): its walls, and its makespan / own lower
    /// bound where both are known. The row shows the median run; these give its min–max range.
    var runWalls: [Double]? = nil
    var runRatios: [Double]? = nil
    /// CPU seconds (user + system) of the command and everything it started and waited for (`/usr/bin/time`): the
    /// test processes, their starts, and the runner's own work. Nil when not measured.
    var cpuSeconds: Double? = nil

    /// Every asked-for test passed and the command exited 0: only such a row is a speed figure.
    var complete: Bool { testsPassed == testsExpected && (exitCode ?? 0) == 0 }
    /// A Fanout variant (warm, first run, wrong history, --package), not an alternative to it.
    var isFanout: Bool { strategy.hasPrefix("fanout") }
}

/// Everything measured for one generated suite.
struct SuiteResult: Codable, Sendable {
    var shape: SuiteShape
    var seed: UInt64
    var summary: String
    var classes: Int
    var methods: Int
    var nominalSerial: Double
    var buildSeconds: Double
    var slots: Int
    /// Per-method durations of the reference run (the last warm-up run of Fanout), summed.
    var referenceSerial: Double
    var longestMethod: Double
    var longestClass: Double
    /// max(total method time / parallelism, longest method): no schedule can end sooner, even one that splits
    /// classes. Parallelism is the slots for waiting tests, min(slots, cores) for computing ones.
    var methodLowerBound: Double
    /// Cores of the machine (computing suites are bounded by them, not by the slots).
    var cores: Int?
    /// max(total / slots, longest class): the bound for schedules of whole classes.
    var classLowerBound: Double
    /// Of `referenceSerial`, the methods of computing classes, when the suite mixes waiting and computing classes
    /// (its LB is then max(total / slots, this / cores, longest method)).
    var computingSerial: Double? = nil
    var fleetDescription: String?
    var deploy: String?
    /// /proc/loadavg (1-minute) when the suite's cases started and ended: the machine is shared.
    var loadAverage: [Double]?
    var cases: [CaseResult]
    /// The suite run as CI jobs (`fanout run --shard I/N` each), when measured.
    var ci: CIShardsResult?
    /// When this suite was measured by a later, partial run (`fanout-bench report --update`) than the rest of the
    /// data file: that run's date, commit and command.
    var measuredApart: String? = nil

    /// The bound a case's makespan is divided by: the run's own bound when it has one (Fanout's report.json, or the
    /// CPU a static split's processes used, measured in the same round), else the suite's reference
    /// `methodLowerBound` when every method waits. A suite with computing classes has no bound for a row whose run
    /// did not measure its own: the reference comes from another run (the last warm-up), and a run can beat it.
    func lowerBound(of c: CaseResult) -> Double? {
        if let own = c.lowerBound, own > 0 { return own }
        return shape.hasComputingTests ? nil : methodLowerBound
    }
    /// makespan / ``lowerBound(of:)``, when the case's makespan and bound are known.
    func ratio(_ c: CaseResult) -> Double? {
        guard let mk = c.makespan, let lb = lowerBound(of: c) else { return nil }
        return mk / max(lb, 1e-9)
    }
    /// True when some case is divided by its own run's bound (results recorded since reports measured CPU).
    var hasOwnBounds: Bool { cases.contains { $0.lowerBound != nil } }

    func fanout(_ fleet: String) -> CaseResult? { strategy("fanout", fleet) }
    func strategy(_ name: String, _ fleet: String = "local") -> CaseResult? {
        cases.first { $0.strategy == name && $0.fleet == fleet }
    }
    /// The alternatives to Fanout's warm run on a prebuilt product (`swift test` with its build step is compared with
    /// `fanout run --package` instead: like with like).
    func alternatives(_ fleet: String) -> [CaseResult] {
        cases.filter { !$0.isFanout && $0.strategy != "swift-test-parallel-build" && $0.fleet == fleet && $0.complete }
    }

    /// The Fanout row an alternative is compared with: the one invoked the same way.
    func fanoutPair(of c: CaseResult) -> CaseResult? {
        c.strategy == "swift-test-parallel-build" ? strategy("fanout-package", c.fleet) : fanout(c.fleet)
    }
}

/// The discrete-event simulation at scale: what it was asked and what it measured, as one flat JSON object (the
/// `sims[]` entries of docs/bench-results.json); their fields are read as the result's own.
@dynamicMemberLookup
struct SimulationResult: Codable, Sendable {
    var setup: SimulationSetup
    var outcome: SimulationOutcome

    init(setup: SimulationSetup, outcome: SimulationOutcome) {
        self.setup = setup
        self.outcome = outcome
    }

    init(from decoder: any Decoder) throws {
        setup = try SimulationSetup(from: decoder)
        outcome = try SimulationOutcome(from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        try setup.encode(to: encoder)
        try outcome.encode(to: encoder)
    }

    subscript<T>(dynamicMember path: KeyPath<SimulationSetup, T>) -> T { setup[keyPath: path] }
    subscript<T>(dynamicMember path: KeyPath<SimulationOutcome, T>) -> T { outcome[keyPath: path] }

    var ratio: Double { outcome.lowerBound > 0 ? outcome.makespan / outcome.lowerBound : 1 }
    var accountedFor: Bool {
        outcome.itemsMissing == 0 && outcome.itemsCompletedTwice == 0 && outcome.itemsCompleted == setup.classes
    }
}

/// What a simulation measured.
struct SimulationOutcome: Codable, Sendable {
    var estimateModel: String
    var schedulerInitSeconds: Double
    var planSeconds: Double
    /// The fastest of the repeated planning measurements (init + plan).
    var planningMinSeconds: Double
    /// Of init: `Scheduler.longestFirstMakespan` over the estimates.
    var longestFirstMakespanSeconds: Double
    /// Diagnostics: `Scheduler.init` on items already sorted longest first, and sorting (estimate, index) keys.
    var initPresortedSeconds: Double
    var sortKeysSeconds: Double
    /// Diagnostics: plan() with `fillWindow` 1 instead of the default.
    var planFillWindow1Seconds: Double
    var dispatchLoopSeconds: Double
    var nextCalls: Int
    var slowestNextMilliseconds: Double
    var requeueCalls: Int
    var requeueSeconds: Double
    var units: Int
    var predictedMakespan: Double
    var plannedLowerBound: Double
    var makespan: Double
    var lowerBound: Double
    var failedAgents: Int
    var requeuedItems: Int
    var itemsCompleted: Int
    var itemsCompletedTwice: Int
    var itemsMissing: Int
    var peakRSSMiB: Double
}

/// The 32-agent fleet on loopback.
struct FleetScaleResult: Codable, Sendable {
    var agents: Int
    var slotsPerAgent: Int
    var upSeconds: Double
    var checkWall: Double
    var connectMilliseconds: [Double]
    var latencyRuns: Int
    var latencyCheckWall: Double
    var dispatchP50Milliseconds: [Double]
    var dispatchP99Milliseconds: [Double]
    var runs: [FleetRun]
    /// What failed along the way (the rest was still measured).
    var problems: [String]?
}

struct FleetRun: Codable, Sendable {
    var label: String
    var suite: String
    var wall: Double
    var makespan: Double
    var lowerBound: Double
    var coordinatorUserSeconds: Double
    var coordinatorSystemSeconds: Double
    var coordinatorMaxRSSMiB: Double
    var deployedBytes: Int
    var deploySeconds: Double
    var units: Int
    var testsPassed: Int
    var testsExpected: Int
}

enum JSONFiles {
    static func write<T: Encodable>(_ value: T, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(value).write(to: url)
    }

    static func read<T: Decodable>(_ type: T.Type, from path: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

/// Everything one benchmark run measured, committed as docs/bench-results.json: BENCHMARKS.md, the chart and the
/// README's figures are generated from it (`fanout-bench report --from docs/bench-results.json --check` proves it).
struct BenchRun: Codable, Sendable {
    var machine: MarkdownReport.Machine
    var command: String
    var elapsed: String?
    var demo: String?
    var suites: [SuiteResult]
    var sims: [SimulationResult]
    var fleet: FleetScaleResult?
    /// `fanout report merge` over large shard reports, when measured.
    var mergeScale: MergeScaleResult?
    /// Public packages' own suites (`fanout-bench real`), when measured.
    var realSuites: [RealSuiteResult]? = nil
    /// Flake hunting (`fanout-bench repeat`), when measured.
    var hunt: HuntResult? = nil
    /// Selective testing (`fanout-bench selective`), when measured.
    var selective: SelectiveResult? = nil
    /// Selective testing by mutation of real packages (`fanout-bench selective-mutations`), when measured.
    var mutations: MutationsResult? = nil
    /// Suites with measure tests, with and without measuring alone (`fanout-bench performance`), when measured.
    var performance: PerformanceResult? = nil
}

/// `fanout-bench performance` on its packages, with when, where and how it was measured.
struct PerformanceResult: Codable, Sendable {
    var measured: String
    var suites: [PerformanceSuiteResult]
}

/// `fanout-bench selective-mutations` on real packages: the mutations (run side by side) and, measured apart on a
/// quiet machine, the timings (deciding with nothing changed, the recording run with and without observation).
struct MutationsResult: Codable, Sendable {
    var measured: String
    var runs: [SelectiveMutations.Results]
    var timings: [SelectiveMutations.Results]
}

/// A `fanout-bench selective` run, with when, where and how it was measured.
struct SelectiveResult: Codable, Sendable {
    var measured: String
    var results: SelectiveBench.Results
}

/// A `fanout-bench repeat` run, with when, where and how it was measured.
struct HuntResult: Codable, Sendable {
    var measured: String
    var results: RepeatBench.Results
}

/// A figure over repeated runs: the median and the min–max of the runs. A claim of "faster" holds only when the
/// whole range says so.
struct Spread: Sendable {
    var median: Double
    var min: Double
    var max: Double
    var runs: Int

    init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let n = sorted.count
        median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
        min = sorted[0]
        max = sorted[n - 1]
        runs = n
    }

    /// `1.234 (1.200–1.300)`, or the bare figure with `1 run` when it ran once.
    func text(_ format: (Double) -> String, unit: String = "") -> String {
        runs > 1 ? "\(format(median))\(unit) (\(format(min))–\(format(max))\(unit))" : "\(format(median))\(unit), 1 run"
    }

    /// For a ratio "other / Fanout": faster when every run is above 1, slower when every run is below, else even;
    /// judged at the two decimals shown (a lead that rounds to 1.00 is no lead).
    var verdict: String {
        func shown(_ x: Double) -> Double { (x * 100).rounded() / 100 }
        return shown(min) > 1 ? "faster" : shown(max) < 1 ? "slower" : "even"
    }
}

extension CaseResult {
    /// The wall of every run (the row's own when it ran once).
    var walls: [Double] { runWalls.flatMap { $0.isEmpty ? nil : $0 } ?? [wall] }
    /// Its walls' median and range (never empty).
    var wallSpread: Spread { Spread(walls)! }
}

extension SuiteResult {
    /// makespan / own lower bound over the runs of `c`.
    func ratioSpread(_ c: CaseResult) -> Spread? {
        if let runs = c.runRatios, !runs.isEmpty { return Spread(runs) }
        return ratio(c).flatMap { Spread([$0]) }
    }
}

/// `alt`'s wall / `fanout`'s wall, round by round when both ran the same rounds (the rounds interleave the
/// strategies, so a busy moment of the machine falls on both), else the medians' ratio.
func speedups(_ alt: CaseResult, over fanout: CaseResult) -> Spread {
    let a = alt.walls, f = fanout.walls
    let paired = a.count == f.count && a.count > 1 ? zip(a, f).map { $0 / Swift.max($1, 1e-9) } : [alt.wall / Swift.max(fanout.wall, 1e-9)]
    return Spread(paired)!
}
