@testable import FanoutCoordinator
import FanoutCore
import FanoutHistory
import Foundation
import Testing

/// Only a test that stops making progress is stopped: real test processes (Tests/Fixtures/LongSuite) on local slots
/// and on real sshd agents, first runs with the default limits except where a class names its own.
@Suite(.serialized, .timeLimit(.minutes(15))) struct ProgressLimitTests {
    /// A first run: a test computes silently for 3 minutes, one blocks silently for 75 s (both fine), one is
    /// blocked forever and one spins forever (their classes have limits of their own, so the test ends soon).
    static let firstRunEnvironment = ["LONG_COMPUTE": "180", "LONG_BLOCK": "75", "LONG_HANG": "1", "LONG_SPIN": "1",
                                      "LONG_USUAL": "2"]

    static func configure(_ s: inout RunSettings, bundle: String, dir: TempDir, env: [String: String]) {
        s.bundlePath = bundle
        s.historyPath = dir.file("history.sqlite")
        s.reportDirectory = dir.file("report-\(UUID().uuidString.prefix(6))")
        s.destination = Destination(name: "local", environment: env)
        s.classTimeLimits = [ClassTimeLimit(pattern: "HangTests", stall: 5), ClassTimeLimit(pattern: "SpinTests", ceiling: 10)]
    }

    func localSettings(_ dir: TempDir, env: [String: String]) async throws -> RunSettings {
        var s = RunSettings()
        s.slots = 4
        Self.configure(&s, bundle: try await LongSuite.shared.bundle(), dir: dir, env: env)
        return s
    }

    func fleetSettings(_ dir: TempDir, env: [String: String]) async throws -> RunSettings {
        var s = try await IntegrationFleet.progress.settings()
        Self.configure(&s, bundle: try await LongSuite.shared.bundle(), dir: dir, env: env)
        return s
    }

    /// What a first run must show, wherever it ran.
    func expectFirstRun(_ outcome: FinishedRun, _ place: String) throws {
        let r = outcome.report
        let compute = try #require(r.result("LongTests.ComputeTests/testComputesSilently"))
        #expect(compute.outcome == .passed, "\(place): computing for 3 minutes with no output is progress: \(compute.issues)")
        #expect(compute.duration >= 179, "\(place): it did compute that long")
        let block = try #require(r.result("LongTests.BlockTests/testBlocksSilently"))
        #expect(block.outcome == .passed, "\(place): 75 s of silence is within the default stall window: \(block.issues)")
        let hang = try #require(r.result("LongTests.HangTests/testBlocksForever"))
        #expect(hang.outcome == .timedOut, "\(place)")
        let hangIssue = hang.issues.last { $0.kind == .timeout }?.message ?? ""
        #expect(hangIssue.contains("no output and no CPU time for 5.00 s, its stall window"), "\(place): \(hangIssue)")
        #expect(hangIssue.contains("configured for its class"), "\(place): \(hangIssue)")
        #expect(hang.duration >= 5, "\(place): the stopped test keeps how long it ran (a censored observation)")
        let spin = try #require(r.result("LongTests.SpinTests/testSpinsForever"))
        #expect(spin.outcome == .timedOut, "\(place)")
        let spinIssue = spin.issues.last { $0.kind == .timeout }?.message ?? ""
        #expect(spinIssue.contains("ran past its ceiling of 10.0 s"), "\(place): a busy loop is caught by the ceiling: \(spinIssue)")
        #expect(r.results.filter { $0.id.suite.name == "UsualTests" }.allSatisfy { $0.outcome == .passed }, "\(place)")
        #expect(r.counts.timedOut == 2 && r.counts.failed == 0 && r.counts.crashed == 0, "\(place): \(r.counts)")
        #expect(outcome.exitCode == .testFailures, "\(place): the two real hangs fail the run, nothing else does")
    }

    @Test func onlyTestsThatStopMakingProgressAreStoppedLocallyAndOnAgents() async throws {
        let localDir = try TempDir(), fleetDir = try TempDir()
        let local = try await localSettings(localDir, env: Self.firstRunEnvironment)
        let fleet = try await fleetSettings(fleetDir, env: Self.firstRunEnvironment)
        // Both at once: the two computing tests share the machine's two cores with everything else.
        async let onSlots = Coordinator(settings: local).run()
        async let onAgents = Coordinator(settings: fleet).run()
        try expectFirstRun(try await onSlots, "local slots")
        let agents = try await onAgents
        try expectFirstRun(agents, "ssh agents")
        for spec in fleet.agents {
            let left = try await IntegrationFleet.processesOnAgent(spec, settings: fleet.ssh)
            #expect(left.isEmpty, "\(spec.name) still runs: \(left)")
        }
    }

    @Test func onceATestHasHistoryItsHangIsCaughtWithinASmallMultipleOfItsUsualTime() async throws {
        let localDir = try TempDir(), fleetDir = try TempDir()
        async let onSlots: Void = historyThenHang(dir: localDir) { dir, env in try await localSettings(dir, env: env) }
        async let onAgents: Void = historyThenHang(dir: fleetDir) { dir, env in try await fleetSettings(dir, env: env) }
        try await onSlots
        try await onAgents
    }

    /// A run that teaches the history a 2 s test, then a run where it hangs after its 2 s, then the next plan.
    /// A computing test that others keep off its core gets almost no CPU time, but it is ready to run all along:
    /// not stalled, even with a stall window of 5 s (its class's own, as a short history would give it). Before
    /// Fanout sampled run-queue waits, both were stopped at 5 s as "no output and no CPU time".
    @Test func aComputingTestStarvedOfCPUIsNotStoppedLocallyOrOnAgents() async throws {
        let localDir = try TempDir(), fleetDir = try TempDir()
        let env = ["LONG_STARVE": "12"]
        var local = try await localSettings(localDir, env: env), fleet = try await fleetSettings(fleetDir, env: env)
        for i in [0, 1] {
            var s = i == 0 ? local : fleet
            s.filters = ["StarveTests"]
            s.classTimeLimits = [ClassTimeLimit(pattern: "StarveTests", stall: 5)]
            if i == 0 { local = s } else { fleet = s }
        }
        async let onSlots = Coordinator(settings: local).run()
        async let onAgents = Coordinator(settings: fleet).run()
        for (outcome, place) in [(try await onSlots, "local slots"), (try await onAgents, "ssh agents")] {
            let r = outcome.report
            let starved = try #require(r.result("LongTests.StarveTests/testComputesStarved"), "\(place)")
            #expect(starved.outcome == .passed, "\(place): \(starved.issues)")
            #expect(starved.attempts.count == 1, "\(place): never stopped and retried")
            let unit = try #require(r.units.first { $0.suites.contains("LongTests.StarveTests") }, "\(place)")
            // It was starved indeed: little CPU time in its 12 s (a core of its own gives 12 s), and a wait the
            // kernel counted (only when it got a core again, so less than it was ready).
            #expect((unit.cpuSeconds ?? 12) < 4, "\(place): \(String(describing: unit.cpuSeconds)) s of CPU")
            #expect((unit.cpuWaitSeconds ?? 0) >= 3, "\(place): \(String(describing: unit.cpuWaitSeconds)) s waiting")
            #expect(outcome.exitCode == .success, "\(place)")
        }
    }

    func historyThenHang(dir: TempDir, settings: (TempDir, [String: String]) async throws -> RunSettings) async throws {
        var usual = try await settings(dir, ["LONG_USUAL": "2"])
        usual.filters = ["UsualTests"]
        let place = usual.agents.isEmpty ? "local slots" : "ssh agents"
        let first = try await Coordinator(settings: usual).run()
        #expect(first.exitCode == .success, "\(place)")

        var hanging = try await settings(dir, ["LONG_USUAL": "2", "LONG_USUAL_HANG": "1"])
        hanging.filters = ["UsualTests"]
        let second = try await Coordinator(settings: hanging).run()
        let hung = try #require(second.report.result("LongTests.UsualTests/testUsuallyQuick"))
        #expect(hung.outcome == .timedOut, "\(place)")
        let issue = hung.issues.last { $0.kind == .timeout }?.message ?? ""
        #expect(issue.contains("no output and no CPU time for") && issue.contains("its stall window (p95 of its last 1 run"),
                "\(place): \(issue)")
        #expect(hung.duration < 60, "\(place): stopped at 5 × its usual 2 s (at least 10 s), not at the 300 s default")
        #expect(second.report.result("LongTests.UsualTests/testAfterwards")?.outcome == .passed,
                "\(place): what the stopped unit had not reached ran elsewhere")

        // A timeout is data: the next run gives the test at least twice what it ran before it was stopped.
        let next = try await Coordinator(settings: usual).prepare()
        let limits = next.timeLimits.limits(of: hung.id, on: "local")
        #expect(limits.stall >= 2 * hung.duration, "\(place): \(limits)")
        #expect(limits.basis.contains("it was stopped after"), "\(place): \(limits.basis)")
    }
}
