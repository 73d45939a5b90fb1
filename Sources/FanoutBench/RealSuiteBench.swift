import ArgumentParser
import Foundation

/// `fanout-bench real`: public packages' own suites, run by Fanout and by `swift test`, verdicts checked.
struct RealSuites: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "real",
        abstract: "Clone real public Swift packages at pinned tags, build their tests, and run them serially (the verdict "
            + "oracle), by Fanout (first run and warm) and by `swift test --parallel`; every verdict is checked.",
        discussion: "Packages: " + RealPackage.all.map { "\($0.repo) \($0.tag) (\($0.kind))" }.joined(separator: "; ")
            + ". Clones and builds go to DIR/real/NAME-TAG and are reused when the clone is at its tag.")

    @OptionGroup var common: CommonBenchOptions
    @Option(name: .customLong("package"), help: "Only this package (its name, e.g. FlyingFox; repeatable).")
    var only: [String] = []
    @Option(help: "Local slots of Fanout and workers of `swift test --parallel`.")
    var slots = 8
    @Option(help: "Rounds of every case; each case keeps its median run, with the others as its range.")
    var repeats = 3
    @Option(help: "Rounds of the serial `swift test` run (default: --repeats); its first round is the oracle.")
    var oracleRounds: Int?
    @Option(help: "The folder to write real-NAME.json into (one file per package).")
    var jsonDir: String?
    @Option(help: "A benchmark data file (docs/bench-results.json) whose real suites the measured ones replace; `fanout-bench report --from FILE` then writes BENCHMARKS.md from it.")
    var data: String?

    mutating func run() async throws {
        Interrupts.install()
        let packages = only.isEmpty ? RealPackage.all : RealPackage.all.filter { only.contains($0.name) }
        guard !packages.isEmpty else {
            throw ValidationError("no package named \(only.joined(separator: ", ")); known: "
                + RealPackage.all.map(\.name).joined(separator: ", "))
        }
        var measured: [RealSuiteResult] = []
        for package in packages {
            let bench = RealSuiteBench(package: package, dir: common.dir + "/real", fanout: common.fanout, slots: slots,
                                       repeats: repeats, oracleRounds: oracleRounds ?? repeats)
            var result = try await bench.run()
            let m = await BenchReport.machine(repo: common.repo)
            result.measured = "\(m.date), commit \(m.commit)"
            if let jsonDir { try JSONFiles.write(result, to: "\(jsonDir)/real-\(package.name).json") }
            print(MarkdownReport.realSuiteSection(result))
            measured.append(result)
        }
        if let data {
            try JSONFiles.write(try JSONFiles.read(BenchRun.self, from: data).replacingRealSuites(measured), to: data)
            progress("the real suites of \(data) are now these; `fanout-bench report --from \(data)` writes BENCHMARKS.md")
        }
    }
}

/// One real package: cloned at its tag, built once, then run serially by `swift test` (the oracle), by Fanout
/// (first run, warm run) and by `swift test --parallel`, `repeats` rounds, every run's verdicts checked.
struct RealSuiteBench {
    var package: RealPackage
    /// Clones, builds and runs live here (never in the repo).
    var dir: String
    var fanout: String
    var slots: Int
    var repeats: Int
    /// Rounds of the serial run (its first is the oracle; more show the suite's own flakiness).
    var oracleRounds: Int

    var source: String { "\(dir)/\(package.name)-\(package.tag)" }
    var work: String { "\(dir)/work/\(package.name)" }

    func run() async throws -> RealSuiteResult {
        let fm = FileManager.default
        try? fm.removeItem(atPath: work)
        try fm.createDirectory(atPath: work, withIntermediateDirectories: true)
        let commit = try await checkout()
        // Inherited by swift test, fanout and every test process alike.
        let tmp = "/dev/shm/fanout-bench-real/\(package.name)"
        if package.tmpfs != nil {
            try? fm.removeItem(atPath: tmp)
            try fm.createDirectory(atPath: tmp, withIntermediateDirectories: true)
            setenv("TMPDIR", tmp, 1)
        }
        defer {
            if package.tmpfs != nil {
                unsetenv("TMPDIR")
                try? FileManager.default.removeItem(atPath: tmp)
            }
        }
        progress("\(package.name) \(package.tag) (\(commit.prefix(12))): building tests in \(source)")
        let build = try await Processes.check("swift", ["build", "--build-tests", "--package-path", source], timeout: 3600)
        let bin = try await testBundle()
        progress("\(package.name): built in \(f1(build.seconds)) s: \(bin)")

        // SuiteBench's runners: its fanoutRun and swiftTestParallel use only the fanout path and the slots.
        let runner = SuiteBench(shape: .lognormal, seed: 0, benchDir: dir, fanout: fanout, repo: "", slots: slots,
                                warmRuns: 0, fleetAgents: 0, fleetSlots: 0, fleetPort: 0)
        let log = VerdictLog()
        let skipFanout = package.skip.flatMap { ["--skip", $0] }
        let skipSwiftTest = package.skip.flatMap { ["--skip", $0] }
        let history = "\(work)/history.sqlite"
        // Class → module, for XCTest's console lines (they lack the module); a name in two modules stays unknown.
        let listed = try await SuiteBench.listClasses(bin)
        let modules = Dictionary(grouping: listed, by: \.name).compactMapValues { $0.count == 1 ? $0[0].module : nil }
        let (source, work, name, slots) = (source, work, package.name, slots)

        let serialCase: @Sendable (Int) async -> CaseResult = { round in
            await Self.serialRound(round, source: source, work: work, skip: skipSwiftTest, modules: modules, log: log)
        }
        let cases: [@Sendable (Int) async -> CaseResult] = [{ round in
            // A first run: a history file that does not exist yet. It records, so round 1 warms the warm history.
            let first = "\(work)/first-\(round).sqlite"
            try? FileManager.default.removeItem(atPath: first)
            return await Self.fanoutCase(runner, bin: bin, history: first, reportDir: "\(work)/fanout-first-\(round)",
                                         extra: ["--slots", String(slots)] + skipFanout, strategy: "fanout-cold",
                                         label: "Fanout, first run (no history)", round: round, log: log)
        }, { round in
            if !FileManager.default.fileExists(atPath: history) {
                try? FileManager.default.copyItem(atPath: "\(work)/first-\(round).sqlite", toPath: history)
            }
            return await Self.fanoutCase(runner, bin: bin, history: history, reportDir: "\(work)/fanout-warm-\(round)",
                                         extra: ["--slots", String(slots)] + skipFanout, strategy: "fanout",
                                         label: "Fanout, warm history", round: round, log: log)
        }, { round in
            var c = await runner.swiftTestParallel(package: source, work: work, expected: 0, build: false)
            let files = SwiftTestVerdicts.read("\(work)/swift-test-parallel.xml")
            var verdicts = files.all.mapValues(\.verdict)
            let oracle = await log.oracle
            // Its XCTest file writes an XCTSkip as a passing test case: where the oracle skipped, that is a skip.
            let skips = files.xctest.keys.filter { oracle[$0]?.verdict == "skipped" && verdicts[$0] == "passed" }
            for k in skips { verdicts[k] = "skipped" }
            // A process per XCTest method, and one for all of Swift Testing.
            c.processes = files.xctest.count + (files.swiftTesting.isEmpty ? 0 : 1)
            c.note = ([c.exitCode.flatMap { $0 == 0 ? nil : "ended with exit \($0)" }]
                + [skips.isEmpty ? nil : "\(skips.count) XCTSkip test(s) its xUnit file writes as passed are read as skipped"])
                .compactMap { $0 }.joined(separator: "; ")
            if c.note?.isEmpty == true { c.note = nil }
            c = Self.withVerdicts(c, verdicts, oracle: oracle)
            await log.record(Self.compare(verdicts, oracle: oracle, run: "\(c.label), round \(round)"))
            return c
        }]

        let loadBefore = SuiteBench.loadAverage()
        let each: @Sendable (CaseResult) -> Void = { c in
            progress("\(name) \(c.label): wall \(f2(c.wall)) s, \(c.testsPassed)/\(c.testsExpected) passed or skipped"
                     + (c.exitCode.map { ", exit \($0)" } ?? "") + (c.note.map { " — " + $0 } ?? ""))
        }
        // The oracle's rounds first: every other run is compared with its first round.
        let measured = await SuiteBench.medians([serialCase], repeats: oracleRounds, each: each)
            + SuiteBench.medians(cases, repeats: repeats, each: each)
        let loadAfter = SuiteBench.loadAverage()

        let serial = await log.serialRounds
        let oracle = serial.first ?? [:]
        // Swift Testing's tests: its xUnit file (XCTest's serial verdicts came from the console).
        let firstSerial = SwiftTestVerdicts.read("\(work)/serial-1.xml")
        // A round with no verdicts at all did not run its tests (its process crashed): said once, not per test.
        let unstable = Set(serial.dropFirst().filter { !$0.isEmpty }.flatMap { round in
            Set(oracle.keys).union(round.keys).filter { oracle[$0]?.verdict != round[$0]?.verdict }
        }).sorted()
        var notes: [String] = []
        for (i, round) in serial.enumerated() where round.isEmpty {
            let log = (try? String(contentsOfFile: "\(work)/serial-\(i + 1).log", encoding: .utf8)) ?? ""
            let fatal = log.split(separator: "\n").first { $0.contains("Fatal error") || $0.contains("crashed") }
            notes.append("serial round \(i + 1) gave no verdicts" + (fatal.map { ": \($0)" } ?? ""))
        }
        if let reason = package.tmpfs { notes.append("every runner's TMPDIR was on tmpfs (/dev/shm): \(reason)") }
        if let reason = package.skipReason { notes.append("left out: \(package.skip.joined(separator: ", ")): \(reason)") }
        let failing = oracle.filter { $0.value.verdict == "failed" }.keys.sorted()
        if !failing.isEmpty {
            notes.append("fails in the framework's own serial run too (\(failing.count)): "
                         + failing.prefix(10).joined(separator: ", "))
        }
        return RealSuiteResult(package: package, commit: commit, buildSeconds: build.seconds, slots: slots,
                               cores: ProcessInfo.processInfo.activeProcessorCount,
                               xctestCount: oracle.count - firstSerial.swiftTesting.count, swiftTestingCount: firstSerial.swiftTesting.count,
                               serialPassed: oracle.values.filter { $0.verdict == "passed" }.count,
                               serialFailed: failing.count,
                               serialSkipped: oracle.values.filter { $0.verdict == "skipped" }.count,
                               serialTestTime: oracle.values.reduce(0) { $0 + $1.seconds },
                               longestTest: oracle.values.map(\.seconds).max() ?? 0, serialUnstable: unstable,
                               loadAverage: [loadBefore, loadAfter], cases: measured,
                               disagreements: await log.disagreements, notes: notes,
                               alone: await Self.aloneRuns(of: await log.disagreements, bin: bin,
                                                           swiftTesting: Set(firstSerial.swiftTesting.keys)))
    }

    // MARK: - The package

    /// A shallow clone at the tag (git maps github.com to the local copies); an existing clone at the tag is reused
    /// with its build folder. Returns the commit.
    func checkout() async throws -> String {
        let fm = FileManager.default
        if fm.fileExists(atPath: source + "/.git") {
            let head = try? await Processes.check("git", ["-C", source, "rev-parse", "HEAD"]).stdout
            let tagged = try? await Processes.check("git", ["-C", source, "rev-parse", package.tag + "^{commit}"]).stdout
            if let head, head == tagged { return head.trimmingCharacters(in: .whitespacesAndNewlines) }
            progress("\(source) is not at \(package.tag): cloning it again")
            try fm.removeItem(atPath: source)
        }
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try await Processes.check("git", ["-c", "advice.detachedHead=false", "clone", "--quiet", "--depth", "1",
                                          "--branch", package.tag, package.url, source], timeout: 600)
        return try await Processes.check("git", ["-C", source, "rev-parse", "HEAD"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `<bin path>/<Package>PackageTests.xctest`.
    func testBundle() async throws -> String {
        let binDir = try await Processes.check("swift", ["build", "--build-tests", "--package-path", source,
                                                         "--show-bin-path"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let bundles = (try? FileManager.default.contentsOfDirectory(atPath: binDir))?
            .filter { $0.hasSuffix("PackageTests.xctest") } ?? []
        guard bundles.count == 1 else {
            throw BenchError("expected one *PackageTests.xctest in \(binDir), found \(bundles.count)")
        }
        return "\(binDir)/\(bundles[0])"
    }

    /// Every disagreeing test (10 at most) run alone `times` times, straight from the bundle: how often it passes.
    static func aloneRuns(of disagreements: [VerdictDisagreement], bin: String, swiftTesting: Set<String>,
                          times: Int = 5) async -> [String: AloneRuns] {
        var out: [String: AloneRuns] = [:]
        for test in Array(Set(disagreements.map(\.test)).filter { $0.contains("/") }).sorted().prefix(10) {
            // `Module.Class/test` is XCTest's selector; Swift Testing takes an anchored regex.
            let args = swiftTesting.contains(test)
                ? ["--testing-library", "swift-testing", "--filter", "^" + NSRegularExpression.escapedPattern(for: test) + "(/|$)"]
                : [test]
            var passed = 0
            for _ in 0..<times where await Processes.run(bin, args, timeout: 600).succeeded { passed += 1 }
            out[test] = AloneRuns(passed: passed, runs: times)
            progress("\(test): \(passed) of \(times) runs alone passed")
        }
        return out
    }

    // MARK: - Cases

    /// One round of the oracle: XCTest one test after the other, and Swift Testing without its in-process
    /// parallelism (`swift test --no-parallel`); its verdicts go to `log` (round 1's are the oracle).
    static func serialRound(_ round: Int, source: String, work: String, skip: [String], modules: [String: String],
                            log: VerdictLog) async -> CaseResult {
        let xunit = "\(work)/serial-\(round).xml"
        let r = await Processes.run("swift", ["test", "--package-path", source, "--skip-build", "--no-parallel",
                                              "--xunit-output", xunit] + skip, timeout: 3600)
        try? (r.stdout + r.stderr).write(toFile: "\(work)/serial-\(round).log", atomically: true, encoding: .utf8)
        let verdicts = SwiftTestVerdicts.read(xunit, console: r.stdout, modules: modules)
        await log.recordSerial(round: round, verdicts.all)
        return swiftTestCase(r, verdicts: verdicts.all, strategy: "swift-test-serial",
                             label: "`swift test` (serial: the verdict oracle)", slots: 1, oracle: await log.oracle)
    }

    static func fanoutCase(_ runner: SuiteBench, bin: String, history: String, reportDir: String, extra: [String],
                           strategy: String, label: String, round: Int, log: VerdictLog) async -> CaseResult {
        let (r, report) = await runner.fanoutRun(bin: bin, history: history, reportDir: reportDir, extra: extra)
        let verdicts = report?.verdicts ?? [:]
        let oracle = await log.oracle
        await log.record(compare(verdicts, oracle: oracle, run: "\(label), round \(round)"))
        var note: String? = r.succeeded ? nil : "fanout ended with \(r.ending)"
        if report == nil { note = (note.map { $0 + "; " } ?? "") + "no report.json: \(r.tail)" }
        if let report, !report.warnings.isEmpty {
            note = (note.map { $0 + "; " } ?? "") + report.warnings.prefix(3).joined(separator: "; ")
        }
        if let taken = report?.stolenTests, taken > 0 {
            note = (note.map { $0 + "; " } ?? "") + "work stealing: \(taken) tests taken over by idle slots"
        }
        let c = CaseResult(strategy: strategy, label: label, fleet: "local", slots: report?.plan.slots ?? 0,
                           wall: r.seconds, makespan: report?.timing.makespan, testTime: report?.testTime,
                           testsPassed: 0, testsExpected: 0, processes: report?.units.count, note: note,
                           exitCode: r.exitCode, lowerBound: report?.timing.lowerBound, boundBy: report?.timing.boundBy)
        return withVerdicts(c, verdicts.mapValues(\.verdict), oracle: oracle)
    }

    static func swiftTestCase(_ r: ProcessResult, verdicts: [String: SwiftTestVerdicts.Case], strategy: String,
                              label: String, slots: Int, oracle: [String: SwiftTestVerdicts.Case]) -> CaseResult {
        let c = CaseResult(strategy: strategy, label: label, fleet: "local", slots: slots, wall: r.seconds,
                           testTime: verdicts.values.reduce(0) { $0 + $1.seconds }, testsPassed: 0, testsExpected: 0,
                           note: r.succeeded ? nil : "ended with \(r.ending)", exitCode: r.exitCode)
        return withVerdicts(c, verdicts.mapValues(\.verdict), oracle: oracle)
    }

    /// Tests passed or skipped, of those the oracle passed or skipped.
    static func withVerdicts(_ c: CaseResult, _ verdicts: [String: String], oracle: [String: SwiftTestVerdicts.Case]) -> CaseResult {
        var c = c
        let good: Set = ["passed", "skipped"]
        c.testsExpected = oracle.values.filter { good.contains($0.verdict) }.count
        c.testsPassed = verdicts.filter { good.contains($0.value) && oracle[$0.key].map { good.contains($0.verdict) } == true }.count
        c.processes = c.processes ?? (verdicts.isEmpty ? nil : verdicts.count)
        return c
    }

    /// Every test whose verdict differs from the oracle's, or that one side lacks. Fanout's `crashed` and
    /// `timed-out` are failures as the serial run's xUnit file would say; `flaky` is not `passed`.
    static func compare(_ verdicts: [String: String], oracle: [String: SwiftTestVerdicts.Case], run: String,
                        evidence: [String: String] = [:]) -> [VerdictDisagreement] {
        func normal(_ v: String) -> String { ["crashed", "timed-out"].contains(v) ? "failed" : v }
        var out: [VerdictDisagreement] = []
        for test in Set(oracle.keys).union(verdicts.keys).sorted() {
            let serial = oracle[test]?.verdict ?? "missing"
            let other = verdicts[test] ?? "missing"
            guard normal(serial) != normal(other) else { continue }
            out.append(VerdictDisagreement(test: test, run: run, serial: serial, other: other, evidence: evidence[test]))
        }
        return out
    }

    static func compare(_ verdicts: [String: FanoutReportFile.TestVerdict], oracle: [String: SwiftTestVerdicts.Case],
                        run: String) -> [VerdictDisagreement] {
        compare(verdicts.mapValues(\.verdict), oracle: oracle, run: run, evidence: verdicts.compactMapValues(\.evidence))
    }
}

/// The serial runs' verdicts (round 1's is the oracle) and every disagreement found, shared by the cases.
actor VerdictLog {
    private(set) var serialRounds: [[String: SwiftTestVerdicts.Case]] = []
    private(set) var disagreements: [VerdictDisagreement] = []
    /// Kept per run: a run that lost every test would otherwise store thousands of rows.
    static let perRunLimit = 100

    var oracle: [String: SwiftTestVerdicts.Case] { serialRounds.first ?? [:] }

    func recordSerial(round: Int, _ verdicts: [String: SwiftTestVerdicts.Case]) { serialRounds.append(verdicts) }

    func record(_ found: [VerdictDisagreement]) {
        disagreements += found.prefix(Self.perRunLimit)
        if found.count > Self.perRunLimit, let run = found.first?.run {
            disagreements.append(VerdictDisagreement(test: "(\(found.count - Self.perRunLimit) more)", run: run,
                                                     serial: "-", other: "-"))
        }
    }
}
