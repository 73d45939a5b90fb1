import ArgumentParser
import FanoutCore
import Foundation

/// `fanout-bench queue-jobs`: a CI build of N jobs on one suite, the jobs started apart (0, 5, 10 and 20 s by default)
/// and one of them slow, run in queue mode (`fanout run --queue`, against a real PostgreSQL: scripts/bench.sh
/// --queue-jobs starts a private one) and as static shards from the same warm history (`fanout run --shard I/N`);
/// then both again with one job killed (SIGKILL to it and every process it started: a machine lost) at half the
/// bound. Every makespan is set against the bound of that build's capacity: the least time in which the jobs' slots,
/// from the moment each started (at the speed of each, until a killed one died), could have run the suite's work.
struct QueueJobsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue-jobs",
        abstract: "Queue mode against static shards: jobs started apart, one slow, one killed; makespans against the bound.")

    @OptionGroup var common: CommonBenchOptions
    @Option(help: "The queue (postgres://USER@HOST:PORT/DATABASE); the password from PGPASSWORD or PGPASSFILE.")
    var url: String
    @Option(help: ArgumentHelp("A generated suite's shape, or a real package's name (\(RealPackage.all.map(\.name).joined(separator: ", "))); repeatable.", valueName: "suite"))
    var suite: [String] = ["lognormal", "GRDB.swift"]
    @Option(help: "CI jobs in the build.")
    var jobs = 4
    @Option(help: "Local slots of every job.")
    var slots = 2
    @Option(help: "Seconds after the first job at which each job starts (comma-separated, one per job).")
    var stagger = "0,5,10,20"
    @Option(help: ArgumentHelp("The slow job (1-based; 0: none): a generated suite's tests wait twice as long there "
        + "(BENCH_TIME_SCALE=2); a real suite's job has half the slots."))
    var slow = 4
    @Option(help: "The job killed in the killed cases (1-based).")
    var killed = 2
    @Option(help: ArgumentHelp("Seconds a job's reservation lasts unless renewed (queue: lease; Fanout's default is 30): "
        + "how long a killed job's items wait before another job takes them."))
    var lease = 10.0
    @Option(help: "Rounds of every case; figures are medians with their ranges.")
    var repeats = 3
    @Option(help: "Where to write the results (JSON).")
    var json: String?

    mutating func run() async throws {
        Interrupts.install()
        let offsets = stagger.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard offsets.count == jobs, jobs >= 2, (0...jobs).contains(slow), (1...jobs).contains(killed) else {
            throw ValidationError("--stagger needs one offset per job (\(jobs)), --slow 0…\(jobs), --killed 1…\(jobs)")
        }
        var results: [QueueJobsResult] = []
        for name in suite {
            let prepared = try await QueueJobsSuite.prepare(name, dir: common.dir + "/queue-jobs", realDir: common.dir + "/real")
            let bench = QueueJobsRun(suite: prepared, fanout: common.fanout, url: url, jobs: jobs, slots: slots,
                                     offsets: offsets, slow: slow, killed: killed, lease: lease, repeats: repeats,
                                     work: common.dir + "/queue-jobs/work/" + prepared.name)
            let result = try await bench.run()
            print(result.table)
            results.append(result)
            if let json { try JSONFiles.write(results, to: json) } // each suite's as soon as it is measured
        }
    }
}

/// A suite built and ready: its test product, what its runs leave out and need.
struct QueueJobsSuite: Sendable {
    var name: String
    var bin: String
    var tests: Int
    var skip: [String]
    /// TMPDIR for every run (a real suite whose files sync to disk), or nil.
    var tmpdir: String?
    /// Whether its tests read BENCH_TIME_SCALE (generated suites): then a slow job's tests wait longer.
    var scalable: Bool

    /// A generated suite is written and built under `dir`; a real package is cloned and built under `realDir` (where
    /// `fanout-bench real` keeps it too: one clone and build for both).
    static func prepare(_ name: String, dir: String, realDir: String) async throws -> QueueJobsSuite {
        if let shape = SuiteShape(rawValue: name) {
            let suite = SuiteGenerator.make(shape: shape, seed: 1)
            let package = "\(dir)/suites/\(shape.rawValue)"
            try SuiteGenerator.write(suite, to: URL(fileURLWithPath: package))
            progress("\(name): building \(package)")
            _ = try await Processes.check("swift", ["build", "--build-tests", "--package-path", package], timeout: 1800)
            let binDir = try await Processes.check("swift", ["build", "--build-tests", "--package-path", package, "--show-bin-path"])
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            return QueueJobsSuite(name: name, bin: "\(binDir)/\(suite.packageName)PackageTests.xctest", tests: suite.methodCount,
                                  skip: [], tmpdir: nil, scalable: true)
        }
        guard let package = RealPackage.all.first(where: { $0.name == name || $0.name.split(separator: ".").first.map(String.init) == name }) else {
            throw ValidationError("no suite \(name): a shape (\(SuiteShape.allCases.map(\.rawValue).joined(separator: ", "))) "
                + "or a package (\(RealPackage.all.map(\.name).joined(separator: ", ")))")
        }
        let real = RealSuiteBench(package: package, dir: realDir, fanout: "", slots: 1, repeats: 1, oracleRounds: 1)
        let commit = try await real.checkout()
        progress("\(name) \(package.tag) (\(commit.prefix(12))): building \(real.source)")
        _ = try await Processes.check("swift", ["build", "--build-tests", "--package-path", real.source], timeout: 3600)
        let bin = try await real.testBundle()
        let listed = try await SuiteBench.listClasses(bin)
        return QueueJobsSuite(name: "\(name) \(package.tag)", bin: bin, tests: listed.reduce(0) { $0 + $1.tests },
                              skip: package.skip, tmpdir: package.tmpfs == nil ? nil : "/dev/shm/fanout-bench-queue/\(name)",
                              scalable: false)
    }
}

/// One suite's cases, `repeats` rounds of each.
struct QueueJobsRun: Sendable {
    var suite: QueueJobsSuite
    var fanout: String
    var url: String
    var jobs: Int
    var slots: Int
    var offsets: [Double]
    var slow: Int
    var killed: Int
    var lease: Double
    var repeats: Int
    var work: String

    /// One job: when it starts, its slots and their speed (1: normal), and the environment of its tests.
    struct Job: Sendable {
        var index: Int
        var start: Double
        var slots: Int
        var speed: Double
        var environment: [String: String]
    }

    var plannedJobs: [Job] {
        (1...jobs).map { j in
            let isSlow = j == slow
            return Job(index: j, start: offsets[j - 1],
                       slots: isSlow && !suite.scalable ? max(1, slots / 2) : slots,
                       speed: isSlow ? 0.5 : 1,
                       environment: isSlow && suite.scalable ? ["BENCH_TIME_SCALE": "2"] : [:])
        }
    }

    func run() async throws -> QueueJobsResult {
        let fm = FileManager.default
        try? fm.removeItem(atPath: work)
        try fm.createDirectory(atPath: work, withIntermediateDirectories: true)
        if let tmp = suite.tmpdir {
            try? fm.removeItem(atPath: tmp)
            try fm.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        }
        // The warm history every job starts from: one run of the whole suite on as many slots as the build has.
        let history = "\(work)/warm.sqlite"
        let warm = await Processes.run(fanout, ["run", "--bundle", suite.bin, "--history", history, "--report-dir", "\(work)/warm",
                                                "--slots", String(jobs * slots)] + skipArguments,
                                       environment: environment([:]), timeout: 1800)
        let reference = try FanoutReportFile.read("\(work)/warm/report.json")
        guard warm.exitCode == 0 || warm.exitCode == 1 else { throw BenchError("the warm-up run failed (\(warm.ending)):\n\(warm.tail)") }
        let testTime = reference.results.compactMap(\.duration).reduce(0, +)
        let longest = reference.results.compactMap(\.duration).max() ?? 0
        progress("\(suite.name): warm-up \(f1(warm.seconds)) s; \(reference.results.count) tests, \(f1(testTime)) s of test time, the longest \(f2(longest)) s")

        var rounds: [QueueJobsRound] = []
        for round in 1...max(1, repeats) {
            var r = QueueJobsRound()
            r.queue = try await one(.queue, kill: false, round: round, history: history, work: testTime, longest: longest)
            r.staticShards = try await one(.staticShards, kill: false, round: round, history: history, work: testTime, longest: longest)
            r.queueKilled = try await one(.queue, kill: true, round: round, history: history, work: testTime, longest: longest)
            r.staticKilled = try await one(.staticShards, kill: true, round: round, history: history, work: testTime, longest: longest)
            rounds.append(r)
        }
        if let tmp = suite.tmpdir { try? fm.removeItem(atPath: tmp) }
        return QueueJobsResult(suite: suite.name, tests: reference.results.count, testTime: testTime, longestTest: longest, lease: lease,
                               jobs: plannedJobs.map { QueueJobsResult.JobShape(start: $0.start, slots: $0.slots, speed: $0.speed) },
                               killed: killed, rounds: rounds, loadAverage: SuiteBench.loadAverage())
    }

    enum Mode: String { case queue, staticShards = "static" }

    var skipArguments: [String] { suite.skip.flatMap { ["--skip", $0] } }

    func environment(_ extra: [String: String]) -> [String: String] {
        var env = ["NO_COLOR": "1"].merging(extra) { $1 }
        if let tmp = suite.tmpdir { env["TMPDIR"] = tmp }
        return env
    }

    /// The least time in which the jobs' slots could have run `work` seconds of tests: each job's slots from its
    /// start, at its speed, until it was killed; and never before the first start plus the longest test.
    static func bound(_ jobs: [Job], work: Double, longest: Double, killedAt: [Int: Double] = [:]) -> Double {
        func capacity(_ t: Double) -> Double {
            jobs.reduce(0) { sum, j in sum + Double(j.slots) * j.speed * max(0, min(t, killedAt[j.index] ?? t) - j.start) }
        }
        var low = 0.0, high = 1.0
        while capacity(high) < work, high < 1e7 { high *= 2 }
        for _ in 0..<60 {
            let mid = (low + high) / 2
            if capacity(mid) >= work { high = mid } else { low = mid }
        }
        return max(high, (jobs.map(\.start).min() ?? 0) + longest)
    }

    private func one(_ mode: Mode, kill: Bool, round: Int, history: String, work: Double, longest: Double) async throws -> QueueJobsCase {
        let label = "\(mode.rawValue)\(kill ? "-killed" : "")-\(round)"
        let folder = "\(self.work)/\(label)"
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let build = "bench-\(label)-\(UUID().uuidString.prefix(8))"
        let planned = plannedJobs
        let killAt = kill ? Self.bound(planned, work: work, longest: longest) / 2 : nil
        // The lease comes from a config file (there is no flag for it), as a CI job's fanout.yml would give it.
        try "queue:\n  url: \(url)\n  lease: \(lease)\n".write(toFile: "\(folder)/fanout.yml", atomically: true, encoding: .utf8)
        let t0 = BenchClock.now()
        let ends = try await withThrowingTaskGroup(of: (Int, Double, Int32?).self) { group in
            for job in planned {
                let jobHistory = "\(folder)/history-\(job.index).sqlite"
                try FileManager.default.copyItem(atPath: history, toPath: jobHistory)
                var arguments = ["run", "--bundle", suite.bin, "--history", jobHistory, "--report-dir", "\(folder)/job-\(job.index)",
                                 "--slots", String(job.slots), "--no-record", "--shard", "\(job.index)/\(jobs)"] + skipArguments
                if mode == .queue {
                    arguments += ["--queue", url, "--build-id", build, "--worker", String(job.index), "--config", "\(folder)/fanout.yml"]
                }
                let env = environment(job.environment)
                let killThis = kill && job.index == killed ? killAt : nil
                group.addTask {
                    try await Task.sleep(for: .seconds(job.start))
                    let r = await QueueJobsProcess.run(fanout, arguments, environment: env, killAfter: killThis.map { max(0, $0 - job.start) })
                    return (job.index, r.ended - t0, r.exitCode)
                }
            }
            return try await group.reduce(into: [Int: (Double, Int32?)]()) { $0[$1.0] = ($1.1, $1.2) }
        }
        // What the build completed: the queue's merged report, or the static shards' reports together.
        var completed = 0
        var reportSeconds: Double?
        if mode == .queue {
            let r = await Processes.run(fanout, ["queue", "report", "--queue", url, "--build-id", build, "--wait", "120",
                                                 "--out", "\(folder)/merged", "--no-record"], environment: environment([:]), timeout: 300)
            reportSeconds = r.seconds
            let merged = try? FanoutReportFile.read("\(folder)/merged/report.json")
            completed = merged?.results.filter { $0.outcome != "not-run" }.count ?? 0
        } else {
            var seen = Set<String>()
            for job in planned {
                guard let report = try? FanoutReportFile.read("\(folder)/job-\(job.index)/report.json") else { continue }
                for r in report.results where r.outcome != "not-run" { seen.insert("\(r.id.suite.qualified)/\(r.id.name)") }
            }
            completed = seen.count
        }
        let alive = planned.filter { !(kill && $0.index == killed) }
        let finishes = alive.compactMap { ends[$0.index]?.0 }
        let makespan = finishes.max() ?? 0
        let bound = Self.bound(planned, work: work, longest: longest,
                               killedAt: kill ? [killed: killAt ?? 0] : [:])
        let c = QueueJobsCase(makespan: makespan, bound: bound, finishSpread: (finishes.max() ?? 0) - (finishes.min() ?? 0),
                              finishes: planned.map { ends[$0.index]?.0 ?? 0 }, exitCodes: planned.map { ends[$0.index]?.1 ?? -1 },
                              completed: completed, reportSeconds: reportSeconds)
        progress("\(suite.name) \(label): makespan \(f2(makespan)) s (\(f2(makespan / bound)) × bound \(f2(bound)) s), "
            + "jobs ended at \(c.finishes.map(f1).joined(separator: ", ")) s (exit \(c.exitCodes.map(String.init).joined(separator: ", "))), "
            + "\(completed) tests completed")
        return c
    }
}

/// A job process that can be killed as a machine dies: SIGKILL to it and to every process it started.
enum QueueJobsProcess {
    static func run(_ executable: String, _ arguments: [String], environment: [String: String], killAfter: Double?) async -> ProcessResult {
        guard let killAfter else { return await Processes.run(executable, arguments, environment: environment, timeout: 1800) }
        let marker = "fanout-bench-job-\(UUID().uuidString)"
        let killer = Task {
            try? await Task.sleep(for: .seconds(killAfter))
            // The job's process: the topmost one whose environment holds the marker (its tests inherit it); then every
            // descendant of it.
            let holders = processes().filter { environmentHolds($0.pid, marker) }
            let pids = Set(holders.map(\.pid))
            guard let pid = holders.first(where: { !pids.contains($0.parent) })?.pid else { return }
            let tree = descendants(of: pid)
            kill(pid, SIGKILL)
            for child in tree { kill(child, SIGKILL) }
        }
        let r = await Processes.run(executable, arguments, environment: environment.merging(["FANOUT_BENCH_JOB": marker]) { $1 },
                                    timeout: 1800)
        killer.cancel()
        return r
    }

    static func processes() -> [(pid: Int32, parent: Int32)] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { name in
            guard let pid = Int32(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, let parent = Int32(fields[1]) else { return nil }
            return (pid, parent)
        }
    }

    static func environmentHolds(_ pid: Int32, _ marker: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
        return String(decoding: data, as: UTF8.self).contains(marker)
    }

    static func descendants(of root: Int32) -> [Int32] {
        let table = processes()
        var found: [Int32] = [], frontier = [root]
        while let p = frontier.popLast() {
            for child in table where child.parent == p {
                found.append(child.pid)
                frontier.append(child.pid)
            }
        }
        return found
    }
}

struct QueueJobsCase: Codable, Sendable {
    /// Seconds from the first job's start to the last living job's end.
    var makespan: Double
    var bound: Double
    /// Seconds between the first and the last living job's end.
    var finishSpread: Double
    var finishes: [Double]
    var exitCodes: [Int32]
    /// Tests with a verdict in the build's result (the queue's merged report; the static shards' reports together).
    var completed: Int
    /// `fanout queue report`'s own time, once the jobs ended (queue mode).
    var reportSeconds: Double?
}

struct QueueJobsRound: Codable, Sendable {
    var queue: QueueJobsCase?
    var staticShards: QueueJobsCase?
    var queueKilled: QueueJobsCase?
    var staticKilled: QueueJobsCase?
}

struct QueueJobsResult: Codable, Sendable {
    struct JobShape: Codable, Sendable {
        var start: Double
        var slots: Int
        var speed: Double
    }

    var suite: String
    var tests: Int
    var testTime: Double
    var longestTest: Double
    var lease: Double
    var jobs: [JobShape]
    var killed: Int
    var rounds: [QueueJobsRound]
    var loadAverage: Double

    var table: String {
        func spread(_ pick: (QueueJobsRound) -> Double?) -> String {
            Spread(rounds.compactMap(pick)).map { $0.text(f2) } ?? "—"
        }
        let shape = jobs.enumerated().map { "job \($0.offset + 1) at \(f1($0.element.start)) s, \($0.element.slots) slots\($0.element.speed < 1 ? " at half speed" : "")" }
            .joined(separator: "; ")
        return """

            Queue mode against static shards: \(suite), \(tests) tests, \(f1(testTime)) s of test time (the longest \(f2(longestTest)) s); \(rounds.count) rounds, median (min–max)
              jobs: \(shape); queue lease \(f1(lease)) s (a killed job's items go to others once it lapses)
              | case | makespan (s) | × bound | jobs' ends apart (s) | tests completed |
              |---|---|---|---|---|
              | queue mode | \(spread { $0.queue?.makespan }) | \(spread { $0.queue.map { $0.makespan / $0.bound } }) | \(spread { $0.queue?.finishSpread }) | \(spread { $0.queue.map { Double($0.completed) } }) of \(tests) |
              | static shards (history) | \(spread { $0.staticShards?.makespan }) | \(spread { $0.staticShards.map { $0.makespan / $0.bound } }) | \(spread { $0.staticShards?.finishSpread }) | \(spread { $0.staticShards.map { Double($0.completed) } }) of \(tests) |
              | queue mode, job \(killed) killed at half the bound | \(spread { $0.queueKilled?.makespan }) | \(spread { $0.queueKilled.map { $0.makespan / $0.bound } }) | \(spread { $0.queueKilled?.finishSpread }) | \(spread { $0.queueKilled.map { Double($0.completed) } }) of \(tests) |
              | static shards, job \(killed) killed | \(spread { $0.staticKilled?.makespan }) | \(spread { $0.staticKilled.map { $0.makespan / $0.bound } }) | \(spread { $0.staticKilled?.finishSpread }) | \(spread { $0.staticKilled.map { Double($0.completed) } }) of \(tests) |
              static / queue makespan: \(spread { r in r.queue.flatMap { q in r.staticShards.map { $0.makespan / q.makespan } } })×; `fanout queue report` after the jobs: \(spread { $0.queue?.reportSeconds }) s; load average \(f2(loadAverage))
            """
    }
}
