import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// Hooks on local slots with real processes (the demo suite's fast classes): the order they run in, a failing or hung
/// set-up taking out only its slot, nothing run when every slot or the run itself cannot be set up, and teardowns
/// that never change a verdict.
@Suite(.timeLimit(.minutes(10))) struct HooksTests {
    static let classes = ["^DemoKitTests\\.(Arithmetic|Prime|LRUCache|GCD|Palindrome|Factorial|Slug|Clamp)Tests$"]

    /// Four local slots; every hook appends `WHAT` and its identity to `log` (the destination's LOG).
    func settings(_ dir: TempDir, hooks: [HookSettings.Key: String], timeout: Double = 60) async throws -> RunSettings {
        var s = demoSettings(bundle: try await DemoSuite.shared.bundle(), dir: dir, filters: Self.classes,
                             env: ["LOG": dir.file("hooks.log")])
        for (key, line) in hooks { s.hooks[key.scope, key.phase] = .init(line: line, timeout: timeout) }
        return s
    }

    func log(_ dir: TempDir) -> [String] {
        ((try? String(contentsOfFile: dir.file("hooks.log"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    static func append(_ what: String) -> String {
        #"echo "\#(what) run=$FANOUT_RUN_ID workers=$FANOUT_WORKERS agent=${FANOUT_AGENT:--} slot=${FANOUT_SLOT:--} worker=${FANOUT_WORKER:--}" >> "$LOG""#
    }

    @Test func hooksRunInOrderWithTheirIdentity() async throws {
        let dir = try TempDir()
        let s = try await settings(dir, hooks: [
            .init(.run, .setUp): Self.append("run-set-up"), .init(.run, .tearDown): Self.append("run-teardown"),
            .init(.agent, .setUp): Self.append("agent-set-up"), .init(.agent, .tearDown): Self.append("agent-teardown"),
            .init(.slot, .setUp): Self.append("slot-set-up"), .init(.slot, .tearDown): Self.append("slot-teardown"),
        ])
        let run = try await Coordinator(settings: s).run()
        #expect(run.exitCode == .success, "\(run.report.warnings)")
        let lines = log(dir)
        let kinds = lines.map { String($0.split(separator: " ")[0]) }
        #expect(kinds.first == "run-set-up" && kinds.last == "run-teardown", "\(lines)")
        #expect(kinds.dropFirst().first == "agent-set-up" && kinds.dropLast().last == "agent-teardown", "\(lines)")
        #expect(kinds.filter { $0 == "slot-set-up" }.count == 4 && kinds.filter { $0 == "slot-teardown" }.count == 4, "\(lines)")
        // Every slot is set up before the agent takes work, and torn down once all of them are done.
        #expect(kinds.dropFirst(2).prefix(4).allSatisfy { $0 == "slot-set-up" }, "\(lines)")
        #expect(kinds.dropLast(2).suffix(4).allSatisfy { $0 == "slot-teardown" }, "\(lines)")
        #expect(Set(lines.filter { $0.hasPrefix("slot-set-up") }.map { $0.split(separator: " ").last! }) == ["worker=0", "worker=1", "worker=2", "worker=3"])
        let report = run.report
        let firstUnit = report.units.map(\.startedAt).min() ?? 0, lastEnd = report.units.map { $0.startedAt + $0.duration }.max() ?? 0
        let hooksByKind = report.hooks ?? []
        #expect(hooksByKind.filter { $0.scope == .slot && $0.phase == .setUp }.allSatisfy { $0.startedAt + $0.duration <= firstUnit + 0.01 })
        #expect(hooksByKind.filter { $0.scope == .slot && $0.phase == .tearDown }.allSatisfy { $0.startedAt >= lastEnd - 0.01 })
        #expect(lines.allSatisfy { $0.contains("run=\(run.report.runID) workers=4") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("agent-set-up") && $0.contains("agent=local slot=- worker=-") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("run-set-up") && $0.contains("agent=- slot=-") }, "\(lines)")
        let hooks = try #require(run.report.hooks)
        #expect(hooks.count == 12 && hooks.allSatisfy { $0.status == .passed }, "\(hooks)")
        #expect(hooks.first?.scope == .run && hooks.last?.scope == .run)
    }

    @Test func aFailingOrHungSlotSetUpTakesOnlyThatSlotOut() async throws {
        let dir = try TempDir()
        let s = try await settings(dir, hooks: [
            .init(.slot, .setUp): #"case $FANOUT_SLOT in 1) echo "port 5433 is taken" >&2; exit 7;; 2) sleep 60;; esac"#,
            .init(.slot, .tearDown): Self.append("slot-teardown"),
        ], timeout: 3)
        let run = try await Coordinator(settings: s).run()
        let report = run.report
        #expect(run.exitCode == .success, "\(report.warnings)")
        #expect(report.counts.notRun == 0 && report.counts.failures == 0)
        // The lower bound counts the two slots that ran: never less than the tests' time over them.
        let testTime = report.results.flatMap(\.attempts).reduce(0.0) { $0 + $1.duration }
        #expect(report.timing.lowerBound >= testTime / 2 - 0.01, "\(report.timing.lowerBound) < \(testTime) / 2")
        #expect(!report.units.contains { $0.agent == "local" && [1, 2].contains($0.slot) }, "slots 1 and 2 took no work")
        let hooks = try #require(report.hooks)
        let failed = try #require(hooks.first { $0.phase == .setUp && $0.slot == 1 })
        #expect(failed.status == .failed && failed.detail == "exit 7" && failed.output.contains("port 5433 is taken"))
        let hung = try #require(hooks.first { $0.phase == .setUp && $0.slot == 2 })
        #expect(hung.status == .timedOut, "\(hung)")
        #expect(report.warnings.contains { $0.contains("slot 1 (worker 1) of local set-up failed (exit 7): port 5433 is taken") },
                "\(report.warnings)")
        // A teardown runs whenever its set-up ran, passed or not.
        #expect(Set(log(dir).compactMap { $0.split(separator: "=").last.flatMap { Int($0) } }) == [0, 1, 2, 3], "\(log(dir))")
    }

    @Test func anAgentSetUpStartsAServiceTheSlotsSeeAndItsTeardownStopsIt() async throws {
        let dir = try TempDir()
        var s = try await settings(dir, hooks: [
            // The README's rule: a service leaves the hook's process group (setsid) and its output, and the hook waits
            // until it has (here: until it leads a group of its own; a real one waits until the service answers).
            .init(.agent, .setUp): #"setsid sleep 300 </dev/null >/dev/null 2>&1 & s=$!; echo $s > "$LOG.pid"; "#
                + #"until [ "$(ps -o pgid= -p $s | tr -d ' ')" = "$s" ]; do sleep 0.05; done"#,
            .init(.slot, .setUp): #"kill -0 "$(cat "$LOG.pid")""#,
            .init(.agent, .tearDown): #"kill "$(cat "$LOG.pid")""#,
        ])
        s.slots = 2
        let run = try await Coordinator(settings: s).run()
        #expect(run.exitCode == .success, "\(run.report.warnings)")
        let hooks = try #require(run.report.hooks)
        #expect(hooks.count == 4 && hooks.allSatisfy { $0.status == .passed }, "\(hooks.map { "\($0.title) \($0.status) \($0.output)" })")
        let pid = try #require(Int32(try String(contentsOfFile: dir.file("hooks.log.pid"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        // Gone, or a zombie whose parent (this process, the run's subreaper) has not reaped it yet (within 10 s).
        func stopped() -> Bool {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            return stat.isEmpty || stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !stopped(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(stopped(), "the teardown stopped it")
    }

    @Test func withNoSlotSetUpNothingRunsAndTheExitCodeIs3() async throws {
        let dir = try TempDir()
        let s = try await settings(dir, hooks: [.init(.slot, .setUp): "echo no database >&2; exit 1"])
        let run = try await Coordinator(settings: s).run()
        #expect(run.exitCode == .infrastructure)
        #expect(!run.report.results.isEmpty && run.report.results.allSatisfy { $0.outcome == .notRun })
        #expect(run.report.results.allSatisfy { $0.attempts.last?.issues.first?.message.contains("set-up hooks failed") == true },
                "\(run.report.results.first.map { "\($0)" } ?? "")")
    }

    @Test func aFailingRunSetUpRunsNothingAndItsTeardownStillRuns() async throws {
        let dir = try TempDir()
        let s = try await settings(dir, hooks: [
            .init(.run, .setUp): "exit 4", .init(.run, .tearDown): Self.append("run-teardown"),
            .init(.slot, .setUp): Self.append("slot-set-up"),
        ])
        let run = try await Coordinator(settings: s).run()
        #expect(run.exitCode == .infrastructure)
        #expect(run.report.units.isEmpty && run.report.results.allSatisfy { $0.outcome == .notRun })
        #expect(log(dir).map { String($0.split(separator: " ")[0]) } == ["run-teardown"], "\(log(dir))")
    }

    @Test func aFailingTeardownIsAWarningNeverAVerdict() async throws {
        let dir = try TempDir()
        let s = try await settings(dir, hooks: [.init(.slot, .tearDown): "echo cannot drop >&2; exit 2"])
        let run = try await Coordinator(settings: s).run()
        #expect(run.exitCode == .success)
        #expect(run.report.counts.failures == 0 && run.report.counts.notRun == 0)
        #expect(run.report.warnings.filter { $0.contains("teardown failed (exit 2): cannot drop") }.count == 4, "\(run.report.warnings)")
    }
}
