import FanoutCore
import FanoutQueue
import FanoutTestSupport
import Foundation
import Testing

/// Queue mode end to end: several `fanout run --queue` processes, as the jobs of one CI build, on the demo suite,
/// against a private PostgreSQL server (every job on local slots). What counts is what the queue recorded: every test
/// of the suite exactly once, with the outcome an unsharded run gives it.
@Suite(.serialized, .timeLimit(.minutes(10))) struct QueueModeTests {
    static let server = Task { () throws -> PrivatePostgres in try await PrivatePostgres.start() }

    struct Build {
        let dir: TempDir
        let repo: String
        let server: PrivatePostgres
        let id = "test-build-" + UUID().uuidString.prefix(8)
        var env: [String: String] { ["PGPASSFILE": (try? server.passwordFile()) ?? ""] }

        /// `fanout run` arguments of job `worker`.
        func arguments(_ worker: String) -> [String] {
            ["run", "--queue", server.url(), "--build-id", id, "--worker", worker, "--no-record",
             "--report-dir", dir.file("reports-\(worker)")]
        }
    }

    /// A repository of the built demo suite: its quick classes, 2 slots a job, a `lease` of 3 s. `flaky`: with
    /// RetryableFetchTests, whose testFetchWithFlakyBackend fails its first run of the build and passes after.
    func build(lease: Int = 3, flaky: Bool = false, failing: Bool = false, latencyScale: String? = nil,
               server own: PrivatePostgres? = nil) async throws -> Build {
        let server = if let own { own } else { try await Self.server.value }
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        // CIExampleTests' repository (the demo suite's quick classes, 2 slots), with the queue.
        let repo = try CIExampleTests().repository(in: dir, bundle: bundle,
                                                     environment: (flaky ? ", DEMO_FLAKY_DIR: \"\(dir.file("flaky"))\"" : "")
                                                        + (failing ? ", DEMO_ST_FAIL: \"1\"" : ""))
        var config = try String(contentsOfFile: repo + "/fanout.yml", encoding: .utf8)
        if flaky { config = config.replacingOccurrences(of: ", \"RetryableFetch\"", with: "") }
        if let latencyScale { config = config.replacingOccurrences(of: "DEMO_LATENCY_SCALE: \"0.05\"", with: "DEMO_LATENCY_SCALE: \"\(latencyScale)\"") }
        try (config + "queue:\n  url: \(server.url())\n  lease: \(lease)\n")
            .write(toFile: repo + "/fanout.yml", atomically: true, encoding: .utf8)
        return Build(dir: dir, repo: repo, server: server)
    }

    /// `fanout queue report` of the build into `folder`: its exit code, output and report.
    func queueReport(_ b: Build, folder: String = "merged", wait: Int = 240) async throws -> (Int32, String, RunReport?) {
        let (code, out, err) = try await runCLI(["queue", "report", "--build-id", b.id, "--wait", "\(wait)", "--out", b.dir.file(folder),
                                                 "--history", b.dir.file("merged.sqlite")], cwd: b.repo, env: b.env)
        let report = try? JSONConventions.decoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: b.dir.file(folder + "/report.json"))))
        return (code, out + err, report)
    }

    /// A job started as its own process, its output gathered.
    final class Job: Sendable {
        let process: Process
        let output = OutputBox()

        init(_ b: Build, _ worker: String, extra: [String] = []) throws {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: try fanoutExecutable())
            p.arguments = b.arguments(worker) + extra
            p.currentDirectoryURL = URL(fileURLWithPath: b.repo)
            p.environment = ProcessInfo.processInfo.environment.merging(b.env) { $1 }
            let pipe = Pipe()
            p.standardOutput = pipe
            p.standardError = pipe
            let output = output
            pipe.fileHandleForReading.readabilityHandler = { output.append($0.availableData) }
            try p.run()
            process = p
        }

        /// Waits (at most `seconds`) until the job prints `text`; false when it ended or the time ran out first.
        func waitFor(_ text: String, seconds: Double = 120) async throws -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning, !output.text.contains(text), Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            return output.text.contains(text)
        }

        /// Its exit code, once it ended (at most `seconds`; killed past them).
        func exitCode(seconds: Double = 240) async throws -> Int32 {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    /// "destination Module.Class/test outcome" of a report's results.
    func outcomes(_ report: RunReport?) -> [String] {
        (report?.results ?? []).map { "\($0.destination) \($0.id) \($0.outcome.rawValue)" }.sorted()
    }

    func jobReport(_ b: Build, _ worker: String) throws -> RunReport {
        try JSONConventions.decoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: b.dir.file("reports-\(worker)/report.json"))))
    }

    /// "destination Module.Class/test outcome" for every result of an unsharded run of the repository.
    func reference(_ b: Build) async throws -> [String] {
        let (code, out, err) = try await runCLI(["run", "--no-record", "--report-dir", b.dir.file("ref")], cwd: b.repo)
        #expect(code == 0, "\(out)\(err)")
        let report = try JSONConventions.decoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: b.dir.file("ref/report.json"))))
        return report.results.map { "\($0.destination) \($0.id) \($0.outcome.rawValue)" }.sorted()
    }

    /// What the queue recorded for the build, as the reference has it; and the tests recorded more than once.
    func recorded(_ b: Build) async throws -> (outcomes: [String], twice: [String]) {
        let q = PostgresQueue(try QueueLocation(b.server.url()))
        _ = try b.server.passwordFile() // PGPASSFILE, for this process's own connection
        try await q.open()
        let results = try await q.results(QueueBuild(id: b.id, fingerprint: ""))
        await q.close()
        let decoded = try results.map { try JSONConventions.decoder().decode(TestResult.self, from: Data($0.payload.utf8)) }
        let keys = decoded.map { "\($0.destination) \($0.id)" }
        let twice = Dictionary(grouping: keys, by: { $0 }).filter { $0.value.count > 1 }.map(\.key)
        return (decoded.map { "\($0.destination) \($0.id) \($0.outcome.rawValue)" }.sorted(), twice)
    }

    @Test func threeJobsStartedApartShareTheQueueAndEveryTestIsRecordedOnce() async throws {
        let b = try await build()
        let expected = try await reference(b)
        #expect(expected.count > 20)
        // The report step starts first: it waits for the build to appear, to be drained and for its jobs' reports.
        let reporting = Task { try await queueReport(b) }
        let outputs = try await withThrowingTaskGroup(of: (String, Int32, String).self) { group in
            for (i, worker) in ["1", "2", "3"].enumerated() {
                group.addTask {
                    try await Task.sleep(for: .milliseconds(700 * i)) // jobs start apart, as CI jobs do
                    let (code, out, err) = try await runCLI(b.arguments(worker), cwd: b.repo, env: b.env)
                    return (worker, code, out + err)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for (worker, code, output) in outputs { #expect(code == 0, "job \(worker): \(output.suffix(3000))") }
        #expect(outputs.filter { $0.2.contains("seeded build") }.count == 1, "one job seeded the build")
        let (outcomes, twice) = try await recorded(b)
        #expect(twice.isEmpty, "recorded twice: \(twice)")
        #expect(outcomes == expected, "the queue's results are the unsharded run's")
        // Each job's own report holds its share: together, every test once.
        var shares: [String] = []
        for worker in ["1", "2", "3"] {
            let report = try JSONConventions.decoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: b.dir.file("reports-\(worker)/report.json"))))
            shares += report.results.map { "\($0.destination) \($0.id) \($0.outcome.rawValue)" }
        }
        #expect(shares.sorted() == expected, "the jobs' reports share the suite out, every test once")
        // The merged report: every test once, the unsharded run's outcomes, each job's agents, recorded in a history.
        let (code, reportOutput, merged) = try await reporting.value
        #expect(code == 0, "\(reportOutput.suffix(3000))")
        #expect(self.outcomes(merged) == expected)
        #expect(Set(merged?.agents.map(\.name) ?? []).count == 3, "the three jobs' agents: \(merged?.agents.map(\.name) ?? [])")
        #expect((merged?.classes.count ?? 0) > 5 && merged?.classes.allSatisfy { $0.actual != nil } == true, "every class timed")
        for format in ["junit.xml", "summary.md", "report.html"] {
            #expect(FileManager.default.fileExists(atPath: b.dir.file("merged/" + format)), "\(format) written")
        }
        let (hc, history, he) = try await runCLI(["history", "show", "--history", b.dir.file("merged.sqlite")], cwd: b.repo)
        #expect(hc == 0 && history.contains("queue-\(b.id)"), "the merged run is in the history: \(history)\(he)")
    }

    @Test func aJobWhoseEverySlotFailsItsSetUpEndsAndLeavesItsWorkToOtherJobs() async throws {
        let b = try await build()
        let config = b.repo + "/fanout.yml"
        try (String(contentsOfFile: config, encoding: .utf8) + "hooks:\n  slot:\n    set_up: echo no database >&2; exit 1\n")
            .write(toFile: config, atomically: true, encoding: .utf8)
        // Its only agent takes no work: the job ends (exit 3) without taking any, rather than wait for a slot forever.
        let job = try Job(b, "1")
        let code = try await job.exitCode(seconds: 120)
        #expect(job.process.terminationReason == .exit && code == 3, "\(job.output.text.suffix(3000))")
        let report = try jobReport(b, "1")
        #expect(report.results.isEmpty, "\(outcomes(report))")
        #expect(report.warnings.contains { $0.contains("set-up failed (exit 1): no database") })
        // Everything is still in the queue: a job that can set its slots up runs all of it.
        try (try String(contentsOfFile: config, encoding: .utf8)).replacingOccurrences(of: "exit 1", with: "true")
            .write(toFile: config, atomically: true, encoding: .utf8)
        let second = try Job(b, "2")
        #expect(try await second.exitCode(seconds: 180) == 0, "\(second.output.text.suffix(3000))")
        let all = try jobReport(b, "2")
        #expect(all.results.count > 20 && all.results.allSatisfy { $0.outcome != .notRun }, "\(outcomes(all))")
    }

    @Test func jobsStarted0_5_10And20SecondsApartFinishWithinOneWorkItemOfEachOther() async throws {
        // The demo's quick classes at twice their latency (about a minute of waiting), one slot a job: the first
        // three jobs cannot drain it before the fourth starts.
        let b = try await build(latencyScale: "2")
        let origin = Date()
        let ends = try await withThrowingTaskGroup(of: (String, Int32, String, Double).self) { group in
            for (worker, start) in [("1", 0.0), ("2", 5), ("3", 10), ("4", 20)] {
                group.addTask {
                    try await Task.sleep(for: .seconds(start))
                    let (code, out, err) = try await runCLI(b.arguments(worker) + ["--slots", "1"], cwd: b.repo, env: b.env)
                    return (worker, code, out + err, Date().timeIntervalSince(origin))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for (worker, code, output, _) in ends { #expect(code == 0, "job \(worker): \(output.suffix(2000))") }
        let (rc, reportOutput, merged) = try await queueReport(b, wait: 60)
        #expect(rc == 0, "every test of the build completed: \(reportOutput.suffix(2000))")
        let report = try #require(merged)
        // The last job's share was not empty: it started while work was still queued.
        #expect(try !jobReport(b, "4").results.isEmpty, "job 4 (started at 20 s) took work")
        // One work item: the longest unit any job ran, and 3 s for a job to see the queue drained (it looks every
        // second when idle) and write its report.
        let longestItem = report.units.map(\.duration).max() ?? 0
        let times = ends.map(\.3)
        let spread = (times.max() ?? 0) - (times.min() ?? 0)
        #expect(spread <= longestItem + 3, "jobs ended \(ends.map { "\($0.0) at \(String(format: "%.1f", $0.3)) s" }) — \(String(format: "%.1f", spread)) s apart; the longest item \(String(format: "%.1f", longestItem)) s")
    }

    @Test func aServerLostMidRunIsRetriedThenTheJobFinishesWhatItHoldsAndSaysSo() async throws {
        let server = try await PrivatePostgres.start() // its own: stopped mid-run
        defer { server.stop() }
        let b = try await build(latencyScale: "0.5", server: server)
        let job = try Job(b, "1")
        try #require(try await job.waitFor("started on"), "the job ran tests: \(job.output.text.suffix(2000))")
        server.stop()
        let code = try await job.exitCode(seconds: 180)
        let output = job.output.text
        #expect(code == 0, "what it held ran to its verdicts: \(output.suffix(3000))")
        #expect(output.contains("trying again in"), "it retried with back-off: \(output.suffix(3000))")
        #expect(output.contains("queue mode stopped taking work"), "and said when it gave up: \(output.suffix(3000))")
        let report = try jobReport(b, "1")
        #expect(!report.results.isEmpty && report.results.allSatisfy { $0.outcome != .notRun }, "\(report.results.map(\.outcome))")
        #expect(report.warnings.contains { $0.contains("queue mode stopped taking work") }, "\(report.warnings)")
    }

    @Test func aJobKilledMidRunLosesNothing() async throws {
        // A lease longer than the work job 2 finds queued: it must wait for job 1's leases to lapse, then run that too.
        let b = try await build(lease: 12)
        let expected = try await reference(b)
        // Job 1 starts alone and is SIGKILLed once it runs tests; job 2 then takes what job 1 held once its leases lapse.
        let first = Process()
        first.executableURL = URL(fileURLWithPath: try fanoutExecutable())
        first.arguments = b.arguments("1")
        first.currentDirectoryURL = URL(fileURLWithPath: b.repo)
        first.environment = ProcessInfo.processInfo.environment.merging(b.env) { $1 }
        let pipe = Pipe()
        first.standardOutput = pipe
        first.standardError = pipe
        let output = OutputBox()
        pipe.fileHandleForReading.readabilityHandler = { output.append($0.availableData) }
        try first.run()
        let deadline = Date().addingTimeInterval(120)
        while first.isRunning, !output.text.contains("started on"), Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        try #require(first.isRunning && output.text.contains("started on"), "job 1 ran tests: \(output.text.suffix(2000))")
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        pipe.fileHandleForReading.readabilityHandler = nil

        let (code, out, err) = try await runCLI(b.arguments("2"), cwd: b.repo, env: b.env)
        #expect(code == 0, "job 2: \((out + err).suffix(3000))")
        let (outcomes, twice) = try await recorded(b)
        #expect(twice.isEmpty, "recorded twice: \(twice)")
        #expect(outcomes == expected, "nothing the killed job held was lost: \(Set(expected).subtracting(outcomes).sorted())")
        let (rc, reportOutput, merged) = try await queueReport(b, wait: 30)
        #expect(rc == 0, "\(reportOutput.suffix(2000))")
        #expect(self.outcomes(merged) == expected, "the merged report has every test once")
    }

    @Test func aJobFrozenPastItsLeaseComesBackAndCountsNothingTwice() async throws {
        let b = try await build(lease: 3)
        let expected = try await reference(b)
        let first = try Job(b, "1")
        try #require(try await first.waitFor("started on"), "job 1 ran tests: \(first.output.text.suffix(2000))")
        kill(first.process.processIdentifier, SIGSTOP)
        defer { kill(first.process.processIdentifier, SIGCONT) }
        // Job 2 takes over what job 1 holds once its leases lapse; job 1 is thawed only then.
        let second = try Job(b, "2")
        let q = PostgresQueue(try QueueLocation(b.server.url()))
        _ = try b.server.passwordFile()
        try await q.open()
        let deadline = Date().addingTimeInterval(120)
        var taken = false
        while !taken, Date() < deadline {
            let items = try await q.items(QueueBuild(id: b.id, fingerprint: ""))
            let everReservedBy1 = items.contains { $0.worker == "1" }
            taken = !items.isEmpty && everReservedBy1 == false
            if !taken { try await Task.sleep(for: .milliseconds(100)) }
        }
        await q.close()
        try #require(taken, "job 2 took over every item job 1 held")
        kill(first.process.processIdentifier, SIGCONT)
        let c1 = try await first.exitCode(), c2 = try await second.exitCode()
        #expect(c2 == 0, "job 2: \(second.output.text.suffix(2000))")
        #expect(c1 == 0, "job 1: \(first.output.text.suffix(2000))")
        #expect(first.output.text.contains("lease lapsed"), "job 1 says its late results do not count: \(first.output.text.suffix(2000))")
        let (outcomes, twice) = try await recorded(b)
        #expect(twice.isEmpty, "recorded twice: \(twice)")
        #expect(outcomes == expected)
        let (rc, output, merged) = try await queueReport(b, wait: 30)
        #expect(rc == 0, "\(output.suffix(2000))")
        #expect(self.outcomes(merged) == expected, "the merged report has every test once")
    }

    @Test func aFailureGoesBackToTheQueueForAnotherJobAndPassesThereAsFlaky() async throws {
        let b = try await build(flaky: true)
        let flaky = "IntegrationTests.RetryableFetchTests/testFetchWithFlakyBackend"
        let jobs = try ["1", "2"].map { try Job(b, $0, extra: ["--retries", "1"]) }
        var codes: [Int32] = []
        for job in jobs { codes.append(try await job.exitCode()) }
        let log = jobs.map { $0.output.text.suffix(2500) }.joined(separator: "\n---\n")
        // The job that failed it queued it again: its own exit code does not count that failure.
        #expect(codes == [0, 0], "\(log)")
        #expect(log.contains("queued again for another job"), "\(log)")
        let (rc, output, merged) = try await queueReport(b, wait: 30)
        #expect(rc == 0, "the build's verdict: green with a flaky test: \(output.suffix(2000))")
        let result = merged?.results.first { "\($0.id)" == flaky }
        #expect(result?.outcome == .flaky, "\(String(describing: result))")
        #expect(result?.attempts.map(\.outcome) == [.failed, .passed])
        #expect(merged?.counts.failed == 0 && merged?.counts.flaky == 1)
        // Failed by one job, passed by the other.
        let q = PostgresQueue(try QueueLocation(b.server.url()))
        try await q.open()
        let stored = try await q.results(QueueBuild(id: b.id, fingerprint: "")).filter { $0.test.hasSuffix(flaky) }
        await q.close()
        #expect(stored.count == 2 && Set(stored.map(\.worker)).count == 2, "\(stored.map { ($0.worker, $0.failed) })")

        // A CI retry of the job that failed it, with --retry-failures: only the item it failed runs again.
        let failer = try #require(stored.first(where: \.failed)?.worker)
        let (code, out, err) = try await runCLI(b.arguments(failer) + ["--retry-failures"], cwd: b.repo, env: b.env)
        #expect(code == 0, "\(out)\(err)")
        let again = try jobReport(b, failer)
        #expect(Set(again.results.map(\.id.suite.name)) == ["RetryableFetchTests"], "\(again.results.map(\.id))")
        #expect((out + err).contains("a CI retry"), "\(out)\(err)")
    }

    @Test func aFailureRetriedByTheOnlyJobAndFailingAgainFailsItWithEachAttemptOnce() async throws {
        // One job: its failed test goes back to the queue, no other job is alive to take it, so it takes it itself;
        // it fails again with no retry left. The job fails (that failure was not queued again), and the merged
        // report has the test's two attempts, not the first one twice.
        let b = try await build(failing: true)
        let (code, out, err) = try await runCLI(b.arguments("1") + ["--retries", "1"], cwd: b.repo, env: b.env)
        #expect(code == 1, "\(out.suffix(2000))\(err.suffix(2000))")
        #expect((out + err).contains("queued again for another job"), "\(out)\(err)")
        let (rc, output, merged) = try await queueReport(b, wait: 30)
        #expect(rc == 1, "\(output.suffix(2000))")
        let failed = merged?.results.filter { $0.outcome == .failed } ?? []
        #expect(!failed.isEmpty, "the failing test is in the merged report")
        for result in failed {
            #expect(result.attempts.map(\.outcome) == [.failed, .failed], "\(result.id): \(result.attempts.map(\.outcome))")
        }
    }

    @Test func aRetriedJobRunsItsFirstShareAgainEvenWhenTheQueueIsEmpty() async throws {
        let b = try await build()
        let jobs = try ["1", "2"].map { try Job(b, $0) }
        for job in jobs { #expect(try await job.exitCode() == 0, "\(job.output.text.suffix(2000))") }
        let firstShare = outcomes(try jobReport(b, "2"))
        #expect(!firstShare.isEmpty)
        // The build is drained; job 2 runs again (a CI retry, same build and name).
        let (code, out, err) = try await runCLI(b.arguments("2"), cwd: b.repo, env: b.env)
        #expect(code == 0, "\(out)\(err)")
        #expect(outcomes(try jobReport(b, "2")) == firstShare, "the retry ran what job 2 ran the first time")
        let (rc, output, merged) = try await queueReport(b, wait: 30)
        #expect(rc == 0, "\(output.suffix(2000))")
        #expect(Set(merged?.results.map { "\($0.destination) \($0.id)" } ?? []).count == merged?.results.count, "every test once")
    }

    @Test func theServerDownAtTheStartFallsBackToTheStaticShardAndRunsEachTestOnce() async throws {
        let b = try await build()
        let expected = try await reference(b)
        // A port where nothing listens (the server's, with the server's port moved away).
        let down = "postgres://queue_user@127.0.0.1:\(try PrivatePostgres.closedPort())/fanout"
        var shares: [String] = []
        for shard in ["1/2", "2/2"] {
            let worker = String(shard.first!)
            let (code, out, err) = try await runCLI(["run", "--queue", down, "--build-id", b.id, "--worker", worker, "--shard", shard,
                                                     "--no-record", "--report-dir", b.dir.file("reports-\(worker)")],
                                                    cwd: b.repo, env: b.env)
            #expect(code == 0, "\(out)\(err)")
            #expect((out + err).contains("QUEUE MODE FELL BACK TO STATIC SHARD \(shard)"), "said loudly: \(out)\(err)")
            let report = try jobReport(b, worker)
            #expect(report.shard?.description == shard)
            #expect(report.warnings.contains { $0.contains("FELL BACK") }, "and in the report: \(report.warnings)")
            shares += outcomes(report)
        }
        #expect(shares.sorted() == expected, "the two shards ran every test once")
        // Without a shard to fall back to, the job fails rather than run tests another job runs too.
        let (code, out, err) = try await runCLI(["run", "--queue", down, "--build-id", b.id, "--worker", "3", "--no-record"],
                                                cwd: b.repo, env: b.env)
        #expect(code == 3, "\(out)\(err)")
        #expect(err.contains("could not reach the queue") && err.contains("--shard I/N"), "\(err)")
    }

    // MARK: - The CI examples (README's "In CI"), run as written

    @Test func theGitHubActionsQueueExampleRunsItsFourJobsAtOnceAndTheReportJobMergesThem() async throws {
        let b = try await build()
        let expected = try await reference(b)
        var gh = try WorkflowRunner(file: repositoryRoot.appendingPathComponent("config/ci/github-actions-queue.yml").path,
                                    repository: b.repo, root: b.dir.file("gh"), provisioningSteps: ["install-fanout"],
                                    binPath: URL(fileURLWithPath: try fanoutExecutable()).deletingLastPathComponent().path)
        // The server every job reaches, as the repository's variable and secret name it.
        gh.variables = ["FANOUT_QUEUE_URL": b.server.url()]
        gh.secrets = ["FANOUT_QUEUE_PASSWORD": PrivatePostgres.queuePassword]
        gh.concurrentMatrix = true
        gh.runID = "\(Int.random(in: 1_000_000...9_999_999))"
        let jobs = try await gh.run()
        let log = jobs.flatMap(\.steps).map { "[\($0.job) · \($0.id) → \($0.code)]\n\($0.output.suffix(1500))" }.joined(separator: "\n")
        let names = jobs.map(\.name)
        #expect(names == ["test (1)", "test (2)", "test (3)", "test (4)", "report"], "\(log)")
        #expect(jobs.allSatisfy { $0.passed }, "\(log)")
        let testOutput = jobs.filter { $0.name.hasPrefix("test") }.flatMap(\.steps).filter { $0.id == "test" }.map(\.output)
        #expect(testOutput.filter { $0.contains("seeded build github:example/app:\(gh.runID)") }.count == 1,
                "one job seeded GitHub's run, read from GITHUB_RUN_ID: \(log)")
        let report = try #require(jobs.last)
        let merged = try JSONConventions.decoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: report.workspace + "/merged/report.json")))
        #expect(outcomes(merged) == expected, "the merged report holds the unsharded run's tests, each once")
        let summary = try String(contentsOfFile: report.workspace + ".summary.md", encoding: .utf8)
        #expect(summary.contains("passed"), "the merged summary reached the job summary")
        #expect(FileManager.default.fileExists(atPath: b.dir.file("gh/cache/fanout-history-main-\(gh.runID)/fanout-history.json")),
                "the report job saved the build's timings for the next pipeline")
        // Each job's share is its own report: together, every test once.
        var shares: [String] = []
        for n in 1...4 {
            let path = b.dir.file("gh/artifacts/fanout-job-\(n)/report.json")
            shares += outcomes(try JSONConventions.decoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: path))))
        }
        #expect(shares.sorted() == expected)
    }

    @Test func theGitLabQueueExampleRunsItsParallelJobsAtOnceAndTheReportJobMergesThem() async throws {
        let b = try await build()
        let expected = try await reference(b)
        let ci = CIExampleTests()
        let pipeline = try ci.example("gitlab-ci-queue.yml")
        let tests = try #require(pipeline["tests"] as? [String: Any])
        let report = try #require(pipeline["report"] as? [String: Any])
        let parallel = try #require(tests["parallel"] as? Int)
        let lines = { (job: [String: Any], key: String) in ((job[key] as? [Any]) ?? []).map { "\($0)" }.joined(separator: "\n") }
        var variables = ci.strings(pipeline["variables"])
        variables["PATH"] = try ci.pathWithFanout
        variables["CI_PIPELINE_ID"] = "\(Int.random(in: 1_000_000...9_999_999))"
        variables["CI_PROJECT_PATH"] = "group/app"
        variables["FANOUT_QUEUE_URL"] = b.server.url()
        variables["FANOUT_QUEUE_PASSWORD"] = PrivatePostgres.queuePassword
        let script = lines(tests, "script")
        let codes = try await withThrowingTaskGroup(of: (Int, Int32, String).self) { group in
            for index in 1...parallel {
                let ws = try ci.freshWorkspace(b.repo, b.dir.file("gl/work-\(index)"))
                var env = variables
                env["CI_NODE_INDEX"] = "\(index)"
                env["CI_NODE_TOTAL"] = "\(parallel)"
                group.addTask {
                    let run = try await runBash(script, in: ws, environment: env, scriptFile: ws + ".script.sh")
                    return (index, run.code, run.output)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for (index, code, output) in codes { #expect(code == 0, "job \(index): \(output.suffix(2000))") }
        #expect(codes.filter { $0.2.contains("seeded build gitlab:group/app:\(variables["CI_PIPELINE_ID"]!)") }.count == 1)
        let ws = try ci.freshWorkspace(b.repo, b.dir.file("gl/report"))
        let run = try await runBash(lines(report, "script"), in: ws, environment: variables, scriptFile: ws + ".script.sh")
        #expect(run.code == 0, "\(run.output.suffix(2000))")
        let after = try await runBash(lines(report, "after_script"), in: ws, environment: variables, scriptFile: ws + ".after.sh")
        #expect(after.code == 0, "\(after.output)")
        let merged = try JSONConventions.decoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: ws + "/merged/report.json")))
        #expect(outcomes(merged) == expected)
        #expect(FileManager.default.fileExists(atPath: ws + "/fanout-history.json"), "the build's timings for the cache")
    }
}
