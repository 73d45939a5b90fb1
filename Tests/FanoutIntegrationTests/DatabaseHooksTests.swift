import FanoutCoordinator
import FanoutCore
import Foundation
import FanoutTestSupport
import Testing

/// Suites that share a database (Tests/Fixtures/DatabaseSuite, a private PostgreSQL cluster, real processes): one
/// database for 8 slots fails; a database per worker, made and dropped by slot hooks and named by a templated
/// `DATABASE_URL`, passes on local slots and on the SSH fleet, and leaves no database behind.
@Suite(.serialized, .timeLimit(.minutes(10))) struct DatabaseHooksTests {
    static let suite = FixturePackage(folder: "DatabaseSuite", variable: nil)
    static let server = Task { () throws -> PrivatePostgres in try await PrivatePostgres.start() }

    /// A run of the fixture on `slots` local slots (or the hooks fleet), its identity log in a folder any agent user
    /// may write to.
    func settings(_ dir: TempDir, databaseURL: String, slots: Int = 8, fleet: Bool = false) async throws -> RunSettings {
        let server = try await Self.server.value
        var s = RunSettings()
        if fleet { s = try await IntegrationFleet.hooks.settings() }
        s.bundlePath = try await Self.suite.bundle()
        s.slots = slots
        s.historyPath = dir.file("history.sqlite")
        s.reportDirectory = dir.file("report")
        try FileManager.default.createDirectory(atPath: dir.file("log"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o777])
        s.destination = Destination(name: "local", environment: [
            "DATABASE_URL": databaseURL, "ADMIN_URL": server.socketURL(database: "postgres"),
            "IDENTITY_LOG": dir.file("log/identity.log")])
        return s
    }

    /// The recipe of the README: a database per worker, created before the slot's first unit, dropped after its last.
    static let perWorker: HookSettings = {
        var hooks = HookSettings()
        hooks[.slot, .setUp] = .init(line: #"psql "$ADMIN_URL" -X -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE app_test_$FANOUT_WORKER""#, timeout: 60)
        hooks[.slot, .tearDown] = .init(line: #"psql "$ADMIN_URL" -X -q -c "DROP DATABASE IF EXISTS app_test_$FANOUT_WORKER""#, timeout: 60)
        return hooks
    }()

    /// Lines of the identity log: worker, slot, agent, destination, run id, DATABASE_URL, test.
    func identities(_ dir: TempDir) throws -> [[String]] {
        try String(contentsOfFile: dir.file("log/identity.log"), encoding: .utf8)
            .split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
    }

    @Test func oneSharedDatabaseFailsOnEightSlots() async throws {
        let server = try await Self.server.value
        let dir = try TempDir()
        let name = "shared_" + UUID().uuidString.prefix(8).lowercased()
        try await server.admin("CREATE DATABASE \(name)")
        let run = try await Coordinator(settings: settings(dir, databaseURL: server.socketURL(database: name))).run()
        let failed = run.report.results.filter { $0.outcome == .failed }
        // Tests of different slots empty and fill one table at once: they count each other's rows.
        #expect(run.exitCode == .testFailures)
        #expect(failed.count >= 3, "only \(failed.map(\.id))")
        #expect(failed.contains { $0.attempts.last?.issues.contains { $0.message.contains("is not equal to") } == true },
                "failures are wrong counts: \(failed.map(\.id))")
        try await server.admin("DROP DATABASE \(name)")
    }

    @Test func aDatabasePerWorkerPassesAndEveryOneIsDropped() async throws {
        let server = try await Self.server.value
        let dir = try TempDir()
        var s = try await settings(dir, databaseURL: server.socketURL(database: "app_test_${FANOUT_WORKER}"))
        s.hooks = Self.perWorker
        let run = try await Coordinator(settings: s).run()
        let report = run.report
        #expect(run.exitCode == .success, "\(report.results.filter { $0.outcome != .passed }.map(\.id)) \(report.warnings)")
        #expect(report.counts.passed == 30)
        try checkIdentities(dir, report: report, agents: ["local": 8])
        let hooks = try #require(report.hooks)
        #expect(hooks.filter { $0.scope == .slot && $0.phase == .setUp && $0.status == .passed }.count == 8)
        #expect(hooks.filter { $0.scope == .slot && $0.phase == .tearDown && $0.status == .passed }.count == 8)
        let left = try await server.databases().filter { $0.hasPrefix("app_test_") }
        #expect(left.isEmpty, "every per-worker database is dropped: \(left)")
    }

    @Test func aDatabasePerWorkerPassesOnTheSSHFleet() async throws {
        let server = try await Self.server.value
        let dir = try TempDir()
        var s = try await settings(dir, databaseURL: server.socketURL(database: "app_test_${FANOUT_WORKER}"), fleet: true)
        s.hooks = Self.perWorker
        let run = try await Coordinator(settings: s).run()
        let report = run.report
        #expect(run.exitCode == .success, "\(report.results.filter { $0.outcome != .passed }.map(\.id)) \(report.warnings)")
        #expect(report.counts.passed == 30)
        try checkIdentities(dir, report: report, agents: Dictionary(uniqueKeysWithValues: s.agents.map { ($0.name, $0.slots) }))
        let hooks = try #require(report.hooks)
        #expect(Set(hooks.filter { $0.phase == .tearDown && $0.status == .passed }.compactMap(\.worker)) == Set(0..<8))
        let left = try await server.databases().filter { $0.hasPrefix("app_test_") }
        #expect(left.isEmpty, "every per-worker database is dropped: \(left)")
    }

    /// Every test process had its slot's identity: worker = the agent's first worker + slot (agents in config
    /// order), the run's id, its destination, and a DATABASE_URL naming its worker's database.
    func checkIdentities(_ dir: TempDir, report: RunReport, agents: [String: Int]) throws {
        let lines = try identities(dir)
        // A line per test start: a test taken over by an idle slot (work stealing) may also have begun in its first
        // process, which was stopped right there.
        #expect(Set(lines.compactMap(\.last)).count == 30, "every test ran: \(lines.count) lines")
        var first: [String: Int] = [:]
        var next = 0
        for agent in report.agents.map(\.name) {
            first[agent] = next
            next += agents[agent] ?? 0
        }
        for line in lines {
            guard line.count == 7, let worker = Int(line[0]), let slot = Int(line[1]) else {
                Issue.record("not an identity line: \(line)")
                continue
            }
            #expect(worker == (first[line[2]] ?? -100) + slot, "\(line)")
            #expect(line[3] == "local" && line[4] == report.runID, "\(line)")
            #expect(line[5].contains("/app_test_\(worker)?"), "\(line)")
        }
        #expect(Set(lines.map { $0[0] }).count > 1, "tests ran in several workers")
    }
}
