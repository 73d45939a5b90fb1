import ArgumentParser
import FanoutCoordinator
import FanoutCore
import FanoutReports
import Foundation

struct Fanout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Run a Swift test suite in parallel, planned by timing history, and merge one report.",
        discussion: """
        Exit codes: 0 all passed; 1 test failures; 2 usage, config or build error, or a shard with nothing to run; \
        3 infrastructure error (some tests could not be run; for `report merge`, a shard missing or twice); \
        130/143 interrupted.
        """,
        version: Coordinator.version,
        subcommands: [Run.self, PlanCommand.self, List.self, HistoryCommand.self, AgentsCommand.self, BaselineCommand.self,
                      QuarantineCommand.self, ReportCommand.self, InitCommand.self],
        defaultSubcommand: Run.self)
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Build, discover, plan, run on every slot, and write report.json, junit.xml and a summary.")

    @OptionGroup var common: CommonOptions

    @Option(help: "The report folder (default: .fanout/reports/<run-id>).")
    var reportDir: String?

    @Option(help: ArgumentHelp("A test with no history is hung after this many seconds with no output and no CPU time "
        + "(default 300); with history, 5 × its p95 (at least 10 s).", valueName: "seconds"))
    var stallTimeout: Double?

    @Option(help: ArgumentHelp("A test with no history is stopped after running this long even while busy (default 1800); "
        + "with history, 10 × its p95 (at least 120 s).", valueName: "seconds"))
    var testTimeout: Double?

    @Option(help: .hidden) var timeoutFactor: Double?
    @Option(help: .hidden) var minTimeout: Double?

    @Flag(help: "Do not record this run in the timing history.")
    var noRecord = false

    @Flag(help: "Start computing work even when its machine's cores are all busy (CPU-aware packing off).")
    var noCpuPacking = false

    @Flag(help: "A performance regression against an accepted baseline fails the run (exit 1).")
    var failOnPerfRegression = false

    @Option(help: "The baselines file (default: fanout-baselines.json).")
    var baselines: String?

    @Option(help: "Re-run failed tests up to N times, preferring another agent; fail-then-pass is reported flaky.")
    var retries: Int?

    @Option(name: .customLong("repeat"), help: ArgumentHelp("Flake hunting: run every selected test N times, each "
        + "repetition in a process of its own, spread over slots, agents and destinations; reports each test's pass "
        + "rate with its interval. Retries are off.", valueName: "N"))
    var repeatCount: Int?

    @Flag(help: "Flake hunting: repeat (up to --repeat N, default 100) and stop at the first failure; says which repetition, agent and seed.")
    var untilFailure = false

    @Option(help: ArgumentHelp("The run's seed: each test process gets FANOUT_SEED derived from it, its repetition and retry (drawn at random for --repeat).",
                               valueName: "S"))
    var seed: Int?

    @Flag(help: "Leave the run's folder on the agents (for debugging); processes are still stopped.")
    var keepRemote = false

    @Flag(help: "Colour in the summary (default: when stdout is a terminal and NO_COLOR is unset).")
    var color = false

    @Option(help: ArgumentHelp("Run only shard I of N, for N CI jobs that split the work (every job computes the same split "
        + "from the same history). Default: $FANOUT_SHARD, or GitLab's CI_NODE_INDEX/CI_NODE_TOTAL, or Buildkite's "
        + "BUILDKITE_PARALLEL_JOB/_COUNT.", valueName: "I/N"))
    var shard: String?

    mutating func run() async throws {
        var settings = try common.settings()
        if let reportDir { settings.reportDirectory = reportDir }
        if timeoutFactor != nil || minTimeout != nil {
            throw FanoutError("--\(timeoutFactor != nil ? "timeout-factor" : "min-timeout") is gone: Fanout no longer kills a unit at a multiple of its estimate",
                              hint: "A test is stopped only when it makes no progress (no output, no CPU) for --stall-timeout seconds, "
                                + "or runs past --test-timeout (see README.md, \"Timeouts\").")
        }
        if let stallTimeout { settings.timeLimits.stall = stallTimeout }
        if let testTimeout { settings.timeLimits.ceiling = testTimeout }
        if noRecord { settings.recordHistory = false }
        if noCpuPacking { settings.cpuPacking = false }
        if keepRemote { settings.ssh.keepRemote = true }
        if let retries { settings.retries = retries }
        if let repeatCount { settings.repeatCount = repeatCount }
        if untilFailure { settings.untilFailure = true }
        if let seed { settings.seed = seed }
        if failOnPerfRegression { settings.failOnPerfRegression = true }
        if let baselines { settings.baselinesPath = baselines }
        settings.shard = try ShardSelection.resolve(flag: shard, environment: ProcessInfo.processInfo.environment)
        try settings.validate()
        let code = await RunCommandDriver(settings: settings, forceColor: color).run()
        throw ExitCode(code)
    }
}

struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Dry run: show the assignment of units to slots, each estimate and its source, the predicted makespan and the lower bound.")

    @OptionGroup var common: CommonOptions

    @Option(help: "Preview how the work splits into N shards for N CI jobs (`fanout run --shard I/N` in each).")
    var shards: Int?

    mutating func run() async throws {
        var settings = try common.settings()
        if let shards {
            guard shards >= 1 else { throw FanoutError("--shards must be at least 1 (got \(shards))", hint: "Use --shards N with N ≥ 1.") }
            settings.shard = Shard(index: 1, count: shards)
        }
        let prepared = try await Coordinator(settings: settings, progress: Terminal.plainProgress).prepare()
        for w in prepared.warnings { Terminal.err("warning: \(w)") }
        if let table = InspectionTables.shardTable(prepared) {
            print(table.rendered())
            return
        }
        print(InspectionTables.planTables(prepared).map { $0.rendered() }.joined(separator: "\n\n"))
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the test classes found, with their estimates.")

    @OptionGroup var common: CommonOptions

    @Flag(help: "Also list every test method.")
    var tests = false

    mutating func run() async throws {
        let settings = try common.settings()
        let prepared = try await Coordinator(settings: settings, progress: Terminal.plainProgress).prepare()
        print(InspectionTables.listTable(prepared, showTests: tests).rendered())
    }
}

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Look at the timing history, or carry it between CI jobs.",
        subcommands: [Show.self, Flaky.self, Export.self, Import.self])

    struct Flaky: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Tests by flake score over recent runs.",
            discussion: """
                A test's score is its failures per attempt on the builds it also passed on: a fail then a pass \
                within a run (--retries), or two runs of one build (by the SHA-256 of its test binary) with \
                different verdicts. Failures on a build it never passed on are a break, not a flake, and are left \
                out. The interval is Wilson's (95 %): how much the evidence is worth.
                """)

        @Option(help: "The timing history database.")
        var history = ".fanout/history.sqlite"

        @Option(help: "How many recent runs to look at.")
        var runs = 20

        @Flag(help: "Write quarantine entries for the tests over --threshold, and release muted tests that passed cleanly in their last --release-after runs.")
        var propose = false

        @Flag(help: "With --propose: print what it would change, write nothing.")
        var dryRun = false

        @Option(help: "With --propose: the least flake rate (failures per attempt, 0-1) that proposes a test.")
        var threshold = 0.05

        @Option(help: "With --propose: the least counted failures that propose a test.")
        var minFailures = 2

        @Option(help: "With --propose: the mode of proposed entries (mute or skip).")
        var mode: String = QuarantineMode.mute.rawValue

        @Option(help: "With --propose: days a proposed entry applies.")
        var days = 30

        @Option(help: "With --propose: clean passing runs after which a muted test is released.")
        var releaseAfter = 10

        @OptionGroup var location: QuarantineCommand.Location

        mutating func run() async throws {
            guard propose else {
                print(try InspectionTables.flakyTable(path: history, runs: runs).rendered())
                return
            }
            guard let mode = QuarantineMode(rawValue: mode) else { throw FanoutError("--mode must be mute or skip (got '\(mode)')") }
            guard threshold >= 0, threshold <= 1 else { throw FanoutError("--threshold must be from 0 to 1 (got \(threshold))") }
            guard minFailures >= 1, releaseAfter >= 1, days >= 0, runs >= 1 else {
                throw FanoutError("--min-failures, --release-after and --runs must be at least 1, --days at least 0")
            }
            let (settings, path) = try location.resolve()
            var proposal = QuarantineProposal()
            proposal.threshold = threshold
            proposal.minimumFailures = minFailures
            proposal.mode = mode
            proposal.days = days
            proposal.releaseAfter = releaseAfter
            proposal.runs = runs
            let result = try proposal.apply(historyPath: history, quarantinePath: path, settings: settings,
                                            today: QuarantineFile.day(), dryRun: dryRun)
            let verb = dryRun ? "would " : ""
            for e in result.added { print("\(verb)quarantine \(e.label) (\(e.mode.rawValue) until \(e.expires)): \(e.reason)") }
            for e in result.released {
                print("\(verb)release \(e.label): it passed cleanly in each of its last \(releaseAfter) runs")
            }
            for t in result.alreadyQuarantined { print("already quarantined: \(t)") }
            if result.added.isEmpty, result.released.isEmpty {
                print("nothing to propose: no test over \(String(format1: threshold * 100))% flake rate with "
                    + "\(minFailures)+ failures in the last \(runs) runs, and no muted test with \(releaseAfter) clean runs")
            } else if !dryRun {
                print("wrote \(path): review the change and commit it")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Recent runs and per-class timing statistics.")

        @Option(help: "The timing history database.")
        var history = ".fanout/history.sqlite"

        @Option(help: "Only this destination's classes.")
        var destination: String?

        @Option(help: "How many rows per table.")
        var limit = 20

        mutating func run() async throws {
            print(try InspectionTables.historyTables(path: history, destination: destination, limit: limit)
                .map { $0.rendered() }.joined(separator: "\n\n"))
        }
    }
}

extension HistoryCommand {
    /// `--config` and `--history` of export and import: the history file a `fanout run` here would use.
    struct Location: ParsableArguments {
        @Option(help: "The config file (default: ./fanout.yml when it exists); its `history:` is the default history.")
        var config: String?

        @Option(help: "The timing history database (default: the config's `history:`, else .fanout/history.sqlite).")
        var history: String?

        func settings() throws -> (RunSettings, historyPath: String) {
            let settings = try CommonOptions.fileSettings(config: config)
            return (settings, history ?? settings.historyPath)
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the timing history to a portable file (versioned JSON) to cache as a CI artifact.",
            discussion: """
            The file holds every run the history keeps (class and test times, outcomes, attempts, measurements) and \
            is read back by `fanout history import`, also by later Fanout versions. It is written to a temporary \
            file and renamed, so a reader never sees half of it. Format: docs/history-format.md. \
            Exit codes: 0 written · 2 no history, or the file cannot be written · 3 the history cannot be read.
            """)

        @OptionGroup var location: Location

        @Option(help: "The file to write.")
        var out: String

        @Option(help: "Only the newest N runs (default: all the history keeps).")
        var runs: Int?

        mutating func run() async throws {
            let historyPath = try location.settings().historyPath
            let count = try HistoryTransfer.export(historyPath: historyPath, to: out, runs: runs)
            print("exported \(count) run\(count == 1 ? "" : "s") to \(out)")
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Merge history exports (e.g. of N shard jobs), or seed timings from JUnit XML, into the history.",
            discussion: """
            A run the history already has (same run id) is skipped, so importing a file twice, or exports that share \
            runs, adds each run once; the history keeps its newest 200 runs. With --junit, each JUnit file \
            (`swift test --parallel --xunit-output FILE`, another tool's report, or Fanout's junit.xml) becomes one \
            run whose test and class times plan the next `fanout run`. All files are checked first and the import \
            is one transaction: on any error the history is unchanged. \
            Exit codes: 0 imported · 2 a file is missing, not an export (or not JUnit), truncated or of a newer \
            format · 3 the history cannot be written.
            """)

        @OptionGroup var location: Location

        @Flag(help: "The files are JUnit XML reports, not history exports.")
        var junit = false

        @Option(help: ArgumentHelp("With --junit: the destination the times belong to (default: the suite's "
            + "`destination` property in Fanout's junit.xml, else the destination `fanout run` uses: `local`, or the "
            + "config's only one)."))
        var destination: String?

        @Argument(help: "Files written by `fanout history export` (or JUnit XML files with --junit).")
        var files: [String] = []

        mutating func run() async throws {
            let (settings, historyPath) = try location.settings()
            let result: HistoryTransfer.ImportResult
            if junit {
                if let destination { try HistoryTransfer.checkDestination(destination, settings) }
                let fallback = try destination ?? HistoryTransfer.defaultDestination(settings)
                result = try HistoryTransfer.importJUnit(files, historyPath: historyPath, destination: destination,
                                                         defaultDestination: fallback)
            } else {
                guard destination == nil else {
                    throw FanoutError("--destination applies to --junit only",
                                      hint: "History exports carry the destination of every run.")
                }
                result = try HistoryTransfer.importExports(files, historyPath: historyPath)
            }
            for warning in result.warnings { Terminal.err("warning: \(warning)") }
            print(result.summary.description + " into \(historyPath)")
        }
    }
}

struct AgentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agents", abstract: "Work with the SSH agents of the config.", subcommands: [Check.self])

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every agent in parallel: its route (ssh config alias, bastions) with where each value came from, reachable, host key, auth, Swift toolchain, free disk, slots. Exit 3 if any is unusable.")

        @Option(help: "The config file with the agents (default: ./fanout.yml).")
        var config: String?

        @Option(help: "Also measure dispatch latency over this many commands per agent.")
        var latency = 0

        mutating func run() async throws {
            let settings = try CommonOptions.fileSettings(config: config)
            try settings.validate()
            guard !settings.agents.isEmpty else {
                throw FanoutError("no agents in the config", hint: "List them under `agents:` (see config/fanout.example.yml).")
            }
            let (table, rows) = await AgentsCheck.run(settings: settings, latencyRuns: latency)
            print(table.rendered())
            for row in rows where !row.route.isEmpty {
                print(TextSanitizer.terminalSafe("\n\(row.agent) " + row.route.joined(separator: "\n")))
            }
            for row in rows where row.problem != nil {
                print(TextSanitizer.terminalSafe("\n\(row.agent) (\(row.address)): \(row.problem ?? "")"))
            }
            if rows.contains(where: { !$0.usable }) { throw ExitCode(RunExitCode.infrastructure.rawValue) }
        }
    }
}
