import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Synchronization
import Testing

/// The whole job across real sshd agents on loopback (Agents/local-fleet), against the real demo suite.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SSHRunTests {
    func fleetSettings(_ dir: TempDir, filters: [String] = [], env: [String: String] = [:]) async throws -> RunSettings {
        try await IntegrationFleet.ssh.runSettings(dir, filters: filters, env: env)
    }

    @Test func demoSuiteAcrossFourAgentsMatchesALocalRun() async throws {
        let dir = try TempDir()
        let settings = try await fleetSettings(dir)
        let ssh = try await Coordinator(settings: settings).run()
        #expect(ssh.exitCode == .success)
        let agents = Set(settings.agents.map(\.name))
        #expect(agents.count == 4)
        #expect(ssh.report.units.allSatisfy { agents.contains($0.agent) }, "every unit names its agent")
        #expect(Set(ssh.report.units.map(\.agent)).count == 4, "all four agents took work")
        #expect(ssh.report.agents.count == 4)
        #expect(ssh.report.agents.allSatisfy { $0.transport == "ssh" && $0.host != nil && $0.problem == nil })

        let localDir = try TempDir()
        let local = try await Coordinator(settings: demoSettings(bundle: settings.bundlePath ?? "", dir: localDir)).run()
        let outcomes = { (r: RunReport) in Dictionary(uniqueKeysWithValues: r.results.map { ($0.id, $0.outcome) }) }
        #expect(outcomes(ssh.report) == outcomes(local.report), "same tests, same outcomes as on local slots")
        #expect(ssh.report.measurements.count == local.report.measurements.count)
    }

    @Test func aSecondRunUploadsNothing() async throws {
        let dir = try TempDir()
        let settings = try await fleetSettings(dir, filters: ["^DemoKitTests\\.GCDTests$"])
        _ = try await Coordinator(settings: settings).run()
        let second = try await Coordinator(settings: settings).run()
        #expect(second.exitCode == .success)
        #expect(second.report.agents.count == 4)
        #expect(second.report.agents.allSatisfy { $0.deployedBytes == 0 }, "\(second.report.agents)")
    }

    @Test func anUnreachableAgentIsSkippedWithAWarning() async throws {
        let dir = try TempDir()
        var settings = try await fleetSettings(dir, filters: ["^DemoKitTests\\.(GCD|Prime)Tests$"])
        settings.agents.append(SSHAgentSpec(name: "ghost", host: "127.0.1.77", port: 2699, user: "fanout-agent",
                                            identity: settings.agents[0].identity, slots: 2, workdir: "/tmp/ghost"))
        settings.ssh.connectTimeout = 2
        let outcome = try await Coordinator(settings: settings).run()
        #expect(outcome.exitCode == .success, "the run goes on without it")
        #expect(outcome.report.warnings.contains { $0.contains("ghost") && $0.contains("not usable") })
        #expect(outcome.report.agents.first { $0.name == "ghost" }?.problem != nil)
        #expect(!outcome.report.units.contains { $0.agent == "ghost" })
    }

    @Test func noUsableAgentIsAnInfrastructureError() async throws {
        let dir = try TempDir()
        var settings = try await fleetSettings(dir, filters: ["^DemoKitTests\\.GCDTests$"])
        settings.agents = [SSHAgentSpec(name: "ghost", host: "127.0.1.77", port: 2699, user: "fanout-agent",
                                        identity: settings.agents[0].identity, slots: 2, workdir: "/tmp/ghost")]
        settings.ssh.connectTimeout = 2
        let outcome = try await Coordinator(settings: settings).run()
        #expect(outcome.exitCode == .infrastructure)
        #expect(!outcome.report.results.isEmpty && outcome.report.results.allSatisfy { $0.outcome == .notRun })
        #expect(outcome.report.warnings.contains { $0.contains("no agent was usable") })
    }

    @Test func crashAndHangOnAgentsAreReportedAndLeaveNothingBehind() async throws {
        let dir = try TempDir()
        var settings = try await fleetSettings(dir, filters: ["WorkerPoolTests", "SessionTimeoutTests"],
                                               env: ["DEMO_CRASH": "1", "DEMO_HANG": "1"])
        settings.timeLimits.stall = 3
        let outcome = try await Coordinator(settings: settings).run()
        let r = outcome.report
        #expect(outcome.exitCode == .testFailures)
        let crashed = try #require(r.result("IntegrationTests.WorkerPoolTests/testEnqueueRespectsPriority"))
        #expect(crashed.outcome == .crashed)
        #expect(crashed.issues.contains { $0.message.contains("Fatal error: deliberate crash") })
        #expect(crashed.attempts[0].diagnostics?.contains("testEnqueueRespectsPriority") == true, "the backtrace names the test")
        let hung = try #require(r.result("IntegrationTests.SessionTimeoutTests/testIdleSessionExpires"))
        #expect(hung.outcome == .timedOut)
        #expect(r.results.filter { $0.outcome == .passed }.count == 6, "the rest of both classes ran")
        for spec in settings.agents {
            let left = try await IntegrationFleet.processesOnAgent(spec, settings: settings.ssh)
            #expect(left.isEmpty, "\(spec.name) still runs: \(left)")
        }
    }

    @Test func cancellingTheRunLeavesNoProcessOnAnyAgent() async throws {
        let dir = try TempDir()
        var settings = try await fleetSettings(dir, filters: ["SessionTimeoutTests", "DatabaseMigrationTests"],
                                               env: ["DEMO_HANG": "1"])
        settings.timeLimits.stall = 600
        let started = Flag()
        let coordinator = Coordinator(settings: settings) { event in
            if case .unitStarted = event { started.set() }
        }
        let run = Task { try await coordinator.run() }
        while !started.isSet { try await Task.sleep(for: .milliseconds(50)) }
        try await Task.sleep(for: .seconds(1.5))
        run.cancel()
        let outcome = try await run.value
        #expect(outcome.exitCode == .interrupted)
        #expect(outcome.report.interrupted)
        #expect(outcome.report.results.contains { $0.outcome == .notRun })
        for spec in settings.agents {
            let left = try await IntegrationFleet.processesOnAgent(spec, settings: settings.ssh)
            #expect(left.isEmpty, "\(spec.name) still runs: \(left)")
            let runs = try FileManager.default.contentsOfDirectory(atPath: spec.workdir + "/runs")
            #expect(runs.isEmpty, "the run's folder is removed: \(runs)")
        }
    }
}

/// A flag set from any thread.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

extension SSHRunTests {
    @Test func aRetryPrefersAnotherAgent() async throws {
        let dir = try TempDir()
        chmod(dir.path, 0o777) // the agents' user writes the flaky marker here
        var settings = try await fleetSettings(dir, filters: ["RetryableFetchTests"], env: ["DEMO_FLAKY_DIR": dir.path])
        settings.retries = 1
        let outcome = try await Coordinator(settings: settings).run()
        let flaky = try #require(outcome.report.results.first { $0.id.name == "testFetchWithFlakyBackend" })
        #expect(flaky.outcome == .flaky)
        #expect(flaky.attempts.count == 2)
        #expect(flaky.attempts[0].agent != flaky.attempts[1].agent, "the retry ran on another agent")
    }
}

extension SSHRunTests {
    @Test func aBundlePlantedByAnotherUserIsRefusedAndTheAgentSkipped() async throws {
        let dir = try TempDir()
        let settings = try await fleetSettings(dir, filters: ["^DemoKitTests\\.GCDTests$"])
        let bundle = try #require(settings.bundlePath)
        let archives = ProductArchives()
        let sha = try await archives.pack(TestProduct(binary: bundle)).sha256
        await archives.discard()
        // Root (this test) plants a complete-looking bundle in agent-1's cache: not the agent user's.
        let planted = settings.agents[0].workdir + "/bundles/" + sha
        try? FileManager.default.removeItem(atPath: planted)
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: planted) }
        try FileManager.default.copyItem(atPath: bundle, toPath: planted + "/" + URL(fileURLWithPath: bundle).lastPathComponent)
        #expect(FileManager.default.createFile(atPath: planted + "/.complete", contents: nil))

        let outcome = try await Coordinator(settings: settings).run()
        #expect(outcome.exitCode == .success, "the other agents run everything")
        let warning = outcome.report.warnings.first { $0.contains("agent-1") }
        #expect(warning?.contains("\(planted) belongs to uid 0, not to the agent user") == true, "\(outcome.report.warnings)")
        #expect(!outcome.report.units.contains { $0.agent == "agent-1" }, "nothing ran from the planted bundle")
    }

    @Test func installReplacesARemoteFileAtomically() async throws {
        let dir = try TempDir()
        let settings = try await fleetSettings(dir)
        let spec = settings.agents[0]
        let connection = try await SSHTransport(spec: spec, settings: settings.ssh, archives: nil).connection()
        let target = spec.workdir + "/install-\(UUID().uuidString)/it's a tool"
        _ = try await connection.run("mkdir -p \(ShellQuote.quote(URL(fileURLWithPath: target).deletingLastPathComponent().path))")
        try "first\n".write(toFile: dir.file("a"), atomically: true, encoding: .utf8)
        try "second version\n".write(toFile: dir.file("b"), atomically: true, encoding: .utf8)
        #expect(try await connection.install(dir.file("a"), at: target, mode: 0o755) == 6)
        #expect(try await connection.run("cat \(ShellQuote.quote(target))").stdoutText == "first\n")
        // The second replaces the first: SFTP's rename refuses, so the quoted `mv -f` does it.
        #expect(try await connection.install(dir.file("b"), at: target, mode: 0o755) == 15)
        #expect(try await connection.run("cat \(ShellQuote.quote(target))").stdoutText == "second version\n")
        #expect(try await connection.stat(target)?.mode.map { $0 & 0o777 } == 0o755)
        let folder = URL(fileURLWithPath: target).deletingLastPathComponent().path
        #expect(try await connection.run("ls -A \(ShellQuote.quote(folder))").stdoutText == "it's a tool\n", "no temporary file left")
        _ = try await connection.run("rm -rf \(ShellQuote.quote(folder))")
        await connection.close()
    }
}
