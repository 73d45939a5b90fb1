import ArgumentParser
import Foundation

/// `fanout-bench performance`: suites with XCTest `measure` tests, run serially (the verdict oracle) and by Fanout
/// with its performance classes measured alone (first run, warm) and with none measured alone (warm, `not_exclusive:
/// ['.*']`, which is what the old name-only rule did to a class not named "performance").
struct PerformanceSuites: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "performance",
        abstract: "Run suites with measure tests serially (the oracle) and by Fanout, with and without their performance "
            + "classes measured alone; every verdict checked, every measurement's `measuredAlone` counted, makespans compared.",
        discussion: "Packages: " + RealPackage.measuring.map { "\($0.repo) \($0.tag)" }.joined(separator: "; ")
            + ". Clones and builds go to DIR/performance/NAME-TAG and are reused when the clone is at its tag.")

    @OptionGroup var common: CommonBenchOptions
    @Option(name: .customLong("package"), help: "Only this package (its name, e.g. Yams; repeatable).")
    var only: [String] = []
    @Option(help: "Local slots of every Fanout run.")
    var slots = 8
    @Option(help: "Rounds of every case (the serial oracle's too).")
    var repeats = 3
    @Option(help: "The folder to write performance-NAME.json into (one file per package).")
    var jsonDir: String?

    mutating func run() async throws {
        Interrupts.install()
        let packages = only.isEmpty ? RealPackage.measuring : RealPackage.measuring.filter { only.contains($0.name) }
        guard !packages.isEmpty else {
            throw ValidationError("no package named \(only.joined(separator: ", ")); known: "
                + RealPackage.measuring.map(\.name).joined(separator: ", "))
        }
        for package in packages {
            let bench = PerformanceBench(package: package, dir: common.dir + "/performance", fanout: common.fanout,
                                         repo: common.repo, slots: slots, repeats: repeats)
            let result = try await bench.run()
            if let jsonDir { try JSONFiles.write(result, to: "\(jsonDir)/performance-\(package.name).json") }
            print(MarkdownReport.performanceSuite(result))
        }
    }
}

/// What one Fanout run did with the measure tests.
struct MeasureRound: Codable, Sendable {
    /// `measure {}` results in its report, and those taken with nothing else on their agent.
    var measurements: Int
    var alone: Int
    /// Tests whose first attempt was contended (failed XCTest's deviation rule beside other work) and ran again alone.
    var remeasured: [String]
    /// Tests whose verdict differs from the serial oracle's.
    var disagreements: [String]
    var makespan: Double?
    var exitCode: Int32?
    /// Seconds of the tests that measured (their last attempts): on one agent, time nothing else may share.
    var measuringTime: Double? = nil
    /// The least any schedule that measures alone on one agent can take: the measuring tests one after the other,
    /// plus the rest over the slots (or its longest test, when longer).
    var boundAlone: Double? = nil
}

/// Everything measured for one package with measure tests.
struct PerformanceSuiteResult: Codable, Sendable {
    var package: RealPackage
    var commit: String
    var slots: Int
    var cores: Int
    var tests: Int
    /// Tests that measured (in any Fanout run's report).
    var measureTests: [String]
    /// Tests the serial oracle failed, and those whose serial verdict changed between its rounds.
    var serialFailed: [String]
    var serialUnstable: [String]
    /// /proc/loadavg (1-minute) when the cases started and ended.
    var loadAverage: [Double]
    /// serial, alone (first run of the package, first run of the bundle, warm), beside other work (warm): medians of
    /// the rounds.
    var cases: [CaseResult]
    /// Strategy → each round's measure tests.
    var rounds: [String: [MeasureRound]]
    var disagreements: [VerdictDisagreement]
    var notes: [String]

    /// Round by round, the makespan measured alone over the makespan beside other work (both warm).
    var costRatios: [Double] {
        zip(rounds[PerformanceBench.aloneWarm] ?? [], rounds[PerformanceBench.shared] ?? []).compactMap { a, s in
            guard let a = a.makespan, let s = s.makespan, s > 0 else { return nil }
            return a / s
        }
    }
}

/// One package: built once, then `repeats` rounds of the serial oracle, then `repeats` rounds of the four Fanout cases.
struct PerformanceBench {
    static let aloneSources = "fanout-alone-sources"
    static let aloneFirst = "fanout-alone-cold"
    static let aloneWarm = "fanout-alone"
    static let shared = "fanout-shared"

    var package: RealPackage
    var dir: String
    var fanout: String
    var repo: String
    var slots: Int
    var repeats: Int

    var source: String { "\(dir)/\(package.name)-\(package.tag)" }
    var work: String { "\(dir)/work/\(package.name)" }

    func run() async throws -> PerformanceSuiteResult {
        let fm = FileManager.default
        try? fm.removeItem(atPath: work)
        try fm.createDirectory(atPath: work, withIntermediateDirectories: true)
        let real = RealSuiteBench(package: package, dir: dir, fanout: fanout, slots: slots, repeats: repeats,
                                  oracleRounds: repeats)
        let commit = try await checkout(real)
        progress("\(package.name) \(package.tag) (\(commit.prefix(12))): building tests in \(source)")
        let build = try await Processes.check("swift", ["build", "--build-tests", "--package-path", source], timeout: 3600)
        let bin = try await real.testBundle()
        progress("\(package.name): built in \(f1(build.seconds)) s: \(bin)")

        let runner = SuiteBench(shape: .lognormal, seed: 0, benchDir: dir, fanout: fanout, repo: "", slots: slots,
                                warmRuns: 0, fleetAgents: 0, fleetSlots: 0, fleetPort: 0)
        let log = VerdictLog()
        let stats = MeasureLog()
        let listed = try await SuiteBench.listClasses(bin)
        let modules = Dictionary(grouping: listed, by: \.name).compactMapValues { $0.count == 1 ? $0[0].module : nil }
        let (source, work, name, slots) = (source, work, package.name, slots)
        // No class measured alone: what the name-only rule did to a class whose name does not say "performance".
        let sharedConfig = "\(work)/not-exclusive.yml"
        try "not_exclusive: ['.*']\n".write(toFile: sharedConfig, atomically: true, encoding: .utf8)
        let slotArgs = ["--slots", String(slots)]

        func fanoutCase(_ strategy: String, _ label: String, history: @escaping @Sendable (Int) -> String,
                        fromSources: Bool = false, extra: [String])
            -> @Sendable (Int) async -> CaseResult {
            { round in
                let (r, report) = await runner.fanoutRun(bin: fromSources ? nil : bin, package: source,
                                                         history: history(round),
                                                         reportDir: "\(work)/\(strategy)-\(round)", extra: extra)
                let verdicts = report?.verdicts ?? [:]
                let oracle = await log.oracle
                let disagreements = RealSuiteBench.compare(verdicts, oracle: oracle, run: "\(label), round \(round)")
                await log.record(disagreements)
                let measured = report?.measurements ?? []
                let remeasured = (report?.results ?? []).filter { $0.attempts.contains { $0.contended != nil } }
                    .map { "\($0.id.suite.qualified)/\($0.id.name)" }
                let measuring = Set(measured.map { "\($0.measurement.test.suite.qualified)/\($0.measurement.test.name)" })
                let durations = report?.methodDurations ?? [:]
                let alone = durations.filter { measuring.contains($0.key) }.values.reduce(0, +)
                let rest = durations.filter { !measuring.contains($0.key) }.values
                let bound = alone + max(rest.reduce(0, +) / Double(slots), rest.max() ?? 0)
                await stats.record(strategy, MeasureRound(
                    measurements: measured.count, alone: measured.filter { $0.measuredAlone == true }.count,
                    remeasured: remeasured.sorted(), disagreements: disagreements.map(\.test),
                    makespan: report?.timing.makespan, exitCode: r.exitCode,
                    measuringTime: report == nil ? nil : alone, boundAlone: report == nil ? nil : bound),
                    tests: measured.map { "\($0.measurement.test.suite.qualified)/\($0.measurement.test.name)" })
                let c = CaseResult(strategy: strategy, label: label, fleet: "local", slots: report?.plan.slots ?? slots,
                                   wall: r.seconds, makespan: report?.timing.makespan, testTime: report?.testTime,
                                   testsPassed: 0, testsExpected: 0, processes: report?.units.count,
                                   note: report == nil ? "no report.json: \(r.tail)" : nil, exitCode: r.exitCode,
                                   lowerBound: report?.timing.lowerBound, boundBy: report?.timing.boundBy)
                return RealSuiteBench.withVerdicts(c, verdicts.mapValues(\.verdict), oracle: oracle)
            }
        }
        /// A warm history: round 1's first run, copied once for each warm case (so neither warms the other's).
        let warm: @Sendable (String) -> @Sendable (Int) -> String = { tag in
            { _ in
                let path = "\(work)/\(tag).sqlite"
                if !FileManager.default.fileExists(atPath: path) {
                    try? FileManager.default.copyItem(atPath: "\(work)/first-1.sqlite", toPath: path)
                }
                return path
            }
        }
        let cases = [
            fanoutCase(Self.aloneSources, "Fanout, first run (no history) of the package: measured alone from its sources",
                       history: { round in
                           let path = "\(work)/first-sources-\(round).sqlite"
                           try? FileManager.default.removeItem(atPath: path)
                           return path
                       }, fromSources: true, extra: slotArgs),
            fanoutCase(Self.aloneFirst, "Fanout, first run (no history) of the bundle: measured alone from the output on",
                       history: { round in
                           let first = "\(work)/first-\(round).sqlite"
                           try? FileManager.default.removeItem(atPath: first)
                           return first
                       }, extra: slotArgs),
            fanoutCase(Self.aloneWarm, "Fanout, warm: performance classes measured alone", history: warm("warm-alone"),
                       extra: slotArgs),
            fanoutCase(Self.shared, "Fanout, warm, `not_exclusive: ['.*']`: nothing measured alone",
                       history: warm("warm-shared"), extra: slotArgs + ["--config", sharedConfig]),
        ]
        let each: @Sendable (CaseResult) -> Void = { c in
            progress("\(name) \(c.label): makespan \(c.makespan.map(f2) ?? "-") s, \(c.testsPassed)/\(c.testsExpected) "
                     + "as the oracle" + (c.exitCode.map { ", exit \($0)" } ?? "") + (c.note.map { " — " + $0 } ?? ""))
        }
        let loadBefore = SuiteBench.loadAverage()
        let serial: @Sendable (Int) async -> CaseResult = { round in
            await RealSuiteBench.serialRound(round, source: source, work: work, skip: [], modules: modules, log: log)
        }
        let measured = await SuiteBench.medians([serial], repeats: repeats, each: each)
            + SuiteBench.medians(cases, repeats: repeats, each: each)
        let loadAfter = SuiteBench.loadAverage()

        let serialRounds = await log.serialRounds
        let oracle = serialRounds.first ?? [:]
        let unstable = Set(serialRounds.dropFirst().flatMap { round in
            Set(oracle.keys).union(round.keys).filter { oracle[$0]?.verdict != round[$0]?.verdict }
        }).sorted()
        let failing = oracle.filter { $0.value.verdict == "failed" }.keys.sorted()
        var notes: [String] = []
        if !failing.isEmpty {
            notes.append("fails in the framework's own serial run (\(failing.count)): " + failing.joined(separator: ", "))
        }
        if !unstable.isEmpty { notes.append("serial verdicts changed between rounds: " + unstable.joined(separator: ", ")) }
        return PerformanceSuiteResult(
            package: package, commit: commit, slots: slots, cores: ProcessInfo.processInfo.activeProcessorCount,
            tests: oracle.count, measureTests: await stats.tests, serialFailed: failing, serialUnstable: unstable,
            loadAverage: [loadBefore, loadAfter], cases: measured, rounds: await stats.rounds,
            disagreements: await log.disagreements, notes: notes)
    }

    /// The clone at its tag, or a fresh copy of a fixture folder of this repository (its build folder kept).
    func checkout(_ real: RealSuiteBench) async throws -> String {
        guard let local = package.local else { return try await real.checkout() }
        let fm = FileManager.default
        try fm.createDirectory(atPath: source, withIntermediateDirectories: true)
        for entry in try fm.contentsOfDirectory(atPath: "\(repo)/\(local)") where !entry.hasPrefix(".") {
            try? fm.removeItem(atPath: "\(source)/\(entry)")
            try fm.copyItem(atPath: "\(repo)/\(local)/\(entry)", toPath: "\(source)/\(entry)")
        }
        return try await Processes.check("git", ["-C", repo, "rev-parse", "HEAD"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Each Fanout case's rounds, and every test that measured.
actor MeasureLog {
    private(set) var rounds: [String: [MeasureRound]] = [:]
    private var measuring: Set<String> = []

    var tests: [String] { measuring.sorted() }

    func record(_ strategy: String, _ round: MeasureRound, tests: [String]) {
        rounds[strategy, default: []].append(round)
        measuring.formUnion(tests)
    }
}
