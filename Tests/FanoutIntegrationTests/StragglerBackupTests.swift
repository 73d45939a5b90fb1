import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Straggler backup through the real dispatch loop, with real test processes: a unit that overruns its estimate gets
/// a twin on an idle slot, the first to finish wins, the loser's process group is stopped, and the loser is neither
/// counted nor reported as a failure. The demo suite's DEMO_STRAGGLER_DIR switch makes the first process that runs
/// `HealthCheckTests/testStoreIsHealthy` write its PID and stall for 5 minutes, while every later copy is quick.
@Suite(.serialized, .timeLimit(.minutes(5))) struct StragglerBackupTests {
    @Test func onLocalSlots() async throws {
        let dir = try TempDir()
        let settings = demoSettings(bundle: try await DemoSuite.shared.bundle(), dir: dir, filters: ["HealthCheckTests"],
                                    env: ["DEMO_STRAGGLER_DIR": dir.file("straggler")], slots: 2)
        try await Self.check(settings, markerDirectory: dir.file("straggler"))
    }

    @Test func onSSHAgents() async throws {
        let dir = try TempDir()
        chmod(dir.path, 0o777) // the agents' user writes the PID file here
        let settings = try await IntegrationFleet.ssh.runSettings(dir, filters: ["HealthCheckTests"],
                                                                  env: ["DEMO_STRAGGLER_DIR": dir.path + "/straggler"])
        let report = try await Self.check(settings, markerDirectory: dir.path + "/straggler")
        let units = report.units.sorted { $0.id < $1.id }
        #expect(units.count == 2 && units[0].agent != units[1].agent, "the backup prefers another agent")
    }

    /// Runs the class alone (no history: its estimate is 0.2 s) and checks the twin's story end to end.
    @discardableResult
    static func check(_ settings: RunSettings, markerDirectory: String) async throws -> RunReport {
        let phases = Mutex<[String]>([])
        let outcome = try await Coordinator(settings: settings) { event in
            if case .phase(let text) = event { phases.withLock { $0.append(text) } }
        }.run()
        let report = outcome.report

        // The original stalled (it wrote its PID), a backup was started for it, and the backup won.
        let pidText = try String(contentsOfFile: markerDirectory + "/straggler-pid", encoding: .utf8)
        let pid = try #require(pid_t(pidText.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(phases.withLock { $0 }.contains { $0.contains("backup unit") }, "\(phases.withLock { $0 })")
        #expect(report.units.count == 2, "the original and its backup: \(report.units.map(\.ending))")
        let stopped = report.units.filter { $0.ending.hasPrefix("stopped: its twin") }
        #expect(stopped.count == 1, "\(report.units.map(\.ending))")
        let winner = try #require(report.units.first { !$0.ending.hasPrefix("stopped") })
        #expect(winner.ending == "exit 0")

        // Counted once, from the winner; nothing failed, nothing missing.
        #expect(outcome.exitCode == .success)
        #expect(report.results.count == 2)
        #expect(report.counts.passed == 2 && report.counts.failures == 0 && report.counts.notRun == 0)
        for result in report.results {
            #expect(result.attempts.count == 1, "\(result.id): \(result.attempts.count) attempts")
            #expect(result.attempts.first?.unit == winner.id, "\(result.id) counted from the winner")
        }
        // The run did not wait for the stalled copy (5 minutes) nor for its time limit (60 s).
        #expect(report.timing.makespan < 50, "makespan \(report.timing.makespan) s")

        // The loser's process is gone (its process group was stopped), within a deadline.
        let deadline = Date().addingTimeInterval(20)
        while kill(pid, 0) == 0 || errno != ESRCH {
            guard Date() < deadline else {
                Testing.Issue.record("the stalled test process \(pid) is still alive after its twin won")
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return report
    }
}
