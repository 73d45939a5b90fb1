import FanoutAgents
import FanoutCoordinator
import FanoutCore
import FanoutHistory
import Foundation
import Testing

/// Flake scores and flake hunting against tests whose failure probabilities are known (LongSuite's FlakyTests: each
/// fails with probability p, drawn from the FANOUT_SEED Fanout gives its process).
@Suite(.serialized, .timeLimit(.minutes(10))) struct FlakeHuntTests {
    static let probabilities: [String: Double] = [
        "FlakyTests.FlakeP02Tests/testFailsTwoPercent": 0.02, "FlakyTests.FlakeP10Tests/testFailsTenPercent": 0.10,
        "FlakyTests.FlakeP30Tests/testFailsThirtyPercent": 0.30, "FlakyTests.FlakeP50Tests/testFailsHalfTheTime": 0.50,
    ]

    /// The truth by construction: the fixture's own rule (SeededFlakyTests.swift's SeededCoin, copied here, not
    /// asked of Fanout): whether `name` fails in a process given FANOUT_SEED `seed`.
    static func fails(_ test: String, seed: Int) -> Bool {
        let name = String(test.split(separator: "/").last ?? "")
        guard let p = probabilities[test] else { return false }
        return seededDraw(seed: seed, name: name) < p
    }

    func settings(_ dir: TempDir, filters: [String]) async throws -> RunSettings {
        var s = RunSettings()
        s.bundlePath = try await LongSuite.shared.bundle()
        s.filters = filters
        s.slots = 4
        s.historyPath = dir.file("history.sqlite")
        s.reportDirectory = dir.file("report")
        s.quarantinePath = dir.file("quarantine.yml")
        return s
    }

    /// 40 ordinary runs of one build, each with its own seed: every flaky test's score interval holds its true
    /// probability, and a proposal names no stable test.
    @Test func fortyRunsScoreEachSeededFlakeWithinItsIntervalAndProposeNoStableTest() async throws {
        let dir = try TempDir()
        var failures: [String: Int] = [:]
        for run in 1...40 {
            var s = try await settings(dir, filters: ["^FlakyTests\\."])
            s.seed = run
            let outcome = try await Coordinator(settings: s).run()
            #expect(outcome.report.results.count == 8)
            // Every verdict is the one the seed makes: the process's FANOUT_SEED (repetition 0, first attempt).
            let seed = RepeatReport.seed(run: run, repetition: 0, retry: 0)
            for test in Self.probabilities.keys {
                let truth = Self.fails(test, seed: seed)
                if truth { failures[test, default: 0] += 1 }
                #expect(outcome.report.result(test)?.outcome == (truth ? .failed : .passed), "run \(run): \(test)")
            }
        }
        let (store, _) = try HistoryStore.open(at: dir.file("history.sqlite"))
        let stats = try store.flakyTests(runs: 40)
        for (test, p) in Self.probabilities {
            let failed = failures[test] ?? 0
            let stat = stats.first { $0.test.description == test }
            if failed == 0 {
                #expect(stat == nil, "\(test) never failed in these 40 seeds: no score")
                continue
            }
            let score = try #require(stat, "\(test) failed \(failed) times in 40: it has a score").score
            #expect(score.attempts == 40 && score.failures == failed, "\(test): \(score.summary), the seeds say \(failed) of 40")
            #expect(score.interval.contains(p), "\(test): \(score.summary) should hold \(p)")
        }
        #expect(!stats.contains { $0.test.suite.name == "StableTests" })
        let proposal = try QuarantineProposal().apply(historyPath: dir.file("history.sqlite"),
                                                      quarantinePath: dir.file("quarantine.yml"), settings: RunSettings(),
                                                      today: QuarantineFile.day(), dryRun: true)
        #expect(!proposal.added.isEmpty, "the 30 % and 50 % tests are over any threshold")
        #expect(proposal.added.allSatisfy { Self.probabilities[$0.test] != nil }, "\(proposal.added.map(\.test))")
        #expect(proposal.added.contains { $0.test.hasSuffix("testFailsHalfTheTime") })
    }

    /// `--repeat 5`: five repetitions of every test, each in a process of its own, with each test's pass rate.
    @Test func repeatRunsEveryTestInSeparateProcessesAndReportsItsPassRate() async throws {
        let dir = try TempDir()
        var s = try await settings(dir, filters: ["^FlakyTests\\.(StableTests|FlakeP50Tests)$"])
        s.repeatCount = 5
        s.seed = 7
        s.retries = 2 // off under --repeat: each repetition is one attempt
        let outcome = try await Coordinator(settings: s).run()
        let r = outcome.report
        #expect(r.repeatRun?.repetitions == 5 && r.repeatRun?.seed == 7)
        #expect(r.results.count == 5, "every test once, its repetitions as attempts")
        for result in r.results {
            #expect(result.attempts.map(\.repetition) == [1, 2, 3, 4, 5], "\(result.id)")
            #expect(result.repeats?.ran == 5)
            // Never two repetitions in one process.
            #expect(Set(result.attempts.map(\.unit)).count == 5, "\(result.id): \(result.attempts.map(\.unit))")
            #expect(result.attempts.allSatisfy { $0.seed != nil })
        }
        let stable = r.results.filter { $0.id.suite.name == "StableTests" }
        #expect(stable.allSatisfy { $0.outcome == .passed && $0.repeats?.passRate == 1 })
        let test = "FlakyTests.FlakeP50Tests/testFailsHalfTheTime"
        let flaky = try #require(r.result(test))
        let stats = try #require(flaky.repeats)
        // The truth of each repetition: its process's FANOUT_SEED under run seed 7.
        let truth = (1...5).map { Self.fails(test, seed: RepeatReport.seed(run: 7, repetition: $0, retry: 0)) }
        #expect(flaky.attempts.map { $0.outcome == .failed } == truth, "repetition by repetition: \(flaky.attempts.map(\.outcome))")
        #expect(stats.failed == truth.filter { $0 }.count && stats.passed == truth.filter { !$0 }.count)
        let anyFailed = truth.contains(true)
        #expect(flaky.outcome == (anyFailed ? .failed : .passed), "a failure in any repetition is a failure")
        #expect(outcome.exitCode == (anyFailed ? .testFailures : .success))
        // The history learns one repetition's time for a class, not five.
        let classes = r.classes.filter { $0.suite.name == "StableTests" }
        #expect(classes.count == 1)
        let json = try String(contentsOfFile: dir.file("report/report.json"), encoding: .utf8)
        #expect(json.contains("\"repeats\"") && json.contains("\"repeatRun\""))
    }

    /// `--until-failure` on a test that fails with p = 0.1: over seeds, the repetition of its first failure follows
    /// the geometric law of p (every repetition before it passed), and the reported seed replays the failure.
    @Test func untilFailureFindsAOneInTenFlakeInAttemptsConsistentWithItsProbability() async throws {
        let dir = try TempDir()
        var firsts: [Int] = []
        for seed in 1...8 {
            var s = try await settings(dir, filters: ["FlakeP10Tests"])
            s.untilFailure = true
            s.seed = seed
            s.recordHistory = false
            s.reportDirectory = dir.file("report-\(seed)")
            let outcome = try await Coordinator(settings: s).run()
            let first = try #require(outcome.report.repeatRun?.firstFailure, "seed \(seed): no failure in 100 repetitions")
            let truth = (1...100).first { Self.fails("FlakyTests.FlakeP10Tests/testFailsTenPercent",
                                                     seed: RepeatReport.seed(run: seed, repetition: $0, retry: 0)) }
            #expect(first.repetition == truth, "seed \(seed): the seeds make repetition \(truth ?? 0) the first failure")
            #expect(outcome.exitCode == .testFailures)
            let result = try #require(outcome.report.results.first)
            #expect(result.attempts.filter { ($0.repetition ?? 0) < first.repetition }.allSatisfy { $0.outcome == .passed },
                    "every repetition before the first failure ran and passed")
            #expect(Set(result.attempts.compactMap(\.repetition)).isSuperset(of: Set(1...first.repetition)))
            #expect(result.attempts.count < 100, "it stopped")
            #expect(first.agent == "local" && first.seed != nil)
            firsts.append(first.repetition)
            if seed == 1 {
                // The seed replays it: the binary alone, given that FANOUT_SEED, fails the same test.
                let bundle = try await LongSuite.shared.bundle()
                let (ending, out, _) = await LocalTransport(slots: 1).capture(Command(
                    executable: bundle, arguments: ["FlakyTests.FlakeP10Tests"],
                    environment: ["FANOUT_SEED": String(first.seed ?? 0)]))
                #expect(ending != .exited(0), "FANOUT_SEED=\(first.seed ?? 0) replays the failure")
                #expect(String(decoding: out, as: UTF8.self).contains("seeded flake (p = 0.10)"))
            }
        }
        // n geometric draws of p = 0.1 average 1/p = 10 (standard deviation 3.4 over 8): their estimate of p must be
        // within about three standard deviations.
        let estimate = Double(firsts.count) / Double(firsts.reduce(0, +))
        #expect(estimate > 0.04 && estimate < 0.35, "first failures \(firsts): p ≈ \(estimate)")
        #expect(firsts.allSatisfy { $0 <= 66 }, "P(first failure after 66) < 0.001: \(firsts)")
    }

    /// `--repeat 20` of the demo suite on four real sshd agents: every test runs 20 times, on at least 3 agents.
    @Test func repeatTwentyOverTheDemoSuiteOnTheFleetSpreadsEachTestOverAtLeastThreeAgents() async throws {
        let dir = try TempDir()
        var s = try await IntegrationFleet.ssh.runSettings(dir, env: ["DEMO_LATENCY_SCALE": "0.05"])
        s.repeatCount = 20
        s.recordHistory = false
        let outcome = try await Coordinator(settings: s).run()
        let r = outcome.report
        #expect(Set(r.agents.map(\.name)).count == 4)
        #expect(r.results.count > 50)
        for result in r.results {
            #expect(result.attempts.count == 20, "\(result.id): \(result.attempts.count) repetitions")
            let agents = Set(result.attempts.map(\.agent))
            #expect(agents.count >= 3, "\(result.id) ran on \(agents.sorted())")
        }
        #expect(outcome.exitCode == .success, "the demo suite passes every repetition: \(r.counts)")
    }

    @Test func theCLISaysWhichRepetitionAgentAndSeedFailedFirst() async throws {
        let dir = try TempDir()
        let bundle = try await LongSuite.shared.bundle()
        let (code, out, err) = try await runCLI(["run", "--bundle", bundle, "--filter", "FlakeP30Tests", "--until-failure",
                                                 "--seed", "3", "--no-record", "--report-dir", dir.file("r"),
                                                 "--quarantine", dir.file("q.yml")])
        #expect(code == 1, "\(err)")
        #expect(out.contains("Repeat (until the first failure, at most 100 repetitions, seed 3)"), "\(out)")
        #expect(out.contains("first failure: FlakyTests.FlakeP30Tests/testFailsThirtyPercent in repetition "), "\(out)")
        #expect(out.contains("agent local") && out.contains("FANOUT_SEED="), "\(out)")
        let (bad, _, badErr) = try await runCLI(["run", "--bundle", bundle, "--repeat", "0"])
        #expect(bad == 2 && badErr.contains("--repeat must be between 1 and 10000"), "\(badErr)")
    }
}
