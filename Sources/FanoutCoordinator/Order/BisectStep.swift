import FanoutAgents
import FanoutCore
import FanoutHistory
import FanoutReports
import FanoutRunners
import Foundation

/// `fanout bisect TEST`: replays a failing test after the tests that preceded it in its process (from the timing
/// history's run, or a report.json), on this machine, with the destination's environment, and narrows them down to
/// the polluter(s) (`Bisection`). Every step is a fresh process of the current product; a product that differs from
/// the run's is refused (`allowChangedProduct` turns that into a warning).
public struct BisectStep: Sendable {
    public struct Options: Sendable {
        public var test: String
        /// A run id of the timing history; nil with `reportPath` nil: the newest run in which the test failed.
        public var run: String?
        public var reportPath: String?
        public var destination: String?
        public var repeats = 2
        public var maxPolluters = 3
        /// Seconds for the whole search.
        public var budget: Double = 1800
        public var allowChangedProduct = false

        public init(test: String) { self.test = test }
    }

    public let settings: RunSettings
    public let options: Options
    let progress: ProgressHandler

    public init(settings: RunSettings, options: Options, progress: @escaping ProgressHandler) {
        self.settings = settings
        self.options = options
        self.progress = progress
    }

    public func run() async throws(FanoutError) -> BisectReport {
        guard options.repeats >= 1, options.maxPolluters >= 1, options.budget > 0 else {
            throw FanoutError("--repeats, --max-polluters and --budget must be positive",
                              hint: "The defaults: --repeats 2 --max-polluters 3 --budget 1800.")
        }
        let (runID, productHash, order) = try loadOrder()
        let replay: Replay
        do {
            replay = try order.replay(of: options.test, destination: options.destination, run: runID)
        } catch {
            throw FanoutError(error.message, hint: error.hint)
        }
        guard replay.framework != .xcodebuild else {
            throw FanoutError("\(replay.test) ran with xcodebuild on \(replay.destination): fanout bisect replays XCTest and "
                                + "Swift Testing products on this machine, not on a simulator or a Mac yet",
                              hint: "Bisect by hand with xcodebuild's -only-testing, the tests before it from report.json (its attempts' unit and position).")
        }
        guard let spec = try settings.activeDestinations().first(where: { $0.name == replay.destination }) else {
            throw FanoutError("the test failed on destination \(replay.destination), which this config does not define",
                              hint: "Run bisect with the config of that run (--config).")
        }
        let product = try await ProductBuilder(settings: settings.buildSettings(for: spec)).product(progress: progress)
        var warnings: [String] = []
        if let productHash, let now = await ProductDigest.sha256(of: product), now != productHash {
            let text = "the test product changed since run \(runID) (sha256 \(now.prefix(12)) now, \(productHash.prefix(12)) then)"
            guard options.allowChangedProduct else {
                throw FanoutError(text + ": the replay would not be the run's",
                                  hint: "Build the commit of that run, or pass --allow-changed-product to replay anyway.")
            }
            warnings.append(text + ": replayed anyway (--allow-changed-product)")
            progress(.phase("warning: " + warnings[warnings.count - 1]))
        }
        let search = Bisection(repeats: options.repeats, maxPolluters: options.maxPolluters)
        let bound = search.bound(predecessors: replay.predecessors.count)
        progress(.phase("bisect \(replay.test) on \(replay.destination): it \(replay.outcome.rawValue) in unit \(replay.unit) "
            + "of run \(runID) after \(replay.predecessors.count) tests; at most \(bound) processes "
            + "(\(Bisection.steps(predecessors: replay.predecessors.count, polluters: 1)) steps for one polluter, "
            + "a pass believed after \(options.repeats) runs), within \(formatSeconds(options.budget))"))
        if replay.concurrent {
            let note = "its process ran tests at the same time (Swift Testing): \"before\" is the order they started, and the replay may interleave differently"
            warnings.append(note)
            progress(.phase("note: " + note))
        }

        let fleet = AgentFleet.thisMachine(slots: 1)
        guard let transport = fleet.transports.first else {
            throw FanoutError("no local slot to replay on", exitCode: .infrastructure)
        }
        let binary: String
        do {
            binary = try await transport.prepare(product: product, runID: "bisect")
        } catch {
            throw FanoutError("cannot prepare the test product: \(error)", exitCode: .infrastructure)
        }
        // The failing process's FANOUT_SEED: a test that draws from it fails (or not) as it did.
        var destination = spec.destination
        // Every step is worker 0 of a one-slot run: templated `environment:` values name worker 0's resources (the
        // hooks of a run are not run here: set up what worker 0 uses first, e.g. its database).
        destination.environment = WorkerIdentity(runID: "bisect", workers: 1, agent: transport.name, slot: 0, worker: 0,
                                                 destination: spec.name).environment(configured: destination.environment)
        if let seed = replay.seed { destination.environment["FANOUT_SEED"] = String(seed) }
        // A step should take what the predecessors and the test took in the run; one that runs far past that (a
        // hang, a slow machine) is stopped: 4 × that, at least a minute, at most what is left of the budget.
        let stepLimit = max(60, 4 * replay.seconds)
        let replayer = Replayer(replay: replay, binary: binary, destination: destination, transport: transport,
                                stepLimit: stepLimit)
        let deadline = ContinuousClock.now + .seconds(options.budget)
        let steps = StepCounter()
        let progress = progress
        let result = await search.run(predecessors: replay.predecessors, inBudget: { ContinuousClock.now < deadline }) { before in
            let verdict = await replayer.check(before: before, deadline: deadline)
            let n = steps.next()
            progress(.phase("  run \(n): after \(before.count) test\(before.count == 1 ? "" : "s"): \(verdict.text)"))
            return verdict.verdict
        }
        await fleet.shutdown()
        let command = (try? replayer.command(before: result.polluters).shellLine()) ?? ""
        return BisectReport(runID: runID, test: replay.test, destination: replay.destination, unit: replay.unit,
                            outcome: replay.outcome, failure: replay.failure, predecessors: replay.predecessors.count,
                            concurrent: replay.concurrent, result: result, replayCommand: command, warnings: warnings)
    }

    /// The run's order data: from `--report`, from `--run` in the history, or the newest recorded run in which the
    /// test failed.
    private func loadOrder() throws(FanoutError) -> (String, String?, ProcessOrder) {
        if let path = options.reportPath {
            let report: RunReport
            do {
                report = try JSONReportReader().read(from: URL(fileURLWithPath: path))
            } catch {
                throw FanoutError(unreadableReport: error)
            }
            return (report.runID, report.product.sha256, ProcessOrder(report: report))
        }
        guard FileManager.default.fileExists(atPath: settings.historyPath) else {
            throw FanoutError("no timing history at \(settings.historyPath)",
                              hint: "Give the run's report with --report PATH/report.json, or point --history at the history.")
        }
        do {
            let (store, _) = try HistoryStore.open(at: settings.historyPath)
            if let id = options.run {
                guard let run = try store.run(id: id) else {
                    let recent = try store.recentRuns(limit: 3).map(\.runID)
                    throw FanoutError("the history has no run \(id)",
                                      hint: recent.isEmpty ? "The history is empty: run `fanout run` first."
                                          : "Recent runs: \(recent.joined(separator: ", ")) (`fanout history show`).")
                }
                return (run.runID, run.product, Self.order(of: run))
            }
            for summary in try store.recentRuns(limit: 20) {
                guard let run = try store.run(id: summary.runID) else { continue }
                let order = Self.order(of: run)
                if order.tests(named: options.test).contains(where: { id in
                    order.entries.contains { $0.test == id && $0.outcome.isFailure }
                }) {
                    return (run.runID, run.product, order)
                }
            }
            throw FanoutError("none of the 20 newest runs in the history has a failure of \(options.test)",
                              hint: "Name the run with --run ID, or give its report with --report PATH.")
        } catch let error as FanoutError {
            throw error
        } catch {
            throw FanoutError("cannot read the timing history at \(settings.historyPath): \(error)", exitCode: .infrastructure)
        }
    }

    static func order(of run: HistoryRun) -> ProcessOrder {
        var entries: [ProcessOrder.Entry] = []
        for test in run.tests {
            for attempt in test.attempts where attempt.replayOf == nil {
                entries.append(.init(test: test.id, framework: test.framework, destination: test.destination,
                                     unit: attempt.unit, position: attempt.position, outcome: attempt.outcome,
                                     failure: attempt.failure, duration: attempt.duration))
            }
        }
        return ProcessOrder(entries: entries, concurrentUnits: Set(run.units.filter { $0.concurrent == true }.map(\.id)))
    }
}

/// Counts the processes of a search (its closure is `@Sendable`).
private final class StepCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func next() -> Int { lock.withLock { count += 1; return count } }
}

/// Runs the replayed test after some of its predecessors in a fresh process, and judges it against the run.
struct Replayer: Sendable {
    let replay: Replay
    let binary: String
    let destination: Destination
    let transport: any Transport
    /// Seconds one step may take at most.
    var stepLimit: Double = .infinity

    /// One unit: the predecessors then the test, grouped by class in their order (XCTest runs them in binary order,
    /// which is the order they had: a subset of one process keeps its order).
    func unit(before: [TestID]) -> WorkUnit {
        WorkUnit(id: 1, items: WorkItem.replaying(before + [replay.test], framework: replay.framework,
                                                  destination: replay.destination))
    }

    func command(before: [TestID]) throws -> Command {
        try Runners.runner(for: replay.framework).command(for: unit(before: before), binary: binary, destination: destination)
    }

    func check(before: [TestID], deadline: ContinuousClock.Instant) async -> (verdict: Bisection.Answer, text: String) {
        let unit = unit(before: before)
        let runner = Runners.runner(for: replay.framework)
        let command: Command
        do {
            command = try runner.command(for: unit, binary: binary, destination: destination)
        } catch {
            return (.other("the replay could not be started: \(error)"), "could not start")
        }
        let left = min(stepLimit, max(1, (deadline - ContinuousClock.now) / .seconds(1)))
        var parser = runner.makeParser(for: unit)
        var collector = UnitCollector(unit: unit, agent: transport.name)
        var ending = UnitEnding.cancelled
        var stderr: [UInt8] = []
        for await event in transport.run(command, timeout: left) {
            switch event {
            case .output(.stdout, let bytes): collector.consume(parser.consume(stdout: bytes))
            case .output(.stderr, let bytes):
                stderr += bytes.suffix(4096)
                collector.consume(parser.consume(stderr: bytes))
            case .ended(let e): ending = e
            default: break
            }
        }
        collector.consume(parser.finish())
        let result = collector.finish(ending, diagnostics: String(decoding: stderr.suffix(4096), as: UTF8.self))
        guard let attempt = result.attempts[replay.test] else {
            return (.other("the test did not run in the replay (\(ending)): \(result.problem ?? "its process ended before it")"),
                    "did not run (\(ending))")
        }
        switch attempt.outcome {
        case .passed, .flaky:
            return (.passes, "passes")
        case replay.outcome:
            return (.fails, attempt.outcome.rawValue)
        case .failed, .crashed, .timedOut:
            return (.other("the test \(attempt.outcome.rawValue) in the replay where it \(replay.outcome.rawValue) in the run: "
                + "another reason (\(attempt.issues.first(where: \.isFailure)?.message ?? "no message"))"), attempt.outcome.rawValue)
        case .skipped, .notRun:
            return (.other("the test was \(attempt.outcome.rawValue) in the replay"), attempt.outcome.rawValue)
        }
    }
}

/// What `fanout bisect` found, for the console and as JSON.
public struct BisectReport: Sendable, Codable {
    public var runID: String
    public var test: TestID
    public var destination: String
    public var unit: Int
    public var outcome: Outcome
    public var failure: String?
    /// Tests that preceded it in its process.
    public var predecessors: Int
    public var concurrent: Bool
    public var result: Bisection.Finding
    /// Runs the test after its polluters (or after nothing when none was named): the failure, reproduced by hand.
    public var replayCommand: String
    public var warnings: [String]

    /// Exit code: 0 polluters named; 1 none named (not reproduced, fails alone, inconclusive, budget spent);
    /// 3 a step stopped for another reason.
    public var exitCode: RunExitCode {
        switch result.conclusion {
        case .found: .success
        case .stopped: .infrastructure
        case .notReproduced, .failsAlone, .inconclusive, .outOfBudget: .testFailures
        }
    }

    /// The summary a person reads.
    public var text: String {
        var lines: [String] = []
        switch result.conclusion {
        case .found:
            lines.append("\(test) is order-dependent: it fails after \(result.polluters.count == 1 ? "this polluter" : "these polluters, together"):")
            lines += result.polluters.map { "  \($0)" }
        case .notReproduced, .failsAlone, .stopped, .outOfBudget, .inconclusive:
            lines.append("\(test): no polluter named (\(result.conclusion.rawValue)): \(result.message)")
            if !result.polluters.isEmpty {
                lines.append("  suspects so far: " + result.polluters.map(\.description).joined(separator: ", "))
            }
        }
        lines.append("\(result.steps.count) steps, \(result.runs) processes (bound \(result.bound)); "
            + "\(predecessors) tests preceded it in unit \(unit) of run \(runID) on \(destination)")
        for step in result.steps {
            lines.append("  step \(step.number) \(step.purpose): \(step.result) (\(step.runs) run\(step.runs == 1 ? "" : "s"))")
        }
        if !replayCommand.isEmpty { lines.append("replay: \(replayCommand)") }
        lines += warnings.map { "warning: \($0)" }
        return lines.joined(separator: "\n")
    }
}
