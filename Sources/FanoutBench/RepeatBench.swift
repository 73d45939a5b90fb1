import ArgumentParser
import Foundation

/// `fanout-bench repeat`: flake hunting the way a user does it today, against `fanout run --repeat`. A generated
/// 200-test suite (shape `two-hundred`), N repetitions on `--slots` slots:
/// - the loop a user writes: `for i in $(seq N); do swift test --skip-build; done`;
/// - the same loop with `swift test --parallel --num-workers <slots>`;
/// - `fanout run --bundle … --repeat N --slots <slots>` (history warmed by one ordinary run, not recorded).
/// Every round runs the three in turn; the figures are medians with their ranges, and the ratios are per round.
struct RepeatBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repeat",
        abstract: "--repeat N of a 200-test suite on 8 slots against N × swift test, and N × swift test --parallel.")

    @OptionGroup var common: CommonBenchOptions
    @Option(help: "Repetitions of the suite.")
    var repetitions = 20
    @Option(help: "Slots of fanout, workers of swift test --parallel.")
    var slots = 8
    @Option(help: "Rounds: every case runs once per round (the figures are medians over the rounds).")
    var rounds = 3
    @OptionGroup var suiteSeed: SuiteSeedOption
    @OptionGroup var output: ResultsFileOption

    struct Round: Codable {
        var loop: Double
        var loopParallel: Double
        var fanout: Double
        /// Fanout's own lower bound of the run (its tests' times over its slots, or the CPU over the cores).
        var lowerBound: Double
    }

    struct Results: Codable {
        var repetitions: Int
        var slots: Int
        var tests: Int
        var serialTotal: Double
        var rounds: [Round]
        var loadAverage: [Double]
    }

    mutating func run() async throws {
        let shape = SuiteShape.twoHundred
        let package = "\(common.dir)/suites/\(shape.rawValue)"
        let work = "\(common.dir)/work/repeat"
        try? FileManager.default.removeItem(atPath: work)
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let suite = SuiteGenerator.make(shape: shape, seed: suiteSeed.seed)
        try SuiteGenerator.write(suite, to: URL(fileURLWithPath: package))
        progress("repeat: \(suite.classes.count) classes, \(suite.methodCount) tests, \(f2(suite.serialTotal)) s serial; building")
        _ = try await Processes.check("swift", ["build", "--build-tests", "--package-path", package], timeout: 1800)
        let bin = try await Processes.check("swift", ["build", "--build-tests", "--package-path", package, "--show-bin-path"])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "/\(suite.packageName)PackageTests.xctest"
        let history = "\(work)/history.sqlite"
        let warm = await Processes.run(common.fanout, ["run", "--bundle", bin, "--slots", String(slots), "--history", history,
                                                       "--report-dir", "\(work)/warm"], environment: ["NO_COLOR": "1"],
                                       timeout: 900)
        guard warm.succeeded else { throw BenchError("the warm-up run of fanout failed (\(warm.ending)):\n\(warm.tail)") }
        let load = SuiteBench.loadAverage()
        var done: [Round] = []
        for round in 1...max(1, rounds) {
            let loop = try await swiftTestLoop(package, parallel: false)
            let parallel = try await swiftTestLoop(package, parallel: true)
            let (fanout, bound) = try await fanoutRepeat(bin: bin, history: history, work: work, round: round,
                                                         tests: suite.methodCount)
            done.append(Round(loop: loop, loopParallel: parallel, fanout: fanout, lowerBound: bound))
            progress("repeat round \(round): \(repetitions) × swift test \(f1(loop)) s · \(repetitions) × swift test "
                + "--parallel \(f1(parallel)) s · fanout --repeat \(repetitions) \(f1(fanout)) s (its lower bound "
                + "\(f1(bound)) s): \(f2(loop / fanout))× and \(f2(parallel / fanout))× faster, \(f2(fanout / bound)) × LB")
        }
        let results = Results(repetitions: repetitions, slots: slots, tests: suite.methodCount,
                              serialTotal: suite.serialTotal, rounds: done, loadAverage: [load, SuiteBench.loadAverage()])
        print(Self.table(results))
        try output.write(results)
    }

    /// N sequential `swift test` runs, stopping at none (a flake hunt looks at all of them); the seconds in all.
    func swiftTestLoop(_ package: String, parallel: Bool) async throws -> Double {
        let start = BenchClock.now()
        for i in 1...repetitions {
            let r = await Processes.run("swift", ["test", "--skip-build", "--package-path", package]
                + (parallel ? ["--parallel", "--num-workers", String(slots)] : []), timeout: 900)
            guard r.succeeded else { throw BenchError("swift test (repetition \(i)) failed (\(r.ending)):\n\(r.tail)") }
        }
        return BenchClock.now() - start
    }

    /// One `fanout run --repeat`: its wall seconds and its report's lower bound, after checking every test ran
    /// `repetitions` times.
    func fanoutRepeat(bin: String, history: String, work: String, round: Int, tests: Int) async throws -> (Double, Double) {
        let dir = "\(work)/fanout-\(round)"
        let r = await Processes.run(common.fanout, ["run", "--bundle", bin, "--repeat", String(repetitions), "--slots",
                                                    String(slots), "--history", history, "--no-record", "--report-dir", dir],
                                    environment: ["NO_COLOR": "1"], timeout: 1800)
        guard r.succeeded else { throw BenchError("fanout run --repeat failed (\(r.ending)):\n\(r.tail)") }
        let report = try FanoutReportFile.read(dir + "/report.json")
        guard report.results.count == tests, report.results.allSatisfy({ $0.attempts.count == repetitions }) else {
            throw BenchError("fanout run --repeat: expected \(tests) tests × \(repetitions) attempts in \(dir)/report.json")
        }
        return (r.seconds, report.timing.lowerBound)
    }

    static func table(_ r: Results) -> String {
        func cell(_ xs: [Double], _ format: (Double) -> String) -> String {
            "\(format(medianOf(xs))) (\(format(xs.min() ?? 0))-\(format(xs.max() ?? 0)))"
        }
        let rounds = r.rounds
        var out = "| \(r.repetitions) repetitions of \(r.tests) tests (\(f2(r.serialTotal)) s serial), \(r.slots) slots | wall, "
            + "median (range) of \(rounds.count) | fanout is faster by, per round |\n|---|---:|---:|\n"
        out += "| `for i in 1…\(r.repetitions); swift test --skip-build` | \(cell(rounds.map(\.loop), f1)) s | "
            + "\(cell(rounds.map { $0.loop / $0.fanout }, f2))× |\n"
        out += "| `for i in 1…\(r.repetitions); swift test --skip-build --parallel --num-workers \(r.slots)` | "
            + "\(cell(rounds.map(\.loopParallel), f1)) s | \(cell(rounds.map { $0.loopParallel / $0.fanout }, f2))× |\n"
        out += "| `fanout run --bundle … --repeat \(r.repetitions) --slots \(r.slots)` | \(cell(rounds.map(\.fanout), f1)) s | "
            + "\(cell(rounds.map { $0.fanout / $0.lowerBound }, f2)) × its lower bound |\n"
        return out
    }
}
