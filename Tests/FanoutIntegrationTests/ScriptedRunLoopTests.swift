@testable import FanoutCoordinator
import FanoutCore
import FanoutTestSupport
import Foundation
import Synchronization
import Testing

/// The real run loop (Dispatcher, AgentServer, UnitExecution, the collector and XCTest's parser) on scripted agents:
/// no test process, no SSH. The coordinator and the agents keep time on one `VirtualClock`, which jumps to the next
/// deadline whenever the run has settled: the straggler (a unit must overrun its estimate by a second), the steals,
/// the time limits and the re-admission back-off (a second) take virtual time, and no test waits for real time.
@Suite(.timeLimit(.minutes(1))) struct ScriptedRunLoopTests {
    /// Runs `script` on these agents, the catalog handed straight to the coordinator (no discovery process).
    func run(_ script: Script, on agents: [ScriptedTransport], clock: VirtualClock,
             _ configure: (inout RunSettings) -> Void = { _ in },
             phase: @escaping @Sendable (String) -> Void = { _ in }) async throws -> FinishedRun {
        let dir = try TempDir()
        let binary = dir.file("Scripted.xctest")
        _ = FileManager.default.createFile(atPath: binary, contents: Data(), attributes: [.posixPermissions: 0o755])
        var settings = RunSettings()
        settings.bundlePath = binary
        settings.historyPath = dir.file("history.sqlite")
        settings.reportDirectory = dir.file("report")
        configure(&settings)
        let catalog = script.catalog
        let coordinator = Coordinator(settings: settings, transports: agents, discover: { _, _ in catalog },
                                      clock: clock, progress: { event in
                                          if case .phase(let text) = event { phase(text) }
                                      })
        return try await clock.run { try await coordinator.run() }
    }

    /// Every scripted test is in the report exactly once, with an outcome.
    func expectEveryTestOnce(_ report: RunReport, _ script: Script) {
        #expect(report.results.map(\.id) == script.tests.sorted(), "every test once, in order")
        #expect(report.results.allSatisfy { !$0.attempts.isEmpty })
    }

    @Test func everyScriptedTestEndsInTheReportOnce() async throws {
        let clock = VirtualClock()
        let script = Script.passing(classes: 6, tests: 3)
        let outcome = try await run(script, on: [ScriptedTransport(name: "a", slots: 2, script: script, clock: clock),
                                                 ScriptedTransport(name: "b", slots: 2, script: script, clock: clock)], clock: clock)
        let report = outcome.report
        #expect(outcome.exitCode == .success)
        expectEveryTestOnce(report, script)
        #expect(report.counts.passed == 18)
        #expect(report.units.allSatisfy { $0.ending == "exit 0" }, "\(report.units.map(\.ending))")
        #expect(report.classes.count == 6 && report.classes.allSatisfy(\.timingIsComplete))
        #expect(report.agents.map(\.transport) == ["scripted", "scripted"])
    }

    @Test func aLostAgentsUnfinishedWorkIsRequeuedOnAnother() async throws {
        let clock = VirtualClock()
        let script = Script.passing(classes: 4, tests: 3)
        let lost = ScriptedTransport(name: "lost", slots: 1, script: script, loseAfter: 1, clock: clock)
        let outcome = try await run(script, on: [lost, ScriptedTransport(name: "ok", slots: 1, script: script, clock: clock)], clock: clock)
        let report = outcome.report
        #expect(outcome.exitCode == .success, "\(report.warnings)")
        expectEveryTestOnce(report, script)
        #expect(report.counts.passed == 12)
        let lostUnit = try #require(report.units.first { $0.ending.hasPrefix("agent lost") })
        #expect(lostUnit.agent == "lost")
        // What the lost unit did not finish ran on the other agent.
        let finishedThere = report.results.filter { $0.attempts.last?.unit == lostUnit.id }
        #expect(finishedThere.count <= 1, "only the test it ended before the loss")
        #expect(report.results.filter { $0.attempts.last?.agent == "ok" }.count >= 11)
        #expect(report.warnings.contains { $0.contains("agent lost was lost") }, "\(report.warnings)")
        #expect(report.agents.first { $0.name == "lost" }?.problem?.contains("scripted loss") == true)
    }

    @Test func aFailedTestIsRetriedOnAnotherAgent() async throws {
        let clock = VirtualClock()
        let flaky = TestID(module: "M", suite: "C1", name: "t0")
        let script = Script.passing(classes: 3, tests: 2).with([flaky: [.failed(0.002), .passed(0.002)]])
        let outcome = try await run(script, on: [ScriptedTransport(name: "a", slots: 1, script: script, clock: clock),
                                                 ScriptedTransport(name: "b", slots: 1, script: script, clock: clock)], clock: clock) {
            $0.retries = 1
        }
        let report = outcome.report
        expectEveryTestOnce(report, script)
        let result = try #require(report.results.first { $0.id == flaky })
        #expect(result.outcome == .flaky && result.attempts.map(\.outcome) == [.failed, .passed])
        #expect(result.attempts[0].agent != result.attempts[1].agent, "the retry prefers the other agent")
        #expect(result.attempts[0].issues.first?.message.contains("scripted failure") == true)
        #expect(outcome.exitCode == .success, "a flaky test passed in the end")
        #expect(script.starts(of: flaky) == 2)
    }

    @Test func aCrashAndAHangEndWithTheirOutcomesAndTheRestStillRuns() async throws {
        let clock = VirtualClock()
        let crash = TestID(module: "M", suite: "C0", name: "t1")
        let hang = TestID(module: "M", suite: "C2", name: "t0")
        let script = Script.passing(classes: 3, tests: 3).with([crash: [.crash], hang: [.hang]])
        let outcome = try await run(script, on: [ScriptedTransport(name: "a", slots: 2, script: script, clock: clock)], clock: clock) {
            // A scripted process reports no CPU time, so only the ceiling can stop its hang.
            $0.timeLimits.ceiling = 0.5
            $0.splitClasses = false
        }
        let report = outcome.report
        expectEveryTestOnce(report, script)
        #expect(report.results.first { $0.id == crash }?.outcome == .crashed)
        #expect(report.results.first { $0.id == crash }?.attempts.first?.diagnostics?.contains("scripted crash") == true)
        #expect(report.results.first { $0.id == hang }?.outcome == .timedOut)
        // The tests after the crash and the hang went back to the queue and passed in other units.
        #expect(report.counts.passed == 7, "\(report.results.map { "\($0.id) \($0.outcome)" })")
        #expect(outcome.exitCode == .testFailures)
    }

    @Test func aStragglerGetsATwinAndTheFirstToFinishWins() async throws {
        let clock = VirtualClock()
        let slow = TestID(module: "M", suite: "C0", name: "t0")
        let script = Script([(slow, [.hang, .passed(0.002)])])
        let phases = Mutex<[String]>([])
        let outcome = try await run(script, on: [ScriptedTransport(name: "a", slots: 1, script: script, clock: clock),
                                                 ScriptedTransport(name: "b", slots: 1, script: script, clock: clock)], clock: clock,
                                    { $0.timeLimits.ceiling = 30 }, phase: { text in phases.withLock { $0.append(text) } })
        let report = outcome.report
        #expect(outcome.exitCode == .success)
        expectEveryTestOnce(report, script)
        #expect(phases.withLock { $0 }.contains { $0.contains("backup unit") })
        #expect(report.units.count == 2 && Set(report.units.map(\.agent)) == ["a", "b"], "the twin runs on the other agent")
        let winner = try #require(report.units.first { $0.ending == "exit 0" })
        #expect(report.units.contains { $0.ending.hasPrefix("stopped: its twin") })
        #expect(report.results.first?.attempts.map(\.unit) == [winner.id], "counted once, from the winner")
        #expect(report.timing.makespan < 10, "the run did not wait for the hanging copy")
    }

    @Test func idleSlotsStealTheUnstartedTailOfARunningUnit() async throws {
        let clock = VirtualClock()
        let script = Script((0..<8).map { (TestID(module: "M", suite: "Migrations", name: "t\($0)"), [.passed(0.12)]) })
        let outcome = try await run(script, on: [ScriptedTransport(name: "a", slots: 4, script: script, clock: clock)], clock: clock)
        let report = outcome.report
        #expect(outcome.exitCode == .success)
        expectEveryTestOnce(report, script)
        #expect(report.results.allSatisfy { $0.attempts.count == 1 && $0.outcome == .passed })
        let steals = try #require(report.steals)
        #expect(!steals.isEmpty)
        let thieves = report.units.filter { $0.takenFrom != nil }
        #expect(Set(steals.flatMap(\.to)) == Set(thieves.map(\.id)))
        for original in Set(thieves.compactMap(\.takenFrom)) {
            #expect(report.units.first { $0.id == original }?.ending.hasPrefix("stopped where the tests") == true)
        }
        #expect(report.classes.count == 1 && report.classes.first?.timingIsComplete == true)
        for id in script.tests { #expect(script.starts(of: id) >= 1) }
    }

    @Test func aLostAgentThatComesBackIsReadmitted() async throws {
        let clock = VirtualClock()
        // Enough work for the other agent to be busy past the one-second back-off.
        let script = Script.passing(classes: 6, tests: 3, seconds: 0.1)
        let returning = ScriptedTransport(name: "returning", slots: 1, script: script, loseAfter: 1, comesBack: true, clock: clock)
        let outcome = try await run(script, on: [returning, ScriptedTransport(name: "steady", slots: 1, script: script, clock: clock)], clock: clock) {
            $0.splitClasses = false
        }
        let report = outcome.report
        #expect(outcome.exitCode == .success, "\(report.warnings)")
        expectEveryTestOnce(report, script)
        #expect(returning.prepares == 2, "deployed again after the loss")
        #expect(report.warnings.contains { $0.contains("agent returning is back and takes work again") }, "\(report.warnings)")
        let afterReturn = report.units.filter { $0.agent == "returning" && $0.ending == "exit 0" }
        #expect(!afterReturn.isEmpty, "it ran units again: \(report.units.map { "\($0.agent) \($0.ending)" })")
    }
}
