import FanoutCore
import Foundation

/// One generated suite, built once and run for real by every strategy on 8 local slots and on the SSH fleet.
struct SuiteBench {
    var shape: SuiteShape
    var seed: UInt64
    var benchDir: String
    var fanout: String
    var repo: String
    var slots: Int
    var warmRuns: Int
    /// 0: no SSH fleet.
    var fleetAgents: Int
    var fleetSlots: Int
    var fleetPort: Int
    /// Runs of every case; the run with the median wall is kept. Rounds go through all strategies in turn, so that
    /// a busy moment of this shared machine does not fall on one strategy only.
    var repeats = 1
    /// > 0: also run the suite as this many CI jobs (`--shard I/N`, slots / N slots each) from the warm history.
    var ciShards = 0
    /// Only the local cases of these strategies (nil: all).
    var only: Set<String>? = nil

    func run() async throws -> SuiteResult {
        let fm = FileManager.default
        let package = "\(benchDir)/suites/\(shape.rawValue)"
        let work = "\(benchDir)/work/\(shape.rawValue)"
        try? fm.removeItem(atPath: work)
        try fm.createDirectory(atPath: work, withIntermediateDirectories: true)

        let suite = SuiteGenerator.make(shape: shape, seed: seed)
        try SuiteGenerator.write(suite, to: URL(fileURLWithPath: package))
        progress("\(shape.rawValue): \(suite.classes.count) classes, \(suite.methodCount) methods, expected serial total "
                 + "\(f2(suite.serialTotal)) s; building \(package)")
        let build = try await Processes.check("swift", ["build", "--build-tests", "--package-path", package], timeout: 1800)
        let binDir = try await Processes.check("swift", ["build", "--build-tests", "--package-path", package,
                                                         "--show-bin-path"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let bin = "\(binDir)/\(suite.packageName)PackageTests.xctest"
        progress("\(shape.rawValue): built in \(f2(build.seconds)) s: \(bin)")

        let listed = try await Self.listClasses(bin)
        let listedTests = listed.reduce(0) { $0 + $1.tests }
        guard listedTests == suite.methodCount else {
            throw BenchError("\(bin) lists \(listedTests) tests, the generator wrote \(suite.methodCount)")
        }

        // Warm the timing history; the last warm-up run is the reference for per-method durations. Computing
        // suites warm up on one slot: 8 processes on 2 cores would time the contention, not the tests.
        let history = "\(work)/history.sqlite"
        var reference: FanoutReportFile?
        for i in 1...max(1, warmRuns) {
            let (r, report) = await fanoutRun(bin: bin, history: history, reportDir: "\(work)/warm-\(i)",
                                              extra: ["--slots", String(shape.hasComputingTests ? 1 : slots)])
            guard let report, report.passed == suite.methodCount else {
                throw BenchError("warm-up run \(i) of fanout failed (\(r.ending)):\n\(r.tail)")
            }
            progress("\(shape.rawValue): warm-up \(i): \(f2(r.seconds)) s")
            reference = report
        }
        guard let reference else { throw BenchError("no warm-up run") }
        let methods = reference.methodDurations
        let classTimes = reference.classDurations
        let total = methods.values.reduce(0, +)
        let longestMethod = methods.values.max() ?? 0
        var perClass: [String: Double] = [:]
        for (k, v) in methods { perClass[String(k[..<(k.firstIndex(of: "/") ?? k.endIndex)]), default: 0] += v }
        let longestClass = perClass.values.max() ?? 0
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let parallel = Double(shape.computes ? min(slots, cores) : slots)
        // The methods of computing classes (all in cpu-bound, some in mixed) share the cores, whatever the slots.
        let computingClasses = Set(suite.classes.filter { suite.computes($0) }.map { "\(suite.moduleName).\($0.name)" })
        let computing = methods.filter { computingClasses.contains(String($0.key.prefix { $0 != "/" })) }.values.reduce(0, +)
        let cpuBound = computing / Double(min(slots, cores))
        let lb = max(total / parallel, cpuBound, longestMethod)
        progress("\(shape.rawValue): reference serial \(f2(total)) s; method-level LB at \(slots) slots \(f2(lb)) s; "
                 + "class-level LB \(f2(max(total / parallel, cpuBound, longestClass))) s")

        let loadBefore = Self.loadAverage()
        var cases: [CaseResult] = []
        let record: @Sendable (CaseResult) -> Void = { c in
            let bound = c.lowerBound ?? lb
            let mk = c.makespan.map { " makespan \(f2($0)) s (\(f3($0 / bound)) × LB\(c.boundBy.map { ", bound by " + $0 } ?? ""))" } ?? ""
            progress("\(shape.rawValue) [\(c.fleet)] \(c.label): wall \(f2(c.wall)) s\(mk), "
                     + "\(c.testsPassed)/\(c.testsExpected) passed\(c.note.map { " — " + $0 } ?? "")")
        }

        // A history that is deliberately wrong: the warm history with class times shuffled between classes.
        let shuffled = "\(work)/shuffled-history.sqlite"
        try? fm.removeItem(atPath: shuffled)
        try fm.copyItem(atPath: history, toPath: shuffled)
        try await Self.shuffleClassTimes(shuffled, seed: seed)

        // ---- 8 local slots ----
        var local: [(String, @Sendable (Int) async -> CaseResult)] = [("fanout", { round in
            await fanoutCase(bin: bin, history: history, reportDir: "\(work)/fanout-local-\(round)", fleet: "local",
                             extra: ["--slots", String(slots)], expected: suite.methodCount)
        }), ("fanout-cold", { round in
            // A first run: a history file that does not exist yet (nothing recorded, so every round is a first run).
            await fanoutCase(bin: bin, history: "\(work)/cold-\(round).sqlite", reportDir: "\(work)/fanout-cold-\(round)",
                             fleet: "local", extra: ["--slots", String(slots), "--no-record"], expected: suite.methodCount,
                             strategy: "fanout-cold", label: "Fanout, first run (no history)")
        }), ("fanout-shuffled", { round in
            await fanoutCase(bin: bin, history: shuffled, reportDir: "\(work)/fanout-shuffled-\(round)", fleet: "local",
                             extra: ["--slots", String(slots), "--no-record"], expected: suite.methodCount,
                             strategy: "fanout-shuffled", label: "Fanout, wrong history (class times shuffled)")
        }), ("fanout-package", { round in
            // As a user runs it on a package: `fanout run --package`, its (no-op) build included.
            await fanoutCase(bin: nil, package: package, history: history, reportDir: "\(work)/fanout-package-\(round)",
                             fleet: "local", extra: ["--slots", String(slots)], expected: suite.methodCount,
                             strategy: "fanout-package", label: "Fanout, `fanout run --package` (no-op build included)")
        })]
        if shape.hasComputingTests {
            // CPU-aware packing off (`--no-cpu-packing`): every slot takes work whatever the cores are doing.
            local.append(("fanout-no-packing", { round in
                await fanoutCase(bin: bin, history: history, reportDir: "\(work)/fanout-no-packing-\(round)", fleet: "local",
                                 extra: ["--slots", String(slots), "--no-cpu-packing", "--no-record"], expected: suite.methodCount,
                                 strategy: "fanout-no-packing", label: "Fanout, CPU-aware packing off (`--no-cpu-packing`)")
            }))
        }
        for strategy in StaticStrategy.allCases {
            local.append((strategy.rawValue, { _ in
                await staticCase(strategy, bin: bin, classHistory: classTimes, expected: suite.methodCount,
                                 fleet: nil, remoteBin: nil, computes: !computingClasses.isEmpty)
            }))
        }
        local.append(("swift-test-parallel", { _ in
            await swiftTestParallel(package: package, work: work, expected: suite.methodCount, build: false)
        }))
        local.append(("swift-test-parallel-build", { _ in
            await swiftTestParallel(package: package, work: work, expected: suite.methodCount, build: true)
        }))
        let chosen = local.filter { only?.contains($0.0) ?? true }.map(\.1)
        for c in await Self.medians(chosen, repeats: repeats, each: record) { cases.append(c) }

        var ci: CIShardsResult?
        if ciShards > 0 {
            ci = await self.ciShards(ciShards, bin: bin, history: history, work: work, expected: suite.methodCount)
        }

        // ---- the SSH fleet ----
        var fleetDescription: String?
        var deployNote: String?
        if fleetAgents > 0 {
            let fleet = try await LocalFleet.up(agents: fleetAgents, slots: fleetSlots, dir: "\(benchDir)/fleet-\(fleetAgents)",
                                                port: fleetPort, hide: [package + "/.build"], repo: repo)
            fleetDescription = fleet.description
            progress("\(shape.rawValue): \(fleet.description) up in \(f2(fleet.upSeconds)) s")
            do {
                let sshHistory = "\(work)/ssh-history.sqlite"
                try? fm.removeItem(atPath: sshHistory)
                try fm.copyItem(atPath: history, toPath: sshHistory)
                // The first run deploys the product to every agent; the measured run finds it in their caches.
                let (first, firstReport) = await fanoutRun(bin: bin, history: sshHistory, reportDir: "\(work)/ssh-first",
                                                           extra: ["--config", fleet.config])
                if let firstReport {
                    let bytes = firstReport.agents.reduce(0) { $0 + ($1.deployedBytes ?? 0) }
                    let secs = firstReport.agents.compactMap(\.deploySeconds).max() ?? 0
                    deployNote = "Fanout's first run over SSH: wall \(f2(first.seconds)) s, deployed \(bytes / 1024) KiB in all "
                        + "(slowest agent \(f2(secs)) s)"
                }
                var remote: [@Sendable (Int) async -> CaseResult] = [{ round in
                    await fanoutCase(bin: bin, history: sshHistory, reportDir: "\(work)/fanout-ssh-\(round)", fleet: "ssh",
                                     extra: ["--config", fleet.config], expected: suite.methodCount)
                }, { round in
                    await fanoutCase(bin: bin, history: "\(work)/ssh-cold-\(round).sqlite",
                                     reportDir: "\(work)/fanout-ssh-cold-\(round)", fleet: "ssh",
                                     extra: ["--config", fleet.config, "--no-record"], expected: suite.methodCount,
                                     strategy: "fanout-cold", label: "Fanout, first run (no history)")
                }]
                // Static shards over ssh need the product on every agent first (not timed as part of a case).
                let remoteDir = "fanout-bench-static"
                let t0 = BenchClock.now()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for a in 0..<fleet.agents {
                        group.addTask {
                            let dir = fleet.workdir(a) + "/" + remoteDir
                            let (s, sa) = fleet.ssh(agent: a, "rm -rf \(dir) && mkdir -p \(dir)")
                            try await Processes.check(s, sa, timeout: 60)
                            let (c, ca) = fleet.scp(bin, agent: a, to: dir + "/")
                            try await Processes.check(c, ca, timeout: 300)
                        }
                    }
                    try await group.waitForAll()
                }
                let copy = BenchClock.now() - t0
                deployNote = (deployNote.map { $0 + "; " } ?? "")
                    + "static shards: scp of the product to \(fleet.agents) agents \(f2(copy)) s (not in their wall)"
                let binName = (bin as NSString).lastPathComponent
                for strategy in StaticStrategy.allCases {
                    remote.append { _ in
                        await staticCase(strategy, bin: bin, classHistory: classTimes, expected: suite.methodCount,
                                         fleet: fleet, remoteBin: { fleet.workdir($0) + "/\(remoteDir)/\(binName)" })
                    }
                }
                for c in await Self.medians(remote, repeats: repeats, each: record) { cases.append(c) }
                for a in 0..<fleet.agents {
                    let (s, sa) = fleet.ssh(agent: a, "rm -rf \(fleet.workdir(a))/\(remoteDir)")
                    _ = await Processes.run(s, sa, timeout: 60)
                }
            } catch {
                await fleet.down()
                throw error
            }
            await fleet.down()
        }

        return SuiteResult(shape: shape, seed: seed, summary: shape.summary, classes: suite.classes.count,
                           methods: suite.methodCount, nominalSerial: suite.serialTotal, buildSeconds: build.seconds,
                           slots: slots, referenceSerial: total, longestMethod: longestMethod, longestClass: longestClass,
                           methodLowerBound: lb, cores: cores, classLowerBound: max(total / parallel, cpuBound, longestClass),
                           computingSerial: shape == .mixed ? computing : nil,
                           fleetDescription: fleetDescription, deploy: deployNote,
                           loadAverage: [loadBefore, Self.loadAverage()], cases: cases, ci: ci)
    }

    /// Runs `cases` round-robin `repeats` times and keeps, per case, the run with the median wall time.
    static func medians(_ cases: [@Sendable (Int) async -> CaseResult], repeats: Int,
                        each: @Sendable (CaseResult) -> Void) async -> [CaseResult] {
        var runs = Array(repeating: [CaseResult](), count: cases.count)
        for round in 1...max(1, repeats) {
            for (i, run) in cases.enumerated() {
                let c = await run(round)
                each(c)
                runs[i].append(c)
            }
        }
        return runs.map { all in
            let sorted = all.sorted { ($0.complete ? 0 : 1, $0.wall) < ($1.complete ? 0 : 1, $1.wall) }
            var kept = sorted[(sorted.count - 1) / 2]
            if all.count > 1 {
                kept.runWalls = all.map(\.wall)
                let ratios = all.compactMap { c in c.makespan.flatMap { mk in c.lowerBound.map { mk / max($0, 1e-9) } } }
                kept.runRatios = ratios.count == all.count ? ratios : nil
                kept.note = (kept.note.map { $0 + "; " } ?? "")
                    + "median of \(all.count) runs (walls \(all.map { f2($0.wall) }.joined(separator: ", ")) s)"
            }
            return kept
        }
    }

    // MARK: - Fanout

    func fanoutRun(bin: String?, package: String? = nil, history: String, reportDir: String, extra: [String]) async
        -> (ProcessResult, FanoutReportFile?) {
        let (r, report, _) = await fanoutRunMeasured(bin: bin, package: package, history: history, reportDir: reportDir,
                                                     extra: extra)
        return (r, report)
    }

    /// `fanoutRun`, and the CPU seconds of the whole command (fanout and every test process it started).
    func fanoutRunMeasured(bin: String?, package: String? = nil, history: String, reportDir: String, extra: [String]) async
        -> (ProcessResult, FanoutReportFile?, Double?) {
        try? FileManager.default.removeItem(atPath: reportDir)
        let product = bin.map { ["--bundle", $0] } ?? ["--package", package ?? "."]
        let (r, cpu) = await Processes.runMeasuringCPU(
            fanout, ["run"] + product + ["--history", history, "--report-dir", reportDir] + extra,
            environment: ["NO_COLOR": "1"], timeout: 900)
        try? (r.stdout + r.stderr).write(toFile: reportDir + ".log", atomically: true, encoding: .utf8)
        return (r, try? FanoutReportFile.read(reportDir + "/report.json"), cpu)
    }

    func fanoutCase(bin: String?, package: String? = nil, history: String, reportDir: String, fleet: String,
                    extra: [String], expected: Int, strategy: String = "fanout",
                    label: String = "Fanout (planner, warm history)") async -> CaseResult {
        let (r, report, cpu) = await fanoutRunMeasured(bin: bin, package: package, history: history, reportDir: reportDir,
                                                       extra: extra)
        var note: String? = r.succeeded ? nil : "fanout ended with \(r.ending)"
        if let report, !report.warnings.isEmpty { note = (note.map { $0 + "; " } ?? "") + report.warnings.joined(separator: "; ") }
        if shape == .mixed, let report {
            let heavy = report.units.filter { $0.suites.contains { $0.contains("." + SuiteGenerator.heavyClass) } }
            if let longest = heavy.map(\.duration).max() {
                note = (note.map { $0 + "; " } ?? "") + "\(SuiteGenerator.heavyClass): \(heavy.count) unit(s), the longest \(f1(longest)) s"
            }
        }
        if let taken = report?.stolenTests, taken > 0 {
            note = (note.map { $0 + "; " } ?? "") + "work stealing: \(taken) tests taken over by idle slots"
        }
        return CaseResult(strategy: strategy, label: label, fleet: fleet,
                          slots: report?.plan.slots ?? slots, wall: r.seconds, makespan: report?.timing.makespan,
                          testTime: report?.testTime, testsPassed: report?.passed ?? 0, testsExpected: expected,
                          processes: report?.units.count, note: note, exitCode: r.exitCode,
                          lowerBound: report?.timing.lowerBound, boundBy: report?.timing.boundBy, cpuSeconds: cpu)
    }

    // MARK: - Static shards

    /// Lists, splits and runs the shards, one process per slot, all at once; wall counts from the listing.
    func staticCase(_ strategy: StaticStrategy, bin: String, classHistory: [String: Double], expected: Int,
                    fleet: LocalFleet?, remoteBin: (@Sendable (Int) -> String)?, computes: Bool = false) async -> CaseResult {
        let t0 = BenchClock.now()
        let listed: [ListedClass]
        do { listed = try await Self.listClasses(bin) } catch {
            return CaseResult(strategy: strategy.rawValue, label: strategy.label, fleet: fleet == nil ? "local" : "ssh",
                              slots: slots, wall: 0, testsPassed: 0, testsExpected: expected, note: "\(error)")
        }
        let shards = strategy.shards(of: listed, shards: fleet?.slots ?? slots, history: classHistory)
        // Local shards of a suite with computing classes (cpu-bound, mixed) are timed with their CPU: the bound of
        // their makespan is taken from this very round, as Fanout's report takes its own: max(CPU / cores, test time /
        // slots, longest test). A reference run's test times, taken under other contention and steal time, can
        // overstate it: cpu-bound's did by 25 %, mixed's by 12 % (a static split's makespan came out at 0.874 × LB).
        let measureCPU = fleet == nil && computes
        let measured = await withTaskGroup(of: (ProcessResult, Double?).self) { group in
            for (i, shard) in shards.enumerated() {
                let selector = shard.map(\.qualified).joined(separator: ",")
                group.addTask {
                    if let fleet, let remoteBin {
                        let agent = i % fleet.agents
                        let (s, args) = fleet.ssh(agent: agent, "exec \(remoteBin(agent)) \(selector)")
                        return (await Processes.run(s, args, timeout: 900), nil)
                    }
                    if measureCPU { return await Processes.runMeasuringCPU(bin, [selector], timeout: 900) }
                    return (await Processes.run(bin, [selector], timeout: 900), nil)
                }
            }
            var out: [(ProcessResult, Double?)] = []
            for await r in group { out.append(r) }
            return out
        }
        let runs = measured.map(\.0)
        let cpu = measured.compactMap(\.1)
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        let end = runs.map(\.ended).max() ?? t0
        let first = runs.map(\.started).min() ?? t0
        let cases = runs.flatMap { XCTestLog.cases(in: $0.stdout) }
        let failed = runs.filter { !$0.succeeded }
        var result = CaseResult(strategy: strategy.rawValue, label: strategy.label, fleet: fleet == nil ? "local" : "ssh",
                                slots: fleet?.slots ?? slots, wall: end - t0, makespan: end - first,
                                testTime: cases.reduce(0) { $0 + $1.seconds },
                                testsPassed: cases.filter { $0.outcome == "passed" }.count, testsExpected: expected,
                                processes: shards.count,
                                note: failed.isEmpty ? nil : "\(failed.count) shard(s) failed: \(failed[0].ending): \(failed[0].tail)")
        if measureCPU, cpu.count == runs.count {
            let total = cpu.reduce(0, +)
            result.cpuSeconds = total
            let terms = [("cpu", total / cores), ("slots", (result.testTime ?? 0) / Double(shards.count)),
                         ("longest test", cases.map(\.seconds).max() ?? 0)]
            let binding = terms.max { $0.1 < $1.1 }!
            result.lowerBound = binding.1
            result.boundBy = binding.0
        }
        return result
    }

    // MARK: - swift test --parallel

    /// `swift test --parallel` as users run it: with `--skip-build` (the prebuilt pair of `fanout run --bundle`), or
    /// with its no-op build (the pair of `fanout run --package`). Its exit code and its xUnit test count are checked.
    func swiftTestParallel(package: String, work: String, expected: Int, build: Bool) async -> CaseResult {
        let xunit = "\(work)/swift-test-parallel\(build ? "-build" : "").xml"
        try? FileManager.default.removeItem(atPath: xunit)
        let (r, cpu) = await Processes.runMeasuringCPU(
            "swift", ["test", "--package-path", package] + (build ? [] : ["--skip-build"])
                + ["--parallel", "--num-workers", String(slots), "--xunit-output", xunit], timeout: 1800)
        let xml = (try? String(contentsOfFile: xunit, encoding: .utf8)) ?? ""
        let testcases = xml.components(separatedBy: "<testcase").count - 1
        let failures = xml.components(separatedBy: "<failure").count - 1
        return CaseResult(strategy: build ? "swift-test-parallel-build" : "swift-test-parallel",
                          label: build ? "`swift test --parallel --num-workers \(slots)` (no-op build included)"
                                       : "swift test --parallel --num-workers \(slots)",
                          fleet: "local", slots: slots, wall: r.seconds, makespan: nil, testTime: nil,
                          testsPassed: max(0, testcases - failures), testsExpected: expected,
                          processes: testcases, note: r.succeeded ? nil : "ended with \(r.ending): \(r.tail)",
                          exitCode: r.exitCode, cpuSeconds: cpu)
    }

    /// Shuffles the recorded class times between classes, and test times between tests (seeded), so every estimate
    /// taken from the history is another class's or test's time: history gone wrong.
    static func shuffleClassTimes(_ path: String, seed: UInt64) async throws {
        var rng = SeededRandom(seed: seed &+ 77)
        let tables = [("class_runs", ["rowid"], "actual"), ("test_attempts", ["run", "destination", "test", "attempt"], "duration")]
        for (table, keys, value) in tables {
            let select = "SELECT \(keys.map { "quote(\($0))" }.joined(separator: ", ")), \(value) FROM \(table) WHERE \(value) IS NOT NULL;"
            let rows = try await Processes.check("sqlite3", ["-separator", "\t", path, select]).stdout
                .split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
                .filter { $0.count == keys.count + 1 }
            var values = rows.map { $0[keys.count] }
            values.shuffle(using: &rng)
            let updates = zip(rows, values).map { row, v in
                "UPDATE \(table) SET \(value) = \(v) WHERE "
                    + zip(keys, row).map { "\($0) = \($1)" }.joined(separator: " AND ") + ";"
            }
            // One argument may hold 128 KiB at most: the statements go through a file.
            let script = path + ".\(table).sql"
            try ("BEGIN;\n" + updates.joined(separator: "\n") + "\nCOMMIT;\n").write(toFile: script, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: script) }
            try await Processes.check("sqlite3", [path, ".read \(script)"])
        }
    }

    /// The 1-minute load average.
    static func loadAverage() -> Double {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return Double(text.split(separator: " ").first ?? "") ?? 0
    }

    // MARK: - Discovery

    /// `BIN --list-tests`: `Module.Class/test` lines after a header, in binary order.
    static func listClasses(_ bin: String) async throws -> [ListedClass] {
        let r = try await Processes.check(bin, ["--list-tests"], timeout: 120)
        var order: [String] = []
        var counts: [String: Int] = [:]
        for line in r.stdout.split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/"), !line.hasPrefix("Listing") else { continue }
            let qualified = String(line[..<slash])
            if counts[qualified] == nil { order.append(qualified) }
            counts[qualified, default: 0] += 1
        }
        return order.map { q in
            guard let dot = q.firstIndex(of: ".") else { return ListedClass(module: "", name: q, tests: counts[q] ?? 0) }
            return ListedClass(module: String(q[..<dot]), name: String(q[q.index(after: dot)...]), tests: counts[q] ?? 0)
        }
    }
}

func f1(_ x: Double) -> String { String(format: "%.1f", x) }
func f2(_ x: Double) -> String { String(format: "%.2f", x) }
func f3(_ x: Double) -> String { String(format: "%.3f", x) }
