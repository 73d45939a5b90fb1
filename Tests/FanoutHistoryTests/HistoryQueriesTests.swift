import FanoutCore
import FanoutTestSupport
@testable import FanoutHistory
import Foundation
import Testing

@Suite("Queries behind `fanout history show`", .timeLimit(.minutes(2)))
struct HistoryQueriesTests {
    let login = SuiteID(module: "AppTests", name: "LoginTests")

    @Test func recentRunsNewestFirstWithCountsAndTimes() throws {
        let store = try HistoryStore.inMemory()
        var first = ReportBuilder("first", minute: 0)
        first.addClass("LoginTests", tests: 3, actual: 1)
        var second = ReportBuilder("second", minute: 5)
        second.addClass("LoginTests", tests: 2, actual: 1, outcome: .failed)
        second.addClass("CartTests", tests: 1, actual: 1, outcome: .skipped)
        try store.record(second.build(exitCode: 1))
        try store.record(first.build())

        let runs = try store.recentRuns(limit: 10)
        #expect(runs.map(\.runID) == ["second", "first"])
        let newest = try #require(runs.first)
        #expect(newest.counts == Counts([.failed, .failed, .skipped]))
        #expect(newest.exitCode == 1)
        #expect(newest.startedAt == second.startedAt)
        #expect(newest.destinations == ["local"])
        #expect(newest.wall == 25 && newest.makespan == 18 && newest.lowerBound == 15)
        #expect(newest.efficiency == 1.2)
        #expect(try store.recentRuns(limit: 1).map(\.runID) == ["second"])
    }

    @Test func classStatsGivePercentilesOfCountedRuns() throws {
        let store = try HistoryStore.inMemory()
        for (minute, seconds) in [1.0, 2, 3, 4, 5].enumerated() {
            var run = ReportBuilder("run-\(minute)", minute: minute)
            run.addClass("LoginTests", tests: 2 + minute, actual: seconds)
            run.addClass("CartTests", actual: 0.5)
            run.addClass("LoginTests", actual: 100, destination: "other")
            try store.record(run.build())
        }
        var crashed = ReportBuilder("crashed", minute: 9)
        crashed.addClass("LoginTests", actual: 50, outcome: .crashed)
        try store.record(crashed.build())

        let stats = try store.classStats(destination: "local")
        #expect(stats.map(\.suite.name) == ["LoginTests", "CartTests"])  // slowest first
        let stat = try #require(stats.first)
        #expect(stat.runs == 5)
        #expect(stat.last == 5)
        #expect(stat.p50 == 3)
        #expect(stat.p80 == 4.2)
        #expect(stat.max == 5)
        #expect(stat.testCount == 6)

        #expect(try store.classStats(destination: "local", window: 2).first?.p50 == 4.5)
        #expect(try store.classStats(destination: "local", limit: 1).count == 1)
        let everywhere = try store.classStats(destination: nil)
        #expect(everywhere.map(\.destination) == ["other", "local", "local"])
    }

    @Test func flakyTestsCountRunsWhereATestFailedThenPassed() throws {
        let store = try HistoryStore.inMemory()
        let shaky = TestID(suite: login, name: "testShaky")
        let steady = TestID(suite: login, name: "testSteady")
        let plan: [(Outcome, [(Outcome, Double)])] = [
            (.flaky, [(.failed, 1), (.passed, 1)]),
            (.passed, [(.passed, 1)]),
            (.flaky, [(.failed, 1), (.failed, 1), (.passed, 1)]),
            (.passed, [(.passed, 1)]),
        ]
        for (minute, (outcome, attempts)) in plan.enumerated() {
            var run = ReportBuilder("run-\(minute)", minute: minute)
            run.addTest(shaky, outcome: outcome, attempts: attempts)
            run.addTest(steady, outcome: .passed, attempts: [(.passed, 1)])
            try store.record(run.build())
        }

        let all = try store.flakyTests(runs: 10)
        // No product digests: each run is a product of its own, so the two fail-then-pass runs are the evidence,
        // and every attempt counts (it passed in every run): 3 failures in 7 attempts.
        #expect(all == [FlakyStat(test: shaky, destination: "local", runs: 4, attempts: 7,
                                  score: FlakeScore(attempts: 7, failures: 3, runs: 4, flakyRuns: 2, mixedProducts: 2,
                                                    firstSeen: ReportBuilder("", minute: 0).startedAt,
                                                    lastSeen: ReportBuilder("", minute: 2).startedAt))])
        #expect(all.first?.rate == 0.5)
        // The newest two runs hold one flaky run of two.
        #expect(try store.flakyTests(runs: 2).first?.flakyRuns == 1)
        #expect(try store.flakyTests(runs: 1).isEmpty)
    }

    /// Two runs of one build (by its SHA-256) that gave a test both verdicts are evidence of a flake without any
    /// retry; failures on a build the test never passed on are a break, not a flake, and are left out.
    @Test func oneBuildGivingBothVerdictsIsAFlakeAndABuildItNeverPassedOnIsNot() throws {
        let store = try HistoryStore.inMemory()
        let coin = TestID(suite: login, name: "testCoin")
        let broken = TestID(suite: login, name: "testBrokenInBuildB")
        let steady = TestID(suite: login, name: "testSteady")
        // Build A: four runs, testCoin fails in one; build B: two runs, testBrokenInBuildB fails in both (it passed
        // on A); a run of unknown build where testCoin fails alone: no evidence either way.
        let plan: [(product: String?, coin: Outcome, broken: Outcome)] = [
            ("a", .passed, .passed), ("a", .failed, .passed), ("a", .passed, .passed), ("a", .passed, .passed),
            ("b", .passed, .failed), ("b", .passed, .failed), (nil, .failed, .passed),
        ]
        for (minute, run) in plan.enumerated() {
            var b = ReportBuilder("run-\(minute)", minute: minute)
            b.addTest(coin, outcome: run.coin, attempts: [(run.coin, 1)])
            b.addTest(broken, outcome: run.broken, attempts: [(run.broken, 1)])
            b.addTest(steady, outcome: .passed, attempts: [(.passed, 1)])
            var report = b.build(exitCode: run.coin == .failed || run.broken == .failed ? 1 : 0)
            report.product.sha256 = run.product.map { String(repeating: $0, count: 64) }
            try store.record(report)
        }
        let flaky = try store.flakyTests(runs: 20)
        #expect(flaky.map(\.test) == [coin], "\(flaky)")
        let score = try #require(flaky.first?.score)
        // A's 4 attempts and B's 2 (it passed on B); the unknown build's lone failure is left out.
        #expect(score.attempts == 6 && score.failures == 1 && score.mixedProducts == 1 && score.runs == 6, "\(score)")
        #expect(score.flakyRuns == 0, "no retry: the evidence is the build's two verdicts")
        #expect(score.firstSeen == ReportBuilder("", minute: 1).startedAt && score.lastSeen == score.firstSeen)
        #expect(flaky.first?.runs == 7, "every run that ran it")
        // The newest three runs hold no build that gave testCoin both verdicts.
        #expect(try store.flakyTests(runs: 3).isEmpty)
        // The build's identity survives an export and an import.
        let copy = try HistoryStore.inMemory()
        _ = try copy.importRuns(try store.exportRuns())
        #expect(try copy.flakyTests(runs: 20) == flaky)
    }

    @Test func measurementsRoundTrip() throws {
        let store = try HistoryStore.inMemory()
        let test = TestID(suite: login, name: "testMeasureLogin")
        for minute in 0..<3 {
            var run = ReportBuilder("run-\(minute)", minute: minute)
            run.addMeasurement(test, values: [0.1, 0.2, Double(minute)])
            try store.record(run.build())
        }
        let past = try store.measurements(of: test, destination: "local", limit: 2)
        #expect(past.map(\.runID) == ["run-2", "run-1"])
        let newest = try #require(past.first)
        #expect(newest.measurement.values == [0.1, 0.2, 2])
        #expect(newest.measurement.identifier == "org.swift.XCTPerformanceMetric_WallClockTime")
        #expect(newest.measurement.maxPercentRelativeStandardDeviation == 10)
        #expect(newest.measurement.test == test)
        #expect(try store.measurements(of: test, destination: "elsewhere").isEmpty)
    }

    @Test func aTrendIsOneResultPerEarlierRunOfTheSameMetricDestinationAndHardwareClass() throws {
        let store = try HistoryStore.inMemory()
        let test = TestID(suite: login, name: "testMeasureLogin")
        let xeon = "Intel Xeon × 8"
        for minute in 0..<4 {
            var run = ReportBuilder("run-\(minute)", minute: minute)
            // Two results of the metric in one run (a retry): the run's last one counts, as for baselines.
            run.addMeasurement(test, values: [9, 9], hardwareClass: xeon)
            run.addMeasurement(test, values: [Double(minute)], hardwareClass: xeon, baseline: minute >= 2 ? 1.5 : nil)
            // Never part of the trend: another metric, another hardware class, an unknown one, another destination.
            run.addMeasurement(test, values: [50], identifier: "org.swift.XCTPerformanceMetric_Other", hardwareClass: xeon)
            run.addMeasurement(test, values: [60], hardwareClass: "Apple M2 × 10")
            run.addMeasurement(test, values: [70], hardwareClass: nil)
            try store.record(run.build())
        }
        var elsewhere = ReportBuilder("run-9", minute: 9, destination: "release")
        elsewhere.addMeasurement(test, values: [80], hardwareClass: xeon)
        try store.record(elsewhere.build())

        let trend = try store.measurementTrend(of: test, metric: "org.swift.XCTPerformanceMetric_WallClockTime",
                                               destination: "local", hardwareClass: xeon, excludingRun: "run-3", limit: 2)
        #expect(trend.map(\.runID) == ["run-2", "run-1"], "newest first, the excluded run left out, at most 2")
        #expect(trend.map(\.measurement.values) == [[2], [1]])
        #expect(trend.map(\.baseline) == [1.5, nil])
        #expect(trend.allSatisfy { $0.hardwareClass == xeon })
        let unknown = try store.measurementTrend(of: test, metric: "org.swift.XCTPerformanceMetric_WallClockTime",
                                                 destination: "local", hardwareClass: nil, excludingRun: "none")
        #expect(unknown.map(\.measurement.values) == [[70], [70], [70], [70]], "unknown matches unknown only")
        #expect(unknown.allSatisfy { $0.hardwareClass == Baseline.unknownHardwareClass })
    }

    @Test(arguments: [
        ([5.0], 0.8, 5.0),
        ([1.0, 2, 3, 4, 5], 0.5, 3.0),
        ([1.0, 2, 3, 4, 5], 0.8, 4.2),
        ([4.0, 1], 0.5, 2.5),
        ([1.0, 2, 3], 1.0, 3.0),
        ([1.0, 2, 3], 0.0, 1.0),
    ])
    func percentileInterpolatesBetweenRanks(values: [Double], fraction: Double, expected: Double) {
        let result = Statistics.percentile(values, fraction) ?? .nan
        #expect(abs(result - expected) < 1e-9)
    }

    @Test func percentileOfNothingIsNil() {
        #expect(Statistics.percentile([], 0.5) == nil)
    }
}
