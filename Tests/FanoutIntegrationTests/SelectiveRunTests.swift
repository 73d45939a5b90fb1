import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// Selective testing never gives a false green, on real builds and runs of the Diamond fixture: a change that
/// breaks a leaf is never skipped, neither on the first run after it nor on later ones; a target whose last run
/// crashed, timed out or was interrupted runs again though none of its inputs changed; unchanged targets are
/// skipped with the run that vouches for them, without building anything when nothing changed; and the verdicts
/// travel with `fanout history export/import`.
@Suite("Selective testing: no false green", .serialized, .timeLimit(.minutes(10)))
struct SelectiveRunTests {
    let dir: TempDir
    let package: String
    var runs = 0

    init() throws {
        dir = try TempDir()
        package = try diamondCopy(dir)
    }

    var crash: String { dir.file("crash-switch") }
    var hang: String { dir.file("hang-switch") }

    func settings(history: String? = nil) -> RunSettings {
        var s = RunSettings()
        s.packagePath = package
        s.slots = 2
        s.historyPath = history ?? dir.file("history.sqlite")
        s.destination = Destination(name: "local", environment: ["DIAMOND_CRASH": crash, "DIAMOND_HANG": hang])
        s.selective.enabled = true
        // A hung test is stopped at its ceiling: 4 s for LeftTests, whose switch test can block.
        s.classTimeLimits = [ClassTimeLimit(pattern: "LeftTests", stall: 3, ceiling: 4)]
        return s
    }

    mutating func run(_ settings: RunSettings? = nil) async throws -> RunReport {
        runs += 1
        var s = settings ?? self.settings()
        s.reportDirectory = dir.file("report-\(runs)")
        return try await Coordinator(settings: s).run().report
    }

    func edit(_ file: String, _ change: (String) -> String) throws {
        let path = package + "/" + file
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try change(text).write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func ran(_ report: RunReport) -> Set<String> {
        Set(report.selective?.ran.map(\.target) ?? [])
    }

    static func skipped(_ report: RunReport) -> Set<String> {
        Set(report.selective?.skipped.map(\.target) ?? [])
    }

    static func verdicts(_ report: RunReport) -> [String: TargetVerdict] {
        Dictionary(uniqueKeysWithValues: (report.selective?.verdicts ?? []).map { ($0.target, $0.verdict) })
    }

    static let all: Set<String> = ["LeafTests", "LeftTests", "BothTests"]

    @Test mutating func aBrokenLeafIsNeverSkippedAndUnchangedTargetsAre() async throws {
        let first = try await run()
        #expect(Self.ran(first) == Self.all)
        #expect(first.results.count == 7 && first.results.allSatisfy { $0.outcome == .passed })
        #expect(Self.verdicts(first) == ["LeafTests": .passed, "LeftTests": .passed, "BothTests": .passed])

        // Nothing changed: nothing is built, nothing runs, and each skip names the run that vouches for it.
        let unchanged = try await run()
        #expect(Self.skipped(unchanged) == Self.all)
        #expect(unchanged.results.isEmpty)
        #expect(unchanged.exitCode == 0)
        #expect(unchanged.product.bundle.isEmpty, "no product was built")
        #expect(unchanged.selective?.skipped.allSatisfy { $0.since == first.runID && $0.reason.contains(first.runID) } == true)

        // A change that breaks the leaf: every target above it runs and fails, on the first run after it...
        try edit("Sources/Leaf/Leaf.swift") { $0.replacingOccurrences(of: "x * 2", with: "x * 3") }
        let broken = try await run()
        #expect(Self.ran(broken) == Self.all)
        #expect(broken.exitCode == 1)
        #expect(broken.selective?.ran.allSatisfy { $0.changed?.contains("files of Leaf") == true } == true)
        #expect(Self.verdicts(broken) == ["LeafTests": .failed, "LeftTests": .failed, "BothTests": .failed])
        // ... and on every later one, while it stays broken.
        let stillBroken = try await run()
        #expect(Self.ran(stillBroken) == Self.all)
        #expect(stillBroken.exitCode == 1)
        #expect(stillBroken.selective?.ran.allSatisfy { $0.reason.contains("did not pass") } == true)

        // Reverted: the inputs equal the first run's pass, but the last verdicts are failures: everything runs.
        try edit("Sources/Leaf/Leaf.swift") { $0.replacingOccurrences(of: "x * 3", with: "x * 2") }
        let reverted = try await run()
        #expect(Self.ran(reverted) == Self.all)
        #expect(reverted.exitCode == 0)
        let after = try await run()
        #expect(Self.skipped(after) == Self.all, "a full pass again: skipped")

        // A change to Right alone runs only BothTests.
        try edit("Sources/Right/Right.swift") { $0 + "\n// touched\n" }
        let right = try await run()
        #expect(Self.ran(right) == ["BothTests"])
        #expect(Set(right.results.map(\.id.suite.module)) == ["BothTests"])
    }

    /// Each round runs LeftTests through `always_run` (not part of its inputs) while a switch breaks it, with no input
    /// changed since its full pass: only the failure on record can make the next run run it.
    @Test mutating func aTargetWhoseLastRunCrashedTimedOutOrWasInterruptedRunsAgain() async throws {
        let first = try await run()
        #expect(Self.verdicts(first)["LeftTests"] == .passed)
        var forced = settings()
        forced.selective.alwaysRun = ["^LeftTests$"]

        // Crashed: recorded as failed.
        try Data().write(to: URL(fileURLWithPath: crash))
        let crashed = try await run(forced)
        try FileManager.default.removeItem(atPath: crash)
        #expect(Self.ran(crashed) == ["LeftTests"])
        #expect(crashed.results.contains { $0.outcome == .crashed })
        #expect(Self.verdicts(crashed)["LeftTests"] == .failed)
        // Same inputs as the full pass, switch off: LeftTests runs (its last run crashed); the others stay skipped.
        let afterCrash = try await run()
        #expect(Self.ran(afterCrash) == ["LeftTests"])
        #expect(afterCrash.selective?.ran.first?.reason.contains("crashed") == true)
        #expect(Self.skipped(afterCrash) == ["LeafTests", "BothTests"])
        #expect(afterCrash.exitCode == 0)

        // Blocked until its ceiling: timed out, recorded as failed; the next run runs it.
        try Data().write(to: URL(fileURLWithPath: hang))
        let hung = try await run(forced)
        try FileManager.default.removeItem(atPath: hang)
        #expect(hung.results.contains { $0.outcome == .timedOut })
        #expect(Self.verdicts(hung)["LeftTests"] == .failed)
        let afterHang = try await run()
        #expect(Self.ran(afterHang) == ["LeftTests"])
        #expect(afterHang.selective?.ran.first?.reason.contains("timed out") == true)
        #expect(afterHang.exitCode == 0)

        // Interrupted while LeftTests blocks: the run is not recorded for timing, but its verdict is kept.
        try Data().write(to: URL(fileURLWithPath: hang))
        forced.classTimeLimits = []
        runs += 1
        forced.reportDirectory = dir.file("report-\(runs)")
        let started = Flag()
        let coordinator = Coordinator(settings: forced) { event in
            if case .unitStarted(_, _, _, let suites, _) = event, suites.contains(where: { $0.hasPrefix("LeftTests") }) {
                started.set()
            }
        }
        let task = Task { try await coordinator.run() }
        let deadline = Date().addingTimeInterval(120)
        while !started.isSet, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(started.isSet, "LeftTests started within 2 minutes")
        try await Task.sleep(for: .seconds(0.5))
        task.cancel()
        let interrupted = try await task.value.report
        try FileManager.default.removeItem(atPath: hang)
        #expect(interrupted.interrupted)
        #expect(Self.verdicts(interrupted)["LeftTests"] == .failed)
        let afterInterrupt = try await run()
        #expect(Self.ran(afterInterrupt) == ["LeftTests"], "the interrupted target runs again")
        #expect(afterInterrupt.selective?.ran.first?.reason.contains("interrupted") == true)
        #expect(afterInterrupt.exitCode == 0)
        let settled = try await run()
        #expect(Self.skipped(settled) == Self.all, "passed again: skipped again")
    }

    @Test mutating func theVerdictsTravelWithTheHistory() async throws {
        _ = try await run()
        let export = dir.file("history.json")
        _ = try HistoryTransfer.export(historyPath: dir.file("history.sqlite"), to: export, runs: nil)
        let other = dir.file("other.sqlite")
        let imported = try HistoryTransfer.importExports([export], historyPath: other)
        #expect(imported.summary.targetVerdicts == 3)
        let elsewhere = try await run(settings(history: other))
        #expect(Self.skipped(elsewhere) == Self.all, "another job with the imported history skips what passed")

        // `fanout plan --selective`, as a user runs it: every target, skip or run, and why.
        let config = dir.file("fanout.yml")
        try """
            package: \(package)
            history: \(other)
            destination:
              name: local
              environment: { DIAMOND_CRASH: \(crash), DIAMOND_HANG: \(hang) }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let (code, out, err) = try await runCLI(["plan", "--config", config, "--selective"], env: ["NO_COLOR": "1"])
        #expect(code == 0, "\(err)")
        #expect(out.contains("Selective: 0 test targets run, 3 skipped"), "\(out)")
        for target in Self.all {
            #expect(out.split(separator: "\n").contains { $0.hasPrefix(target) && $0.contains("skip") && $0.contains("unchanged since run") })
        }
        try edit("Sources/Right/Right.swift") { $0 + "\n// planned\n" }
        let (_, changed, _) = try await runCLI(["plan", "--config", config, "--selective"], env: ["NO_COLOR": "1"])
        #expect(changed.split(separator: "\n").contains { $0.hasPrefix("BothTests") && $0.contains("run") && $0.contains("files of Right") },
                "\(changed)")
        let (_, everything, _) = try await runCLI(["plan", "--config", config, "--selective", "--no-selective"], env: ["NO_COLOR": "1"])
        #expect(!everything.contains("Selective:"), "--no-selective: every test target runs, nothing decided")
    }
}
