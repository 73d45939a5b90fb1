import ArgumentParser
import Foundation

/// `fanout-bench`: the benchmarks behind BENCHMARKS.md (not tests). `scripts/bench.sh --full` runs them all.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout-bench",
        abstract: "Benchmarks of Fanout: generated suites against the alternatives, simulation at scale, a 32-agent fleet.",
        subcommands: [Generate.self, RunSuite.self, Shards.self, Simulate.self, FleetScale.self, MergeScale.self,
                      ReportPage.self, BenchReport.self, RealSuites.self, RepeatBench.self,
                      SelectiveBench.self, SelectiveMutations.self, PerformanceSuites.self, QueueScale.self, QueueJobsBench.self])
}

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a seeded Swift package whose XCTest methods wait (or compute) for fixed times.")

    @OptionGroup var suiteShape: SuiteShapeOption
    @Option(help: "The seed: the same seed writes the same suite.")
    var seed: UInt64 = 1
    @Option(help: "The package folder to write (created).")
    var out: String

    func run() throws {
        let shape = suiteShape.shape
        let suite = SuiteGenerator.make(shape: shape, seed: seed)
        try SuiteGenerator.write(suite, to: URL(fileURLWithPath: out))
        print("\(shape.rawValue) (seed \(seed)): \(suite.classes.count) classes, \(suite.methodCount) methods; "
              + "expected serial total \(String(format: "%.2f", suite.serialTotal)) s"
              + (shape == .mixed ? " (\(String(format: "%.2f", suite.computingTotal)) s computing)" : "") + "; longest class "
              + "\(String(format: "%.2f", suite.longestClass)) s, longest method \(String(format: "%.3f", suite.longestMethod)) s")
    }
}

extension SuiteShape: ExpressibleByArgument {
    /// Every shape, with what it is (`--shape` and its other name `--kind`).
    static var help: ArgumentHelp {
        ArgumentHelp("The kind of suite (each is described below).",
                     discussion: allCases.map { "\($0.rawValue): \($0.summary)." }.joined(separator: "\n"))
    }
}

struct RunSuite: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suite",
        abstract: "Generate and build a suite, then run it for real under every strategy, locally and on an SSH fleet.")

    @OptionGroup var suiteShape: SuiteShapeOption
    @OptionGroup var suiteSeed: SuiteSeedOption
    @OptionGroup var common: CommonBenchOptions
    @Option(help: "Local slots (and shards of the static strategies).")
    var slots = 8
    @Option(help: "Fanout runs that warm the timing history before the measured runs.")
    var warmRuns = 2
    @Option(help: "SSH agents of the fleet (0: local only; the fleet needs root).")
    var fleetAgents = 4
    @Option(help: "Slots per SSH agent.")
    var fleetSlots = 2
    @Option(help: "Port of the fleet's sshd agents.")
    var fleetPort = 2731
    @Option(help: "Runs of every measured case; the median wall is kept.")
    var repeats = 1
    @Option(help: "Also run the suite as this many CI jobs (`fanout run --shard I/N` with slots / N slots each, from the warm history) and merge their reports.")
    var ciShards = 0
    @OptionGroup var output: ResultsFileOption
    @Option(help: "Only these local cases, by strategy (comma-separated: fanout, fanout-cold, fanout-shuffled, fanout-package, fanout-no-packing, count, name, timings, swift-test-parallel, swift-test-parallel-build); all by default.")
    var only: String?

    mutating func run() async throws {
        Interrupts.install()
        var bench = SuiteBench(shape: suiteShape.shape, seed: suiteSeed.seed, benchDir: common.dir, fanout: common.fanout, repo: common.repo,
                               slots: slots, warmRuns: warmRuns, fleetAgents: fleetAgents, fleetSlots: fleetSlots,
                               fleetPort: fleetPort, repeats: repeats, ciShards: ciShards)
        bench.only = only.map { Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) }
        let result = try await bench.run()
        try output.write(result)
        print(MarkdownReport.suiteSection(result))
    }
}

