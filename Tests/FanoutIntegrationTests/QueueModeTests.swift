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

    /// A repository of the built demo suite: its quick classes, 2 slots a job, a `lease` of 3 s.
    func build(lease: Int = 3) async throws -> Build {
        let server = try await Self.server.value
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        // CIExampleTests' repository (the demo suite's quick classes, 2 slots), with the queue.
        let repo = try CIExampleTests().repository(in: dir, bundle: bundle)
        let config = try String(contentsOfFile: repo + "/fanout.yml", encoding: .utf8)
        try (config + "queue:\n  url: \(server.url())\n  lease: \(lease)\n")
            .write(toFile: repo + "/fanout.yml", atomically: true, encoding: .utf8)
        return Build(dir: dir, repo: repo, server: server)
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
    }
}
