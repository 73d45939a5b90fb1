import ArgumentParser
import FanoutCoordinator
import FanoutCore
import Foundation

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
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

    @Option(help: ArgumentHelp("With --retries: seconds the run may spend finding the polluter(s) of a test found "
        + "order-dependent (0: name the tests that ran before it only).", valueName: "S"))
    var bisectBudget: Double?

    @Option(help: ArgumentHelp("Deal classes to processes at random from this seed (bare --shuffle: a random seed, printed), "
        + "one process per slot, to find tests that depend on the tests before them; with --repeat N each repetition "
        + "gets its own deal.", valueName: "SEED"))
    var shuffle: String?

    @Flag(help: "Leave the run's folder on the agents (for debugging); processes are still stopped.")
    var keepRemote = false

    @Flag(help: "Colour in the summary (default: when stdout is a terminal and NO_COLOR is unset).")
    var color = false

    @Flag(help: "After the summary, where the run's time went, phase by phase (start-up, build, discover, plan, agents, tests, record, reports, ...; report.json always has them).")
    var timings = false

    @Option(help: ArgumentHelp("Run only shard I of N, for N CI jobs that split the work (every job computes the same split "
        + "from the same history). Default: $FANOUT_SHARD, or GitLab's CI_NODE_INDEX/CI_NODE_TOTAL, or Buildkite's "
        + "BUILDKITE_PARALLEL_JOB/_COUNT. With --queue: the static shard this job falls back to when the queue "
        + "cannot be reached at the start.", valueName: "I/N"))
    var shard: String?

    @Option(help: ArgumentHelp("Queue mode: take work from the shared queue of this CI build on a PostgreSQL server, as "
        + "slots free up (the password from PGPASSWORD or PGPASSFILE, never in the URL). Default: `queue:` in fanout.yml.",
        valueName: "postgres://USER@HOST:PORT/DATABASE"))
    var queue: String?

    @Option(help: ArgumentHelp("Queue mode: the build's id, the same for every job of it (default: $FANOUT_BUILD_ID, or "
        + "the CI's own: GitHub's run, GitLab's pipeline, Buildkite's build, CircleCI's workflow, Jenkins' BUILD_TAG).",
        valueName: "id"))
    var buildId: String?

    @Option(help: ArgumentHelp("Queue mode: this job's name within the build, kept when the CI retries it (default: "
        + "$FANOUT_WORKER, or GitLab's CI_NODE_INDEX, Buildkite's BUILDKITE_PARALLEL_JOB, CircleCI's CIRCLE_NODE_INDEX).",
        valueName: "name"))
    var worker: String?

    @Flag(help: ArgumentHelp("Queue mode: when this job ran before in the build (a CI retry of it), re-run only the "
        + "items it failed, not all it ran the first time."))
    var retryFailures = false

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
        if let bisectBudget {
            guard bisectBudget >= 0 else {
                throw FanoutError("--bisect-budget must be 0 or more seconds (got \(bisectBudget))",
                                  hint: "0 names the suspects of an order-dependent test without narrowing them down.")
            }
            settings.bisectBudget = bisectBudget
        }
        if let shuffle {
            if shuffle == Self.randomShuffle {
                settings.shuffle = Int.random(in: 1...999_999)
            } else if let value = Int(shuffle), value >= 0 {
                settings.shuffle = value
            } else {
                throw FanoutError("--shuffle takes a seed, a whole number of 0 or more (got \(shuffle))",
                                  hint: "--shuffle 42 replays the deal of seed 42; a bare --shuffle draws one and prints it.")
            }
        }
        if failOnPerfRegression { settings.failOnPerfRegression = true }
        if let baselines { settings.baselinesPath = baselines }
        let environment = ProcessInfo.processInfo.environment
        settings.queue = try QueueJob.resolve(url: queue, buildID: buildId, worker: worker, environment: environment,
                                              configured: settings.configuredQueue)
        if settings.configuredQueue != nil, settings.queue == nil {
            Terminal.err("fanout: fanout.yml names a queue, and no build id is known here (no --build-id, FANOUT_BUILD_ID "
                + "or CI build): an ordinary run, not queue mode")
        }
        // In queue mode the shard (--shard, FANOUT_SHARD or the CI's parallel-job variables) is the job's fallback:
        // what it runs, as a static shard, when the queue cannot be reached at the start.
        let shard = try ShardSelection.resolve(flag: shard, environment: environment)
        if settings.queue != nil {
            settings.queue?.fallbackShard = shard
            if retryFailures { settings.queue?.retryFailures = true }
        } else {
            settings.shard = shard
            if retryFailures {
                throw FanoutError("--retry-failures is for queue mode (a CI retry of a job re-runs its failed items)",
                                  hint: "Add --queue, or leave --retry-failures out.")
            }
        }
        try settings.validate()
        let code = await RunCommandDriver(settings: settings, forceColor: color, timings: timings).run()
        throw ExitCode(code)
    }
}

extension RunCommand {
    /// What a bare `--shuffle` (no seed after it) stands for: draw one.
    static let randomShuffle = "random"

    /// `--shuffle` takes an optional seed, which ArgumentParser options cannot: a `--shuffle` that ends the command
    /// line or is followed by another flag becomes `--shuffle=random`. Nothing after a `--` is touched.
    static func bareShuffle(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--" {
                out.append(argument)
                out += rest
                break
            }
            if argument == "--shuffle", rest.first.map({ $0.hasPrefix("-") && Int($0) == nil }) ?? true {
                out.append("--shuffle=\(randomShuffle)")
            } else {
                out.append(argument)
            }
        }
        return out
    }
}
