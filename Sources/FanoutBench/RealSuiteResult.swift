import Foundation

/// A public Swift package whose own test suite the benchmark runs, pinned by its tag.
struct RealPackage: Codable, Sendable, Hashable {
    /// `owner/name` on GitHub (git reads it from /opt/swift-packages here).
    var repo: String
    var tag: String
    /// Why this suite: what kind of suite it is (large, waiting, computing, skewed).
    var kind: String
    /// Class regexes left out of every run (`fanout run --skip`, `swift test --skip`), with the reason in `skipReason`.
    var skip: [String] = []
    var skipReason: String? = nil
    /// Why its tests' temporary files go to tmpfs (`TMPDIR`, for every runner alike), when they do.
    var tmpfs: String? = nil
    /// A folder of this repository to copy instead of a clone (a fixture package), relative to its root.
    var local: String? = nil

    var name: String { String(repo.split(separator: "/").last ?? Substring(repo)) }
    var url: String { "https://github.com/\(repo)" }

    /// The suites of the benchmark. A long suite with thousands of short tests, one whose tests wait on sockets and
    /// timers, and one that computes, with a few classes far longer than the rest.
    static let all: [RealPackage] = [
        RealPackage(repo: "groue/GRDB.swift", tag: "7.10.0",
                    kind: "large and skewed: thousands of short XCTest methods against SQLite files, a few cursor tests of many seconds",
                    tmpfs: "its SQLite files sync to disk thousands of times: this machine's disk takes about 2.4 ms per "
                        + "fsync, and one serial run on disk had not ended after 15 minutes"),
        RealPackage(repo: "swhitty/FlyingFox", tag: "0.27.1",
                    kind: "waiting: an HTTP server's Swift Testing suites on loopback sockets, with timeouts and sleeps"),
        RealPackage(repo: "apple/swift-collections", tag: "1.6.0",
                    kind: "computing and skewed: exhaustive checks of data structures, a few classes far longer than the rest"),
    ]
}

extension RealPackage {
    /// The packages of `fanout-bench performance`: suites with XCTest `measure` tests in classes not named
    /// "performance", run with and without their performance classes measured alone.
    static let measuring: [RealPackage] = [
        RealPackage(repo: "fanout/Benchmarks", tag: "fixture",
                    kind: "this repository's fixture (Tests/Fixtures/Benchmarks): 3 measure tests in SortBenchmarks, "
                        + "stable alone, noisy beside the CPU bursts of its 6 Load classes",
                    local: "Tests/Fixtures/Benchmarks"),
        RealPackage(repo: "jpsim/Yams", tag: "6.2.2",
                    kind: "a YAML parser: 6 measure tests in a class named PerformanceTests (the old name rule knew it too), "
                        + "beside a few hundred short tests"),
        RealPackage(repo: "weichsel/ZIPFoundation", tag: "0.9.20",
                    kind: "ZIP archives: 5 measure tests in an extension of its largest class (ZIPFoundationTests), "
                        + "beside file-heavy tests; one test fails in its own serial run"),
    ]
}

/// One run's disagreement with the framework's own serial run: a test whose verdict differs, or that one side lacks.
struct VerdictDisagreement: Codable, Sendable, Hashable {
    /// `Module.Suite/name`.
    var test: String
    /// The run that disagreed (its case label and round).
    var run: String
    /// The serial run's verdict (`passed`, `failed`, `skipped`, `missing`).
    var serial: String
    /// The other run's verdict (Fanout's report.json outcome, or `swift test --parallel`'s xUnit verdict, or `missing`).
    var other: String
    /// What the run said about it: the first issue of its last attempt, when it has one.
    var evidence: String?
}

/// A test run alone, one process per run: how often it passed (or skipped itself).
struct AloneRuns: Codable, Sendable, Hashable {
    var passed: Int
    var runs: Int
    /// Passed and failed alone: the suite's own flakiness.
    var flaky: Bool { passed > 0 && passed < runs }
    var text: String { "\(passed) of \(runs) passed alone" }
}

/// Everything measured for one real package.
struct RealSuiteResult: Codable, Sendable {
    var package: RealPackage
    /// The commit the tag named in the clone that ran.
    var commit: String
    var buildSeconds: Double
    var slots: Int
    var cores: Int
    /// Tests the serial run reported, by framework, and its verdicts.
    var xctestCount: Int
    var swiftTestingCount: Int
    var serialPassed: Int
    var serialFailed: Int
    var serialSkipped: Int
    /// The test time the first serial run's xUnit files report, summed, and its longest test.
    var serialTestTime: Double
    var longestTest: Double
    /// Tests whose serial verdict changed from one round to the next (the suite's own flakiness, not Fanout's).
    var serialUnstable: [String]
    /// /proc/loadavg (1-minute) when the cases started and ended: the machine is shared.
    var loadAverage: [Double]
    /// serial, Fanout first run, Fanout warm, swift test --parallel: medians of `repeats` rounds.
    var cases: [CaseResult]
    /// Every run's disagreement with the serial oracle (Fanout's runs and swift test --parallel's).
    var disagreements: [VerdictDisagreement]
    var notes: [String]
    /// Each disagreeing test run alone, one process per run, a few times: `N of M passed alone`. A test that
    /// passes and fails alone is the suite's own flakiness; one that always passes alone but failed under Fanout is not.
    var alone: [String: AloneRuns]? = nil
    /// When and by which commit of Fanout it was measured (`fanout-bench real` measures apart from `--full`); nil
    /// in results recorded before it was kept.
    var measured: String? = nil

    func strategy(_ name: String) -> CaseResult? { cases.first { $0.strategy == name } }
    var tests: Int { xctestCount + swiftTestingCount }
}

extension BenchRun {
    /// The real suites of a results folder (`real-NAME.json`), else those already in the data file: they are
    /// measured apart (`scripts/bench.sh --real`), so a `--full` run that did not measure them keeps them.
    func withRealSuites(from results: String, keeping data: String) throws -> BenchRun {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: results)) ?? []
        let found = try files.filter { $0.hasPrefix("real-") && $0.hasSuffix(".json") }.sorted()
            .map { try JSONFiles.read(RealSuiteResult.self, from: "\(results)/\($0)") }
        var run = self
        run.realSuites = found.isEmpty ? (try? JSONFiles.read(BenchRun.self, from: data))?.realSuites : found
        return run
    }

    /// This run with `measured` in place of the real suites of the same packages, in `RealPackage.all`'s order.
    func replacingRealSuites(_ measured: [RealSuiteResult]) -> BenchRun {
        var run = self
        let names = Set(measured.map(\.package.name))
        let all = (realSuites ?? []).filter { !names.contains($0.package.name) } + measured
        let order = RealPackage.all.map(\.name)
        run.realSuites = all.sorted { (order.firstIndex(of: $0.package.name) ?? order.count, $0.package.name)
            < (order.firstIndex(of: $1.package.name) ?? order.count, $1.package.name) }
        return run
    }
}
