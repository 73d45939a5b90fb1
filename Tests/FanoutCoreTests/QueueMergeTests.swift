import FanoutCore
import Foundation
import Testing

/// The merged report of a queue-mode build, from the queue's items and results and the jobs' own reports.
struct QueueMergeTests {
    let suite = SuiteID(module: "M", name: "C")

    func item(_ number: Int, _ tests: [String], state: String = "done", worker: String? = "1", retryOf: Int? = nil) -> QueueMerge.Item {
        QueueMerge.Item(number: number, work: WorkItem(suite: suite, framework: .xctest, destination: "local", tests: tests,
                                                       isWholeSuite: false, estimate: 1, source: .history(samples: 1)),
                        state: state, worker: worker, retryOf: retryOf)
    }

    func result(_ test: String, _ outcome: Outcome, agent: String = "a") -> TestResult {
        TestResult(id: TestID(suite: suite, name: test), framework: .xctest, destination: "local", outcome: outcome,
                   attempts: [Attempt(outcome: outcome, duration: 0.5, unit: 1, agent: agent)])
    }

    @Test func aFailureThatPassedOnAnotherJobIsFlakyWithBothAttemptsAndTheBuildIsGreen() {
        let merged = QueueMerge.merge(build: "b", items: [item(1, ["t1", "t2"]), item(2, ["t2"], worker: "2", retryOf: 1)],
                                      results: [result("t1", .passed), result("t2", .failed, agent: "job 1"),
                                                result("t2", .passed, agent: "job 2")],
                                      jobReports: [], drained: true, finishedAt: Date())
        let t2 = merged.report.results.first { $0.id.name == "t2" }
        #expect(t2?.outcome == .flaky)
        #expect(t2?.attempts.map(\.agent) == ["job 1", "job 2"])
        #expect(merged.report.results.count == 2, "the retry item asks for no test of its own")
        #expect(merged.report.exitCode == 0 && merged.missing.isEmpty)
    }

    @Test func aTestNoJobCompletedIsNotRunWithItsItemsStateAndTheExitCodeIs3EvenWithFailures() {
        let merged = QueueMerge.merge(build: "b", items: [item(1, ["t1"]), item(2, ["t2"], state: "reserved", worker: "3"),
                                                          item(3, ["t3"], state: "queued", worker: nil)],
                                      results: [result("t1", .failed)], jobReports: [], drained: false, finishedAt: Date())
        #expect(merged.report.results.map(\.outcome) == [.failed, .notRun, .notRun])
        #expect(merged.missing.count == 2)
        #expect(merged.missing[0].contains("still held by job 3") && merged.missing[1].contains("never taken"), "\(merged.missing)")
        #expect(merged.report.exitCode == 3)
        #expect(merged.report.warnings.first?.contains("2 tests of build b never completed (the queue was not drained") == true)
    }

    @Test func theJobsQuarantineMutesAFailureAndKeepsItsSkippedTests() {
        let mute = QuarantineEntry(test: "M.C/t1", mode: .mute, reason: "flaky", added: "2026-11-01", expires: "2026-12-31")
        let skip = QuarantineEntry(test: "M.C/t9", mode: .skip, reason: "broken", added: "2026-11-01", expires: "2026-12-31")
        var muted = result("t1", .passed)
        muted.quarantine = mute
        var skipped = result("t9", .skipped)
        skipped.quarantine = skip
        let job = RunReport(runID: "r1", fanoutVersion: "0", startedAt: Date(), finishedAt: Date(), interrupted: false,
                            product: ProductInfo(package: nil, bundle: "x"), destinations: ["local"], agents: [],
                            plan: PlanReport(slots: 1, lowerBound: 1, predictedMakespan: 1, totalEstimate: 1), units: [],
                            classes: [], results: [muted, skipped], measurements: [], warnings: [],
                            timing: Timing(wall: 1, preparation: 0, makespan: 1, lowerBound: 1), exitCode: 0)
        let merged = QueueMerge.merge(build: "b", items: [item(1, ["t1"])], results: [result("t1", .failed)],
                                      jobReports: [job], drained: true, finishedAt: Date())
        #expect(merged.report.results.map(\.id.name) == ["t1", "t9"])
        #expect(merged.report.results.first?.isMutedFailure == true, "the failure is muted, as the job muted it")
        #expect(merged.report.counts.muted == 1 && merged.report.counts.skipped == 1)
        #expect(merged.report.exitCode == 0)
    }

    @Test func theJobsReportsGiveAgentsAndClassTimesButNotResults() {
        var job = RunReport(runID: "r1", fanoutVersion: "0", startedAt: Date(timeIntervalSince1970: 10),
                            finishedAt: Date(timeIntervalSince1970: 20), interrupted: true,
                            product: ProductInfo(package: nil, bundle: "x"), destinations: ["local"],
                            agents: [AgentInfo(name: "local", transport: "local", slots: 2)],
                            plan: PlanReport(slots: 2, lowerBound: 1, predictedMakespan: 1, totalEstimate: 1),
                            units: [], classes: [ClassReport(suite: suite, framework: .xctest, destination: "local", testCount: 1,
                                                             estimate: 1, estimateSource: "history", actual: 4.5,
                                                             outcome: .failed, timingIsComplete: true, agent: "local")],
                            results: [result("t1", .failed)], measurements: [], warnings: [],
                            timing: Timing(wall: 10, preparation: 1, makespan: 9, lowerBound: 1), exitCode: 1)
        job.shard = nil
        let merged = QueueMerge.merge(build: "b", items: [item(1, ["t1"])], results: [result("t1", .passed)],
                                      jobReports: [job], drained: true, finishedAt: Date())
        #expect(merged.report.results.map(\.outcome) == [.passed], "the queue's result, not the job's")
        #expect(merged.report.agents.map(\.name) == ["local"])
        #expect(merged.report.classes.first?.actual == 4.5 && merged.report.classes.first?.outcome == .passed)
        #expect(!merged.report.interrupted && merged.report.exitCode == 0, "an interrupted job gave its work back")
    }
}
