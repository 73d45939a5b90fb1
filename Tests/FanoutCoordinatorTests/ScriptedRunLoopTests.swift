@testable import FanoutCoordinator
import FanoutCore
import FanoutHistory
import FanoutTestSupport
import Foundation
import Synchronization
import Testing

/// The real run loop (Dispatcher, AgentServer, UnitExecution, the collector and XCTest's parser) on scripted agents:
/// no test process, no SSH. The coordinator and the agents keep time on one `VirtualClock`, which jumps to the next
/// deadline whenever the run has settled: the straggler (a unit must overrun its estimate by a second), the steals,
/// the time limits and the re-admission back-off (a second) take virtual time, and no test waits for real time.
/// The limit is three minutes: the back-off test took about 50 s of real time on 2 cores (10 s since the clock
/// settles after 256 yields), and crossed a minute when other suites shared the cores (a deadline against hangs,
/// not a speed test).
@Suite(.timeLimit(.minutes(3))) struct ScriptedRunLoopTests {
    /// Runs `script` on these agents, the catalog handed straight to the coordinator (no discovery process).
    func run(_ script: Script, on agents: [ScriptedTransport], clock: VirtualClock,
             _ configure: (inout RunSettings) -> Void = { _ in },
             phase: @escaping @Sendable (String) -> Void = { _ in }) async throws -> FinishedRun {
        let (coordinator, folder) = try coordinator(script, on: agents, clock: clock, configure, phase: phase)
        // 256 quiet yields before time jumps: 4× the most seen to pass before a unit's output was read in a full
        // test run, and half the clock's default, which made the backoff test alone take 55 s of this target's 60.
        // (Seen to hold with both cores kept busy by other processes, 3 runs of 3.)
        let finished = try await clock.run(settle: 256) { try await coordinator.run() }
        withExtendedLifetime(folder) {}
        return finished
    }

    /// The coordinator `run` drives (and the folder its run writes to, kept as long as the caller holds it).
    func coordinator(_ script: Script, on agents: [ScriptedTransport], clock: any Clock<Duration>,
                     _ configure: (inout RunSettings) -> Void = { _ in },
                     phase: @escaping @Sendable (String) -> Void = { _ in }) throws -> (Coordinator, TempDir) {
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
        return (coordinator, dir)
    }

    /// A run opens its timing history once, from preparation (estimates, the classes that measure) to recording:
    /// the first run creates it at the end, the second reads it at the start and records into the same session.
    @Test func aRunOpensItsHistoryOnce() async throws {
        let history = try TempDir()
        let script = Script.passing(classes: 4, tests: 2, seconds: 1)
        for round in 1...2 {
            let clock = VirtualClock()
            let (coordinator, folder) = try coordinator(script, on: [ScriptedTransport(name: "a", slots: 2, script: script, clock: clock)],
                                                        clock: clock) { $0.historyPath = history.file("history.sqlite") }
            let finished = try await clock.run(settle: 256) { try await coordinator.run() }
            withExtendedLifetime(folder) {}
            expectEveryTestOnce(finished.report, script)
            #expect(coordinator.history.opens == 1, "round \(round): opened \(coordinator.history.opens) times")
            // Closed when the run ended: the file alone holds every run so far (what a CI cache copies).
            let path = history.file("history.sqlite")
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "round \(round): the write-ahead log is left over")
            let copy = history.file("copy-\(round).sqlite")
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            #expect(try HistoryStore.open(at: copy).store.recentRuns(limit: 10).count == round)
            if round == 2 {
                #expect(!finished.report.classes.isEmpty && finished.report.classes.allSatisfy { $0.estimateSource.contains("history") },
                        "the second run's estimates came from the history: \(finished.report.classes.map(\.estimateSource))")
            }
        }
    }

    /// And no stage of a run opens the history by itself: only the session does (the run's stages live in Run/ and
    /// Selective/; the inspection commands and `fanout bisect` are runs of their own).
    @Test func onlyTheSessionOpensTheHistoryDuringARun() throws {
        for folder in ["Run", "Selective"] {
            let root = repositoryRoot.appendingPathComponent("Sources/FanoutCoordinator/" + folder)
            let files = try FileManager.default.contentsOfDirectory(atPath: root.path).filter { $0.hasSuffix(".swift") }
            #expect(files.count > 3)
            for file in files where file != "HistorySession.swift" {
                let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                #expect(!text.contains("HistoryStore.open("), "Sources/FanoutCoordinator/\(folder)/\(file) opens the history itself")
            }
        }
    }

    /// A session reads only a history that exists (reading creates none), opens it once, and says what opening
    /// found once.
    @Test func aHistorySessionOpensOnceAndCreatesNothingToRead() throws {
        let dir = try TempDir()
        let session = HistorySession(path: dir.file("h/history.sqlite"))
        #expect(try session.existing() == nil)
        #expect(!FileManager.default.fileExists(atPath: dir.file("h/history.sqlite")) && session.opens == 0)
        let store = try session.store()
        #expect(try session.existing() === store && (try session.store()) === store && session.opens == 1)

        // Another run moved the file aside meanwhile (a corrupt history): the session opens the one now at the path.
        try FileManager.default.moveItem(atPath: dir.file("h/history.sqlite"), toPath: dir.file("h/aside.sqlite"))
        let again = try session.store()
        #expect(again !== store && session.opens == 2 && FileManager.default.fileExists(atPath: dir.file("h/history.sqlite")))
        session.close()

        // A corrupt file is moved aside at the open: said once.
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: dir.file("bad.sqlite")))
        let bad = HistorySession(path: dir.file("bad.sqlite"))
        _ = try bad.existing()
        #expect(bad.takeNotes().count == 1 && bad.takeNotes().isEmpty)
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

    /// `timing.phases`: every phase of the run in order, on the run's clock, one after another: up to the end of the
    /// wind-down they add up to the report's `wall`, `agents` ends where the first unit started and `tests` is the
    /// makespan; the finished run adds the report files' writing, then what stopping the agents took beyond it.
    @Test func theRunsPhasesFollowEachOtherAndAddUpToItsWall() async throws {
        let clock = VirtualClock()
        let script = Script.passing(classes: 4, tests: 2)
        let (coordinator, folder) = try coordinator(script, on: [ScriptedTransport(name: "a", slots: 2, script: script,
                                                                                   clock: clock)],
                                                    clock: clock) { $0.startUpSeconds = 0.25 }
        let outcome = try await clock.run(settle: 256) { try await coordinator.run() }
        defer { withExtendedLifetime(folder) {} }
        let timing = outcome.report.timing
        let phases = try #require(timing.phases)
        #expect(phases.map(\.phase) == ["start-up", "checks", "build", "discover", "history", "estimate", "plan", "agents",
                                        "tests", "wind-down", "assemble", "judge", "record"])
        #expect(phases.first?.seconds == 0.25, "the command's own start-up, before the run's clock")
        #expect(phases.allSatisfy { $0.seconds >= 0 })
        let tests = try #require(phases.first { $0.phase == "tests" })
        #expect(abs(tests.seconds - timing.makespan) < 1e-9 && timing.makespan > 0)
        let beforeTests = phases.dropFirst().prefix { $0.phase != "tests" }.reduce(0) { $0 + $1.seconds }
        #expect(abs(beforeTests - timing.preparation) < 1e-9, "up to the first unit's start")
        let toWindDown = phases.dropFirst().prefix { $0.phase != "assemble" }.reduce(0) { $0 + $1.seconds }
        #expect(abs(toWindDown - timing.wall) < 1e-9, "\(phases) against wall \(timing.wall)")
        #expect(outcome.phases.map(\.phase) == phases.map(\.phase) + ["reports", "stopping"])
        #expect(outcome.reportFiles.map(\.phase) == ["report.json", "junit.xml", "summary.md", "report.html"])
        // And report.json keeps them.
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(
            fileURLWithPath: try #require(outcome.reportDirectory) + "/report.json"))) as? [String: Any]
        let written = (json?["timing"] as? [String: Any])?["phases"] as? [[String: Any]] ?? []
        #expect(written.compactMap { $0["phase"] as? String } == phases.map(\.phase))
        #expect(written.compactMap { $0["seconds"] as? Double } == phases.map(\.seconds))
    }

    /// The agents stop while the report is assembled and written: here their shutdown waits for report.json to be
    /// there (on a real clock, 30 s at most), which it is only when the run does not wait for them first; the run
    /// still returns only once every agent has stopped, and `--timings` names what that took (`stopping`).
    @Test func theAgentsStopWhileTheReportIsWrittenAndTheRunEndsOnceTheyHave() async throws {
        let script = Script.passing(classes: 4, tests: 2, seconds: 0.001)
        let reportFile = Mutex<String?>(nil)
        let sawTheReport = Mutex(0)
        let stopping: @Sendable () async -> Void = {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                if let file = reportFile.withLock({ $0 }), FileManager.default.fileExists(atPath: file) {
                    sawTheReport.withLock { $0 += 1 }
                    return
                }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        let agents = ["a", "b"].map { ScriptedTransport(name: $0, slots: 2, script: script, stopping: stopping) }
        let (coordinator, dir) = try coordinator(script, on: agents, clock: ContinuousClock())
        defer { withExtendedLifetime(dir) {} }
        reportFile.withLock { $0 = dir.file("report/report.json") }
        let outcome = try await coordinator.run()
        #expect(outcome.exitCode == .success)
        #expect(sawTheReport.withLock { $0 } == 2, "both agents stopped after report.json was written")
        #expect(agents.allSatisfy { $0.stoppedAt != nil }, "the run returned once every agent had stopped")
        #expect(outcome.phases.last?.phase == "stopping", "\(outcome.phases)")
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

    /// Re-admission backs off: after the loss it waits 1 s, then each refused deployment doubles the wait (1, 2, 4,
    /// 8, then 15 s); once it deploys again it takes work. One that never comes back is given up after six tries,
    /// with a warning, and the run ends with every test on the other agent.
    @Test(arguments: [3, 10])
    func aLostAgentIsTriedAgainWithBackoff(refusals: Int) async throws {
        let clock = VirtualClock()
        // Work enough for the steady agent to outlast every wait (1 + 2 + 4 + 8 + 15 + 15 = 45 s).
        let script = Script.passing(classes: 14, tests: 1, seconds: 4)
        let returning = ScriptedTransport(name: "returning", slots: 1, script: script, loseAfter: 1, comesBack: true,
                                          refusesAfterLoss: refusals, clock: clock)
        let outcome = try await run(script, on: [returning, ScriptedTransport(name: "steady", slots: 1, script: script, clock: clock)],
                                    clock: clock) { $0.splitClasses = false }
        let report = outcome.report
        #expect(outcome.exitCode == .success, "\(report.warnings)")
        expectEveryTestOnce(report, script)
        let times = returning.prepareTimes
        let gaps = zip(times.dropFirst(2), times.dropFirst()).map { $0 - $1 }
        if refusals == 3 {
            #expect(times.count == 5, "the first deployment, three refused, one that took: \(times)")
            #expect(zip(gaps, [2.0, 4, 8]).allSatisfy { abs($0 - $1) < 1e-6 } && gaps.count == 3, "waits between tries: \(gaps)")
            #expect(report.warnings.contains { $0.contains("agent returning is back and takes work again") }, "\(report.warnings)")
        } else {
            #expect(times.count == 7, "the first deployment, then six tries before it is given up: \(times)")
            #expect(zip(gaps, [2.0, 4, 8, 15, 15]).allSatisfy { abs($0 - $1) < 1e-6 } && gaps.count == 5, "waits: \(gaps)")
            #expect(report.warnings.contains { $0.contains("agent returning did not come back") }, "\(report.warnings)")
        }
    }

    /// A class whose name says nothing (not "performance") starts measuring beside other work on a first run: from
    /// its first measurement its agent takes nothing new, each measurement says whether it was taken alone, and the
    /// next run knows from the history that it measures, so it runs alone from its start.
    @Test func aClassThatMeasuresHoldsItsAgentAndIsMeasuredAloneOnceKnown() async throws {
        let history = try TempDir()
        // The class of fewest tests (a first run starts those first), measuring 0.5 s per test.
        let bench = (0..<3).map { (TestID(module: "M", suite: "Bench", name: "t\($0)"), [ScriptedTest.measured(0.5)]) }
        // More work than the other three slots finish before the first measurement: without the hold, some of it
        // would start beside the measuring class.
        let others = (0..<12).flatMap { c in
            (0..<6).map { (TestID(module: "M", suite: "C\(c)", name: "t\($0)"), [ScriptedTest.passed(0.1)]) }
        }
        let script = Script(bench + others)
        func run() async throws -> RunReport {
            let clock = VirtualClock()
            return try await self.run(script, on: [ScriptedTransport(name: "a", slots: 4, script: script, clock: clock)],
                                      clock: clock) {
                $0.historyPath = history.file("history.sqlite")
                $0.splitClasses = false
            }.report
        }
        let first = try await run()
        expectEveryTestOnce(first, script)
        #expect(first.measurements.count == 3)
        let benchUnit = try #require(first.units.first { $0.suites.contains("M.Bench") }, "\(first.units.map(\.suites))")
        #expect(benchUnit.suites == ["M.Bench"], "one unit, never cut: \(benchUnit.suites)")
        let firstMeasured = benchUnit.startedAt + 0.5
        let end = benchUnit.startedAt + benchUnit.duration
        let startedDuringHold = first.units.filter { $0.id != benchUnit.id && $0.startedAt > firstMeasured + 1e-6 && $0.startedAt < end }
        #expect(startedDuringHold.isEmpty, "nothing starts on an agent while a unit there measures: \(startedDuringHold.map(\.suites))")
        #expect(first.units.contains { $0.startedAt >= end - 1e-6 }, "work was left for after the hold: \(first.units.map { ($0.suites, $0.startedAt) })")
        let alone = first.measurements.sorted { $0.measurement.test < $1.measurement.test }.map(\.measuredAlone)
        #expect(alone.first == false, "the first measurement was taken beside other work: \(alone)")
        #expect(alone.last == true, "once the others ended, nothing else ran beside it: \(alone)")

        let second = try await run()
        let again = try #require(second.units.first { $0.suites.contains("M.Bench") })
        #expect(again.suites == ["M.Bench"])
        for other in second.units where other.id != again.id {
            let overlap = other.startedAt < again.startedAt + again.duration && again.startedAt < other.startedAt + other.duration
            #expect(!overlap, "unit \(other.id) (\(other.suites)) ran beside the class the history knows measures")
        }
        #expect(second.measurements.count == 3 && second.measurements.allSatisfy { $0.measuredAlone == true })
    }

    /// A measure test that fails XCTest's deviation rule beside other work is set aside and run again alone, once:
    /// the alone run is the verdict (a pass is a pass, not a flake), the first attempt stays as context, and a test
    /// that fails alone too fails.
    @Test func aMeasurementThatFailedBesideOtherWorkRunsAgainAloneAndThatRunIsTheVerdict() async throws {
        let clock = VirtualClock()
        let deviation = "failed: The relative standard deviation of the measurements is 21.000% which is higher than the max allowed of 10.000%."
        let noisy = TestID(module: "M", suite: "Bench", name: "t0")
        let broken = TestID(module: "M", suite: "Slow", name: "t0")
        let others = (0..<6).flatMap { c in
            (0..<3).map { (TestID(module: "M", suite: "C\(c)", name: "t\($0)"), [ScriptedTest.passed(0.1)]) }
        }
        let script = Script([(noisy, [.failed(1.0, message: deviation), .measured(1.0)]),
                             (broken, [.failed(1.0, message: deviation)])] + others)
        let outcome = try await run(script, on: [ScriptedTransport(name: "a", slots: 4, script: script, clock: clock)], clock: clock) {
            $0.splitClasses = false
            $0.retries = 1
        }
        let report = outcome.report
        expectEveryTestOnce(report, script)
        let n = try #require(report.results.first { $0.id == noisy })
        #expect(n.outcome == .passed, "the alone run decides, and a pass after a contended failure is no flake")
        #expect(n.attempts.count == 2 && n.attempts[0].contended != nil && n.attempts[1].contended == nil)
        let alone = try #require(report.units.first { $0.id == n.attempts[1].unit })
        for other in report.units where other.id != alone.id {
            let overlap = other.startedAt < alone.startedAt + alone.duration && alone.startedAt < other.startedAt + other.duration
            #expect(!overlap, "unit \(other.id) (\(other.suites)) ran beside the re-measure")
        }
        let b = try #require(report.results.first { $0.id == broken })
        #expect(b.outcome == .failed, "failing alone too is a failure")
        #expect(b.attempts.count == 3, "set aside, run again alone, then its retry: \(b.attempts.map(\.outcome))")
        #expect(b.attempts.dropFirst().allSatisfy { $0.contended == nil })
        for attempt in b.attempts.dropFirst() {
            let unit = try #require(report.units.first { $0.id == attempt.unit })
            let beside = report.units.filter {
                $0.id != unit.id && $0.startedAt < unit.startedAt + unit.duration && unit.startedAt < $0.startedAt + $0.duration
            }
            #expect(beside.isEmpty, "the re-measure and its retry are measured alone: \(beside.map(\.suites))")
        }
        #expect(outcome.exitCode == .testFailures)
    }

    /// `not_exclusive` says a class is not a performance class: what it prints holds nothing, even known from history.
    @Test func aClassSaidNotToBeAPerformanceClassSharesItsAgent() async throws {
        let history = try TempDir()
        let bench = (0..<3).map { (TestID(module: "M", suite: "Bench", name: "t\($0)"), [ScriptedTest.measured(0.5)]) }
        let others = (0..<12).flatMap { c in
            (0..<6).map { (TestID(module: "M", suite: "C\(c)", name: "t\($0)"), [ScriptedTest.passed(0.1)]) }
        }
        let script = Script(bench + others)
        for round in 1...2 {
            let clock = VirtualClock()
            let report = try await run(script, on: [ScriptedTransport(name: "a", slots: 4, script: script, clock: clock)],
                                       clock: clock) {
                $0.historyPath = history.file("history.sqlite")
                $0.splitClasses = false
                $0.notExclusive = ["^M\\.Bench$"]
            }.report
            let b = try #require(report.units.first { $0.suites.contains("M.Bench") })
            let beside = report.units.filter {
                $0.id != b.id && $0.startedAt > b.startedAt + 0.5 + 1e-6 && $0.startedAt < b.startedAt + b.duration
            }
            #expect(!beside.isEmpty, "round \(round): other work started beside it: \(report.units.map { ($0.suites, $0.startedAt) })")
        }
    }
}
