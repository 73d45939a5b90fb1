import FanoutCore
import FanoutTestSupport
import Foundation
import Testing

/// ReportMerger lives in Core; its tests build reports with this target's ReportBuilder.
@Suite(.timeLimit(.minutes(1))) struct ReportMergerTests {
    func shard(_ i: Int, of n: Int, tests: [String], failing: [String] = []) -> RunReport {
        var b = ReportBuilder()
        b.runID = "run-\(i)"
        for t in tests { b.passed(t, unit: 1) }
        for t in failing { b.failed(t, issues: [Issue(kind: .assertion, message: "boom")], unit: 2) }
        var r = b.build()
        r.shard = Shard(index: i, count: n)
        return r
    }

    @Test func shardsMergeIntoOneReportWithEveryTestOnceAndDistinctUnits() {
        let merged = ReportMerger.merge([shard(2, of: 2, tests: ["M.B/t1"], failing: ["M.B/t2"]), shard(1, of: 2, tests: ["M.A/t1", "M.A/t2"])])
        #expect(merged.problems.isEmpty)
        let r = merged.report
        #expect(r.results.map(\.id.description) == ["M.A/t1", "M.A/t2", "M.B/t1", "M.B/t2"])
        #expect(r.exitCode == 1, "a failing test fails the merged run")
        #expect(Set(r.units.map(\.id)).count == r.units.count, "unit ids stay distinct")
        for result in r.results {
            let unit = r.units.first { $0.id == result.attempts.last?.unit }
            #expect(unit?.suites.contains(result.id.suite.description) == true, "\(result.id) points at its own unit")
        }
        #expect(r.timing.makespan == 13.5)
        #expect(r.hooks == nil, "no shard had hooks")
    }

    @Test func eachShardsHooksAreKeptAndNamedAsItsAgents() {
        var one = shard(1, of: 2, tests: ["M.A/t1"]), two = shard(2, of: 2, tests: ["M.B/t1"])
        one.hooks = [HookReport(scope: .slot, phase: .setUp, agent: "local", slot: 0, worker: 0, command: "createdb a",
                                status: .passed, detail: "exit 0", startedAt: 0, duration: 0.2, output: "")]
        two.hooks = [HookReport(scope: .run, phase: .tearDown, command: "./clean.sh", status: .failed, detail: "exit 1",
                                startedAt: 9, duration: 0.1, output: "no")]
        let hooks = ReportMerger.merge([one, two]).report.hooks
        #expect(hooks?.map(\.command) == ["createdb a", "./clean.sh"])
        #expect(hooks?.first?.agent == "shard 1/2: local" && hooks?.last?.agent == nil)
    }

    @Test func aMissingShardATestInTwoShardsOrADuplicateShardIsNeverGreen() {
        let missing = ReportMerger.merge([shard(1, of: 3, tests: ["M.A/t1"]), shard(3, of: 3, tests: ["M.C/t1"])])
        #expect(missing.report.exitCode == 3)
        #expect(missing.problems == ["shard 2/3 missing: its tests are not in this report"])
        #expect(missing.report.warnings.first == "shard 2/3 missing: its tests are not in this report")

        let twice = ReportMerger.merge([shard(1, of: 2, tests: ["M.A/t1"]), shard(1, of: 2, tests: ["M.A/t1"]),
                                        shard(2, of: 2, tests: ["M.B/t1"])])
        #expect(twice.report.exitCode == 3)
        #expect(twice.problems.contains("shard 1/2 given more than once"))
        #expect(twice.problems.contains { $0.hasPrefix("M.A/t1 on linux is in shard 1/2 and shard 1/2") })
        #expect(twice.report.results.count == 2, "each test still once")

        let mixed = ReportMerger.merge([shard(1, of: 2, tests: ["M.A/t1"]), shard(2, of: 3, tests: ["M.B/t1"])])
        #expect(mixed.report.exitCode == 3)
        #expect(mixed.problems.contains { $0.hasPrefix("the reports come from different splits") })
    }
}
