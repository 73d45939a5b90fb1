import FanoutAgents
import FanoutCore
import Foundation

/// Everything a run needs to know, after the config file and the flags are merged (flags win).
public struct RunSettings: Sendable, Hashable {
    /// The Swift package to build (`swift build --build-tests`) and test.
    public var packagePath = "."
    /// A built test product to use as it is: skips the build.
    public var bundlePath: String?
    /// `debug` or `release`.
    public var configuration = "debug"
    /// `--scratch-path` of the build; nil: SwiftPM's default (`<package>/.build`).
    public var scratchPath: String?
    /// Extra arguments for `swift build` (e.g. `-Xswiftc -DFOO`).
    public var buildFlags: [String] = []
    /// Regexes over `Module.Class`: a class runs when it matches any filter (or there is none) and no skip.
    public var filters: [String] = []
    public var skips: [String] = []
    /// Local worker slots.
    public var slots = RunSettings.defaultSlots

    /// Twice the cores: slots beyond the cores run waiting work (tests that sleep, read sockets, wait on
    /// expectations) while CPU-aware packing keeps computing work at one process per free core. Not more, because a
    /// first run knows no class's CPU share or memory yet (everything is admitted then).
    public static var defaultSlots: Int { max(2, 2 * ProcessInfo.processInfo.activeProcessorCount) }
    /// Where report folders go (`<root>/<run-id>/`), unless `reportDirectory` names the folder itself.
    public var reportRoot = ".fanout/reports"
    public var reportDirectory: String?
    public var historyPath = ".fanout/history.sqlite"
    /// Do not write this run into the timing history (exploratory local runs should not teach CI's estimates).
    public var recordHistory = true
    /// Seconds from the `fanout` process's start to the run's (reading the command line and the config): the run's
    /// first phase, `start-up`, when the command measured it.
    public var startUpSeconds: Double?
    /// When a test counts as hung (no output and no CPU time for its stall window) and how long it may run at all
    /// (its ceiling): defaults without history, multiples of its own durations with history (README "Timeouts").
    public var timeLimits = TimeLimitRules()
    /// Explicit limits for the classes a pattern (a regex over `Module.Class`) matches; the first match wins.
    public var classTimeLimits: [ClassTimeLimit] = []
    /// The estimate of a class is this percentile (0-100) of its last `historyWindow` runs.
    public var percentile = 80.0
    public var historyWindow = 10
    /// Estimated cost of starting one test process, used to size batches.
    public var invocationOverhead = 0.02
    /// Classes (regexes over `Module.Class`) that are never split by methods, however long: for classes whose
    /// class-level set-up is expensive or whose tests depend on each other.
    public var keepWhole: [String] = []
    /// Split classes longer than one slot's share of the work into groups of methods.
    public var splitClasses = true
    /// CPU-aware packing: computing work starts only while its machine has a core for it, and any work only while
    /// its memory holds it; waiting work fills the other slots (see CapacityPolicy).
    public var cpuPacking = true
    /// The quarantine file committed with the project (docs/quarantine.md): muted and skipped tests. A missing file
    /// is an empty quarantine.
    public var quarantinePath = QuarantineFile.defaultName
    /// The day (`YYYY-MM-DD`, UTC) quarantine expiries are judged against; nil: today.
    public var quarantineToday: String?
    /// Selective testing: skip test targets whose every input equals that of a full pass on record.
    public var selective = SelectiveSettings()
    /// The baselines file committed with the project (see docs/baselines.md).
    public var baselinesPath = "fanout-baselines.json"
    /// A performance regression against an accepted baseline fails the run (exit 1).
    public var failOnPerfRegression = false
    /// The performance rule's thresholds (Xcode's by default), with per-test overrides.
    public var performance = PerformanceRules()
    /// Re-run failed tests up to this many times (preferring another agent). A test that fails and then passes
    /// is flaky: counted once, as a pass with flakes.
    public var retries = 0
    /// Seconds a run may spend narrowing its order-dependent tests down to their polluters (`--bisect-budget`; 0:
    /// name the suspects only). Order checks themselves run whenever `retries` is on.
    public var bisectBudget: Double = 300
    /// `hooks:`: set-up and teardown commands per run, agent and slot (see `HookSettings`).
    public var hooks = HookSettings()
    /// `--repeat N`: run every selected test N times, each repetition in a process of its own, spread over the
    /// slots, agents and destinations; retries are off (each repetition is one attempt). 1: an ordinary run.
    public var repeatCount = 1
    /// `--until-failure`: stop at the first failure (at most `repetitions` repetitions).
    public var untilFailure = false
    /// `--seed S`: the run's seed, from which each unit's FANOUT_SEED derives (default: drawn for a `--repeat` run,
    /// none otherwise).
    public var seed: Int?
    /// `--shuffle SEED`: which classes share a process is dealt at random from this seed (`ShuffleDeal`), one process
    /// per slot; nil: the scheduler packs them by time.
    public var shuffle: Int?

    /// Repetitions of a flake hunt: `--repeat N`, or 100 with `--until-failure` alone.
    public var repetitions: Int { untilFailure && repeatCount == 1 ? Self.untilFailureRepetitions : repeatCount }
    public static let untilFailureRepetitions = 100
    public var isRepeating: Bool { repeatCount > 1 || untilFailure }
    /// Selective testing applies: asked for, and not a flake hunt (`--repeat` runs what it is told, every time).
    public var isSelective: Bool { selective.enabled && !isRepeating }
    /// The test targets' inputs are hashed and their verdicts recorded: under `--selective`, and under
    /// `--feedback-first` alone (everything runs, what changed first; the verdicts serve later selective runs).
    public var tracksInputs: Bool { (selective.enabled || selective.feedbackFirst) && !isRepeating }

    /// How often a unit may go back to the queue after its agent was lost (or it died before finishing any test)
    /// before its tests are reported not run.
    public var requeueBudget = 2
    /// The destination of a run without a `destinations:` list (the embedded default: "local").
    public var destination = Destination.local
    /// Several destinations at once: each its own build setting, environment, runner and agents.
    public var destinations: [DestinationSpec] = []
    /// `--destination NAME` (repeatable): run only these of the configured destinations (default: all).
    public var selectedDestinations: [String] = []
    /// Classes (regexes over `Module.Class`) that run alone on their agent, so other work does not distort their
    /// measurements: performance tests by default. Besides these, every class the history saw measure and every
    /// class whose sources call `measure` runs alone (README "Performance tests").
    public var exclusive: [String] = ["(?i)performance"]
    /// Classes (regexes over `Module.Class`) that are not performance classes whatever the history, their sources
    /// or their names say: they share their agent like any other (`not_exclusive:`).
    public var notExclusive: [String] = []
    /// Remote agents over SSH. Empty: the embedded default, `slots` local slots.
    public var agents: [SSHAgentSpec] = []
    public var ssh = SSHSettings()
    /// Run only this shard of a split across CI jobs (`--shard I/N`, `FANOUT_SHARD`, or the CI system's own variables).
    public var shard: Shard?
    /// Queue mode (`--queue`): the job takes its work from its CI build's shared queue instead of planning it all.
    public var queue: QueueJob?
    /// `queue:` in fanout.yml (its URL and timings); `--queue` and the job's identity complete it into `queue`.
    public var configuredQueue: QueueJob?

    public init() {}

    /// Every destination the config has: its `destinations:` list, else the one `destination`.
    public var configuredDestinations: [DestinationSpec] {
        destinations.isEmpty ? [DestinationSpec(destination: destination)] : destinations
    }

    /// The destinations of this run, after `--destination`.
    public func activeDestinations() throws(FanoutError) -> [DestinationSpec] {
        let all = configuredDestinations
        guard !selectedDestinations.isEmpty else { return all }
        let names = Set(all.map(\.name))
        for name in selectedDestinations where !names.contains(name) {
            throw FanoutError("unknown destination '\(name)'",
                              hint: "Configured destinations: \(all.map(\.name).joined(separator: ", ")).")
        }
        return all.filter { selectedDestinations.contains($0.name) }
    }

    /// The settings a destination builds with (its own configuration and flags, else the run's), or its own product.
    func buildSettings(for spec: DestinationSpec) -> RunSettings {
        var s = self
        s.configuration = spec.configuration ?? configuration
        s.buildFlags = spec.buildFlags ?? buildFlags
        if let bundle = spec.bundlePath { s.bundlePath = bundle }
        return s
    }

    /// The least stall window and ceiling of a test on `spec`: its own `minimum_timeout`, else 300 s on a simulator
    /// (UI tests wait on the app, a process outside the unit's group), else none.
    public func timeLimitFloor(on spec: DestinationSpec?) -> Double {
        spec?.minimumTimeout ?? (spec?.destination.device?.isSimulator == true ? DestinationSpec.simulatorMinimumTimeout : 0)
    }

    public var estimator: Estimator {
        Estimator(percentile: percentile / 100, window: historyWindow)
    }

    /// Checks values that the type system cannot.
    public func validate() throws(FanoutError) {
        guard slots >= 1 else {
            throw FanoutError("--slots must be at least 1 (got \(slots))", hint: "Use --slots N with N ≥ 1.")
        }
        var seen: Set<String> = []
        for d in destinations {
            guard seen.insert(d.name).inserted else {
                throw FanoutError("two destinations are named '\(d.name)'", hint: "Give every destination a name of its own.")
            }
            if let c = d.configuration, !["debug", "release"].contains(c) {
                throw FanoutError("destination \(d.name): unknown build configuration '\(c)'", hint: "Use debug or release.")
            }
            if d.frameworks == [.xcodebuild] {
                guard let bundle = d.bundlePath ?? bundlePath, bundle.hasSuffix(".xctestrun") else {
                    throw FanoutError("destination \(d.name) runs xcodebuild but has no .xctestrun product",
                                      hint: "Give it `bundle: path/to/App.xctestrun`, the file `xcodebuild build-for-testing` writes "
                                        + "into Build/Products (see docs/apple-platforms.md).")
                }
            } else if let bundle = d.bundlePath, bundle.hasSuffix(".xctestrun") {
                throw FanoutError("destination \(d.name) has the .xctestrun product \(bundle) but no `runner: xcodebuild`",
                                  hint: "An .xctestrun runs with xcodebuild: add `runner: xcodebuild` and a device.")
            }
        }
        _ = try activeDestinations()
        if let queue {
            if shuffle != nil {
                throw FanoutError("--shuffle does not run in queue mode: the jobs take the work in their own order",
                                  hint: "Shuffle in a run of its own, without --queue.")
            }
            if isRepeating {
                throw FanoutError("--repeat and --until-failure do not run in queue mode",
                                  hint: "Hunt flaky tests in a run of their own, without --queue.")
            }
            if shard != nil {
                throw FanoutError("--shard and --queue both say how to share the work: give one of them",
                                  hint: "In queue mode every job takes work from the queue as its slots free up; its "
                                    + "shard is only its fallback (QueueJob.fallbackShard).")
            }
            if let budget = queue.requeueBudget, budget < 0 {
                throw FanoutError("queue: requeue_budget must be 0 or more", hint: "0 queues no failed test again.")
            }
            guard queue.lease >= 3, queue.seedWait > 0, queue.expiresAfter > 0 else {
                throw FanoutError("queue: lease must be at least 3 s, seed_wait and expires_after positive",
                                  hint: "The defaults: lease 30, seed_wait 120, expires_after 86400.")
            }
        }
        _ = try ClassPatterns(exclusive, option: "exclusive")
        _ = try ClassPatterns(notExclusive, option: "not_exclusive")
        guard ["debug", "release"].contains(configuration) else {
            throw FanoutError("unknown build configuration '\(configuration)'", hint: "Use debug or release.")
        }
        let l = timeLimits
        guard [l.stall, l.ceiling, l.stallFactor, l.ceilingFactor, l.minimumStall, l.minimumCeiling].allSatisfy({ $0 > 0 && $0.isFinite }) else {
            throw FanoutError("time limits must be positive (stall \(l.stall) s, ceiling \(l.ceiling) s, factors \(l.stallFactor) and \(l.ceilingFactor))",
                              hint: "See \"Timeouts\" in README.md: --stall-timeout S and --test-timeout S, or timeout: in fanout.yml.")
        }
        _ = try ClassPatterns(classTimeLimits.map(\.pattern), option: "timeout.classes")
        guard percentile > 0, percentile <= 100 else {
            throw FanoutError("the estimate percentile must be in 1...100 (got \(percentile))")
        }
        guard retries >= 0, retries <= 10 else {
            throw FanoutError("--retries must be between 0 and 10 (got \(retries))")
        }
        guard repeatCount >= 1, repeatCount <= 10_000 else {
            throw FanoutError("--repeat must be between 1 and 10000 (got \(repeatCount))",
                              hint: "Use --repeat N to run every selected test N times.")
        }
        if let seed, seed < 0 || seed > Int(Int32.max) {
            throw FanoutError("--seed must be between 0 and \(Int32.max) (got \(seed))")
        }
        guard historyWindow >= 1 else {
            throw FanoutError("the history window must be at least 1 run (got \(historyWindow))")
        }
        _ = try ClassFilter(filters: filters, skips: skips)
        _ = try ClassPatterns(keepWhole, option: "keep_whole")
        var names: Set<String> = []
        for agent in agents {
            guard names.insert(agent.name).inserted else {
                throw FanoutError("two agents are named '\(agent.name)'", hint: "Give every agent a name of its own.")
            }
            guard agent.slots >= 1 else { throw FanoutError("agent \(agent.name): slots must be at least 1") }
            guard agent.workdir.hasPrefix("/"), !agent.workdir.split(separator: "/").contains("..") else {
                throw FanoutError("agent \(agent.name): workdir must be an absolute path without '..' (got '\(agent.workdir)')")
            }
        }
    }
}

/// Explicit time limits for the classes a pattern matches (`timeout: classes:` in fanout.yml).
public struct ClassTimeLimit: Sendable, Hashable {
    /// A regular expression over `Module.Class`.
    public var pattern: String
    public var limits: TimeLimitRules.ClassLimits

    public init(pattern: String, stall: Double? = nil, ceiling: Double? = nil) {
        self.pattern = pattern
        limits = TimeLimitRules.ClassLimits(stall: stall, ceiling: ceiling)
    }
}

/// Regular expressions over `Module.Class`.
public struct ClassPatterns: Sendable {
    private let patterns: [NSRegularExpressionBox]
    private let sources: [String]

    public init(_ patterns: [String], option: String) throws(FanoutError) {
        var compiled: [NSRegularExpressionBox] = []
        for pattern in patterns {
            do {
                compiled.append(NSRegularExpressionBox(try NSRegularExpression(pattern: pattern)))
            } catch {
                throw FanoutError("\(option) '\(pattern)' is not a valid regular expression",
                                  hint: "Patterns are regular expressions over Module.Class, e.g. --filter '^MyTests\\.Login'.")
            }
        }
        self.patterns = compiled
        sources = patterns
    }

    public var isEmpty: Bool { patterns.isEmpty }

    /// Whether any pattern matches `Module.Class`.
    public func matches(_ suite: SuiteID) -> Bool {
        let name = suite.description
        return patterns.contains { $0.matches(name) }
    }

    /// The first pattern that matches `text` (e.g. a test target's name).
    public func firstMatch(_ text: String) -> String? {
        patterns.indices.first { patterns[$0].matches(text) }.map { sources[$0] }
    }
}

/// `--filter` / `--skip`: a class runs when it matches any filter (or there is none) and no skip.
public struct ClassFilter: Sendable {
    private let filters: ClassPatterns
    private let skips: ClassPatterns

    public init(filters: [String], skips: [String]) throws(FanoutError) {
        self.filters = try ClassPatterns(filters, option: "--filter")
        self.skips = try ClassPatterns(skips, option: "--skip")
    }

    public func accepts(_ suite: SuiteID) -> Bool {
        (filters.isEmpty || filters.matches(suite)) && !skips.matches(suite)
    }
}

/// NSRegularExpression is immutable and thread-safe, but not marked Sendable.
struct NSRegularExpressionBox: @unchecked Sendable {
    let regex: NSRegularExpression

    init(_ regex: NSRegularExpression) { self.regex = regex }

    func matches(_ s: String) -> Bool {
        regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil
    }
}

/// One destination of a run: where and how its tests run.
public struct DestinationSpec: Sendable, Hashable {
    /// Name, environment and launch arguments passed to the tests.
    public var destination: Destination
    /// Build configuration and extra `swift build` flags (nil: the run's). Each distinct pair is built once.
    public var configuration: String?
    public var buildFlags: [String]?
    /// The frameworks it runs (default: both found in the product).
    public var frameworks: [Framework]
    /// Agent tags it requires: only agents with all of them (or that name this destination) run it.
    public var tags: [String]

    /// A built product of its own (an xcodebuild destination's `.xctestrun`), instead of the run's.
    public var bundlePath: String?
    /// The listing of its tests (`xcodebuild -enumerate-tests … -test-enumeration-format json`), made beside the
    /// build: a coordinator that is not a Mac cannot list an `.xctestrun` itself.
    public var testsList: String?
    /// The least stall window and ceiling of its tests (nil: none; 300 s for a simulator, whose UI tests wait on
    /// the app, a process outside the unit's group, so the unit may show no CPU time while the app works).
    public var minimumTimeout: Double?

    public init(destination: Destination, configuration: String? = nil, buildFlags: [String]? = nil,
                frameworks: [Framework] = Framework.swiftPM, tags: [String] = [], bundlePath: String? = nil,
                testsList: String? = nil, minimumTimeout: Double? = nil) {
        self.destination = destination
        self.configuration = configuration
        self.buildFlags = buildFlags
        self.frameworks = frameworks
        self.tags = tags
        self.bundlePath = bundlePath
        self.testsList = testsList
        self.minimumTimeout = minimumTimeout
    }

    /// Units of UI tests on a simulator start the app and wait on the UI: their floor is higher.
    public static let simulatorMinimumTimeout = 300.0

    public var name: String { destination.name }
}
