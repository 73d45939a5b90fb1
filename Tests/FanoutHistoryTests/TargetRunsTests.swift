import FanoutCore
@testable import FanoutHistory
import Foundation
import Testing

/// Selective testing's record of test targets: newest first per target and destination, bounded, and carried by
/// an export into another store without duplicates.
@Suite("Test target verdicts in the history", .timeLimit(.minutes(1)))
struct TargetRunsTests {
    func row(_ target: String, _ verdict: TargetVerdict, run: String, second: Double, destination: String = "local") -> TargetRun {
        TargetRun(target: target, destination: destination, fingerprint: "fp-\(run)", parts: ["files of \(target)": run],
                  verdict: verdict, reason: verdict == .passed ? nil : "1 failed of 2", runID: run, commit: "abc",
                  recordedAt: Date(timeIntervalSince1970: 1_800_000_000 + second))
    }

    @Test func rowsComeBackNewestFirstPerTargetAndDestination() throws {
        let store = try HistoryStore.inMemory()
        try store.recordTargets([row("A", .passed, run: "r1", second: 1), row("B", .failed, run: "r1", second: 1)])
        try store.recordTargets([row("A", .failed, run: "r2", second: 2), row("A", .passed, run: "r2", second: 2, destination: "linux")])
        let read = try store.targetRuns(destinations: ["local"])
        #expect(read["local"]?["A"]?.map(\.runID) == ["r2", "r1"])
        #expect(read["local"]?["A"]?.first?.verdict == .failed)
        #expect(read["local"]?["A"]?.last?.parts == ["files of A": "r1"])
        #expect(read["local"]?["B"]?.first?.reason == "1 failed of 2")
        #expect(read["linux"] == nil, "only the destinations asked for")
        // Recording the same run again replaces its rows.
        try store.recordTargets([row("A", .passed, run: "r2", second: 2)])
        #expect(try store.targetRuns(destinations: ["local"])["local"]?["A"]?.first?.verdict == .passed)
    }

    @Test func onlyTheNewestRowsOfATargetAreKept() throws {
        let store = try HistoryStore.inMemory()
        let n = HistoryStore.targetRunsKept + 5
        try store.recordTargets((0..<n).map { row("A", .passed, run: "r\($0)", second: Double($0)) })
        try store.recordTargets([row("B", .passed, run: "b", second: 0)])
        let rows = try store.targetRuns(destinations: ["local"])["local"] ?? [:]
        #expect(rows["A"]?.count == HistoryStore.targetRunsKept)
        #expect(rows["A"]?.first?.runID == "r\(n - 1)")
        #expect(rows["B"]?.count == 1, "another target keeps its own")
    }

    @Test func anExportCarriesTheVerdictsAndAnImportAddsEachOnce() throws {
        let store = try HistoryStore.inMemory()
        let rows = [row("A", .passed, run: "r1", second: 1), row("A", .failed, run: "r2", second: 2)]
        try store.recordTargets(rows)
        let export = HistoryExport(exportedAt: Date(), fanoutVersion: "test", runs: try store.exportRuns(),
                                   targets: try store.allTargetRuns())
        let back = try HistoryExport.decode(try export.encoded(), path: "export.json")
        #expect(back.targets == rows)
        let other = try HistoryStore.inMemory()
        #expect(try other.importTargetRuns(back.targets ?? []) == 2)
        #expect(try other.importTargetRuns(back.targets ?? []) == 0, "the same export again adds nothing")
        #expect(try other.targetRuns(destinations: ["local"])["local"]?["A"]?.map(\.runID) == ["r2", "r1"])
    }

    @Test func anExportOfAnOlderFanoutHasNoVerdicts() throws {
        let old = #"{"format":"fanout-history","version":1,"exportedAt":"2026-01-01T00:00:00Z","fanoutVersion":"0.0.9","runs":[]}"#
        #expect(try HistoryExport.decode(Data(old.utf8), path: "old.json").targets == nil)
    }
}
