import ArgumentParser
import FanoutCore
import Foundation

/// Fanout as a CI step: N jobs run `fanout run --shard I/N` with their own slots, all planned from one shared
/// history, and a merge job folds their reports into one.
struct CIShardsResult: Codable, Sendable {
    struct ShardRun: Codable, Sendable {
        var index: Int
        var wall: Double
        var makespan: Double
        /// Sum of this shard's test methods' own durations.
        var testTime: Double
        var testsPassed: Int
        var tests: Int
        var exitCode: Int32?
    }

    var shards: Int
    var slotsPerShard: Int
    var runs: [ShardRun]
    /// Tests the suite has: the shards together must run each exactly once.
    var testsExpected: Int
    /// Seconds `fanout report merge` took over the shards' reports, and the tests in the merged report.
    var mergeSeconds: Double
    var mergedTests: Int
    var mergeExitCode: Int32?

    /// All the shards' test time: the work of the whole suite in this run.
    var totalWork: Double { runs.reduce(0) { $0 + $1.testTime } }
    /// total work / (shards × slots): the end of a perfect split over every slot of every job.
    var evenEnd: Double { totalWork / Double(max(1, shards * slotsPerShard)) }
    var maxMakespan: Double { runs.map(\.makespan).max() ?? 0 }
    var ratio: Double { evenEnd > 0 ? maxMakespan / evenEnd : 0 }
    var complete: Bool {
        runs.count == shards && runs.allSatisfy { $0.exitCode == 0 && $0.testsPassed == $0.tests }
            && runs.reduce(0) { $0 + $1.tests } == testsExpected && mergedTests == testsExpected && mergeExitCode == 0
    }
}

extension SuiteBench {
    /// Runs the suite as `shards` CI jobs of `slots / shards` slots each, one after the other (as separate machines
    /// would run them at once), from the warm `history` (`--no-record`: every job sees the same history), then merges.
    func ciShards(_ shards: Int, bin: String, history: String, work: String, expected: Int) async -> CIShardsResult {
        let perShard = max(1, slots / shards)
        var runs: [CIShardsResult.ShardRun] = []
        var dirs: [String] = []
        for i in 1...shards {
            let dir = "\(work)/ci-shard-\(i)"
            dirs.append(dir)
            let (r, report) = await fanoutRun(bin: bin, history: history, reportDir: dir,
                                              extra: ["--shard", "\(i)/\(shards)", "--slots", String(perShard), "--no-record"])
            let run = CIShardsResult.ShardRun(index: i, wall: r.seconds, makespan: report?.timing.makespan ?? 0,
                                              testTime: report?.testTime ?? 0, testsPassed: report?.passed ?? 0,
                                              tests: report?.results.count ?? 0, exitCode: r.exitCode)
            progress("\(shape.rawValue) [ci] shard \(i)/\(shards) × \(perShard) slots: makespan \(f2(run.makespan)) s, "
                     + "test time \(f2(run.testTime)) s, \(run.testsPassed)/\(run.tests) passed")
            runs.append(run)
        }
        let merged = "\(work)/ci-merged"
        try? FileManager.default.removeItem(atPath: merged)
        let m = await Processes.run(fanout, ["report", "merge"] + dirs + ["--out", merged], timeout: 600)
        let report = try? FanoutReportFile.read(merged + "/report.json")
        let result = CIShardsResult(shards: shards, slotsPerShard: perShard, runs: runs, testsExpected: expected,
                                    mergeSeconds: m.seconds, mergedTests: report?.results.count ?? 0, mergeExitCode: m.exitCode)
        progress("\(shape.rawValue) [ci] slowest shard \(f2(result.maxMakespan)) s; even split \(f2(result.evenEnd)) s "
                 + "(\(f3(result.ratio)) ×); merged \(result.mergedTests)/\(expected) tests in \(f2(m.seconds)) s")
        return result
    }
}

/// `fanout report merge` at scale: N shard reports of many tests each, as a large suite's CI would leave them.
struct MergeScaleResult: Codable, Sendable {
    var shards: Int
    var testsPerShard: Int
    var failuresPerShard: Int
    /// Size of the N report.json files together, and of what the merge wrote.
    var inputBytes: Int
    var outputBytes: Int
    /// Wall seconds of each `fanout report merge` run (decode, merge, and write report.json, junit.xml, summary.md
    /// and report.html).
    var walls: [Double]
    var mergedTests: Int
    var exitCode: Int32?

    var median: Double { medianOf(walls) }
    /// Exit 1: the synthetic shards hold failures on purpose; the merge must say so.
    var complete: Bool { mergedTests == shards * testsPerShard && exitCode == 1 }
}

struct MergeScale: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge-scale",
        abstract: "Time `fanout report merge` over N synthetic shard reports of many tests each (every output format).")

    @Option(help: "Shard reports to merge.")
    var shards = 4
    @Option(help: "Tests per shard report (1 in 50 fails, with a message and a place).")
    var tests = 25_000
    @Option(help: "Runs; the median is kept.")
    var repeats = 3
    @Option(help: "The fanout executable.")
    var fanout: String
    @Option(help: "Scratch folder.")
    var dir = "/tmp/fanout-bench"
    @Option(help: "Where to write the result (JSON).")
    var json: String?

    mutating func run() async throws {
        let work = "\(dir)/merge-scale"
        try? FileManager.default.removeItem(atPath: work)
        var paths: [String] = []
        var inputBytes = 0
        for i in 1...shards {
            let path = "\(work)/shard-\(i)/report.json"
            let data = try SyntheticReport.encode(SyntheticReport.shard(i, of: shards, tests: tests))
            try FileManager.default.createDirectory(atPath: "\(work)/shard-\(i)", withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: path))
            inputBytes += data.count
            paths.append(path)
        }
        var walls: [Double] = []
        // (Keeping the last ProcessResult itself as an optional crashes the 6.3 optimizer: keep its exit code.)
        var lastExit: Int32?
        for round in 1...max(1, repeats) {
            let out = "\(work)/merged"
            try? FileManager.default.removeItem(atPath: out)
            let r = await Processes.run(fanout, ["report", "merge"] + paths + ["--out", out], timeout: 600)
            progress("merge-scale: round \(round): \(f2(r.seconds)) s (\(r.ending))")
            walls.append(r.seconds)
            lastExit = r.exitCode
        }
        let out = "\(work)/merged"
        let files = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
        let outputBytes = files.reduce(0) { sum, f in
            sum + ((try? FileManager.default.attributesOfItem(atPath: "\(out)/\(f)")[.size] as? Int) ?? 0)
        }
        let merged = try? FanoutReportFile.read(out + "/report.json")
        let result = MergeScaleResult(shards: shards, testsPerShard: tests, failuresPerShard: tests / 50,
                                      inputBytes: inputBytes, outputBytes: outputBytes, walls: walls,
                                      mergedTests: merged?.results.count ?? 0, exitCode: lastExit)
        if let json { try JSONFiles.write(result, to: json) }
        print("merge of \(shards) × \(tests) tests: median \(f2(result.median)) s over \(walls.count) runs "
              + "(\(walls.map(f2).joined(separator: ", ")) s); \(result.mergedTests) tests merged, exit \(lastExit.map(String.init) ?? "?"); "
              + "in \(inputBytes / 1_000_000) MB, out \(outputBytes / 1_000_000) MB")
        if !result.complete { throw ExitCode(1) }
    }
}

/// Shard reports as `fanout run --shard I/N` writes them, for a suite of N × `tests` tests in 1,000-test units.
enum SyntheticReport {
    static func shard(_ index: Int, of count: Int, tests: Int) -> RunReport {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let perUnit = 1_000
        var results: [TestResult] = []
        var classes: [ClassReport] = []
        results.reserveCapacity(tests)
        let classesPerShard = max(1, tests / 20)
        for c in 0..<classesPerShard {
            let suite = SuiteID(module: "Module\(c % 12)", name: "Shard\(index)Class\(c)")
            let inClass = c == classesPerShard - 1 ? tests - 20 * (classesPerShard - 1) : 20
            for t in 0..<inClass {
                let n = c * 20 + t
                let unit = n / perUnit + 1 // unit ids start at 1, as the scheduler numbers them
                let failed = n % 50 == 7
                let issues = failed ? [Issue(kind: .assertion, message: "XCTAssertEqual failed: (\"\(n)\") is not equal to (\"\(n + 1)\")",
                                             location: SourceLocation(file: "/src/Tests/\(suite.name).swift", line: 10 + t))] : []
                let attempt = Attempt(outcome: failed ? .failed : .passed, duration: 0.001 * Double(1 + n % 40), issues: issues,
                                      unit: unit, agent: "local")
                results.append(TestResult(id: TestID(suite: suite, name: "test\(t)"), framework: .xctest, destination: "local",
                                          outcome: attempt.outcome, attempts: [attempt]))
            }
            classes.append(ClassReport(suite: suite, framework: .xctest, destination: "local", testCount: inClass,
                                       estimate: 0.4, estimateSource: "history (5 runs)", actual: 0.4,
                                       outcome: c % 5 == 0 ? .failed : .passed, timingIsComplete: true))
        }
        let units = (0..<(tests + perUnit - 1) / perUnit).map { u in
            UnitReport(id: u + 1, destination: "local", framework: .xctest, agent: "local", slot: u % 2, suites: [],
                       testCount: perUnit, estimate: 1, startedAt: Double(u), duration: 1, ending: "exit 1", command: "BIN",
                       log: "Test Suite 'Selected tests' started\n")
        }
        var report = RunReport(
            runID: "bench-shard-\(index)", fanoutVersion: "bench", startedAt: start, finishedAt: start.addingTimeInterval(60),
            interrupted: false, product: ProductInfo(package: nil, bundle: "/bench/BenchPackageTests.xctest"),
            destinations: ["local"], agents: [AgentInfo(name: "local", transport: "local", slots: 2)],
            plan: PlanReport(slots: 2, lowerBound: 30, predictedMakespan: 31, totalEstimate: 60), units: units,
            classes: classes, results: results, measurements: [], warnings: [],
            timing: Timing(wall: 60, preparation: 1, makespan: 58, lowerBound: 30), exitCode: 1)
        report.shard = Shard(index: index, count: count)
        return report
    }

    /// report.json's encoding: Core's JSON conventions (dates, NaN), keys sorted, one line (as a report this large is).
    static func encode(_ report: RunReport) throws -> Data {
        let encoder = JSONConventions.encoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(report)
    }
}
