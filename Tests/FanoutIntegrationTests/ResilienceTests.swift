import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Synchronization
import Testing

/// Progress events with the time they arrived, for measuring how fast something was noticed.
final class EventLog: Sendable {
    private let entries = Mutex<[(Date, ProgressEvent)]>([])
    func record(_ e: ProgressEvent) { entries.withLock { $0.append((Date(), e)) } }
    var all: [(Date, ProgressEvent)] { entries.withLock { $0 } }

    func firstWarning(containing text: String) -> Date? {
        all.first { if case .warning(let w) = $0.1 { w.contains(text) } else { false } }?.0
    }

    func firstUnitStarted(on agent: String) -> Date? {
        all.first { if case .unitStarted(_, let a, _, _, _) = $0.1 { a == agent } else { false } }?.0
    }
}

/// Agents that die or freeze mid-run, against the real local fleet (faults injected by PID with fault.sh).
@Suite(.serialized, .timeLimit(.minutes(10))) struct ResilienceTests {
    let fault = repositoryRoot.appendingPathComponent("Agents/local-fleet/fault.sh").path

    func inject(_ agent: String, _ what: String) async {
        _ = await LocalTransport(slots: 1).capture(Command(
            executable: "/bin/bash", arguments: [fault, "--dir", IntegrationFleet.resilience.directory, agent, what]), timeout: 60)
    }

    /// SIGKILL of the agent's sshd sessions (the master's per-connection children and their sshd children), by
    /// PID: the connection dies as if the host vanished, while the test processes themselves are left for Fanout
    /// to clean up when the agent is re-admitted.
    func killSessions(_ agent: String) async {
        let pidFile = IntegrationFleet.resilience.directory + "/agents/\(agent)/sshd.pid"
        let script = """
        m=$(cat \(pidFile)) || exit 1
        for c in $(pgrep -P "$m"); do
          for g in $(pgrep -P "$c"); do [ "$(cat /proc/$g/comm 2>/dev/null)" = sshd ] && kill -KILL "$g"; done
          kill -KILL "$c"
        done
        """
        _ = await LocalTransport(slots: 1).capture(Command(executable: "/bin/sh", arguments: ["-c", script]), timeout: 30)
    }

    func settings(_ dir: TempDir, filters: [String] = [], env: [String: String] = [:]) async throws -> RunSettings {
        try await IntegrationFleet.resilience.runSettings(dir, filters: filters, env: env)
    }

    func waitFor(_ condition: @Sendable () -> Bool, seconds: Double = 60) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { throw TestFailure("timed out waiting") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test func aKilledAgentIsNoticedAndTheRunCompletes() async throws {
        let dir = try TempDir()
        let s = try await settings(dir)
        let log = EventLog()
        let run = Task { try await Coordinator(settings: s) { log.record($0) }.run() }
        try await waitFor { log.firstUnitStarted(on: "agent-2") != nil }
        try await Task.sleep(for: .milliseconds(500))
        let killedAt = Date()
        await killSessions("agent-2")
        let outcome = try await run.value

        let noticed = try #require(log.firstWarning(containing: "agent-2 was lost"))
        // Noticed from the dropped connection, not from the unit's 60 s time limit (how fast: scripts/bench.sh).
        #expect(noticed.timeIntervalSince(killedAt) < 30, "noticed after \(noticed.timeIntervalSince(killedAt)) s")
        #expect(outcome.exitCode == .success)
        let ids = outcome.report.results.map(\.id)
        #expect(Set(ids).count == ids.count && ids.count >= 200, "every test exactly once")
        #expect(outcome.report.counts.failures == 0 && outcome.report.counts.notRun == 0)
        #expect(outcome.report.units.contains { $0.agent == "agent-2" && $0.ending.contains("agent lost") })
        #expect(log.firstWarning(containing: "agent-2 is back") != nil, "its master still listens: re-admitted at once")
        let left = try await IntegrationFleet.processesOnAgent(s.agents[1], settings: s.ssh)
        #expect(left.isEmpty, "what the lost session left running was killed on re-admission: \(left)")
    }

    @Test func theTeardownsALostAgentOwesRunWhenItIsBack() async throws {
        let dir = try TempDir()
        var s = try await settings(dir)
        for (scope, phase) in [(HookReport.Scope.slot, HookReport.Phase.setUp), (.slot, .tearDown), (.agent, .setUp), (.agent, .tearDown)] {
            s.hooks[scope, phase] = .init(line: "echo $FANOUT_AGENT ${FANOUT_WORKER:-agent}", timeout: 30)
        }
        let log = EventLog()
        let run = Task { try await Coordinator(settings: s) { log.record($0) }.run() }
        try await waitFor { log.firstUnitStarted(on: "agent-2") != nil }
        try await Task.sleep(for: .milliseconds(500))
        await killSessions("agent-2")
        let outcome = try await run.value
        #expect(log.firstWarning(containing: "agent-2 was lost") != nil)
        #expect(outcome.exitCode == .success)
        let hooks = try #require(outcome.report.hooks).filter { $0.agent == "agent-2" }
        let setUps = hooks.filter { $0.phase == .setUp }, tearDowns = hooks.filter { $0.phase == .tearDown }
        // Admitted twice: each admission's set-ups have their teardowns, the lost session's run once it was back.
        #expect(setUps.filter { $0.scope == .agent }.count == 2, "\(hooks.map(\.title))")
        #expect(setUps.filter { $0.scope == .slot }.count == 4, "\(hooks.map(\.title))")
        #expect(tearDowns.filter { $0.scope == .agent }.count == 2 && tearDowns.filter { $0.scope == .slot }.count == 4,
                "\(hooks.map { "\($0.title) \($0.status)" })")
        #expect(tearDowns.allSatisfy { $0.status == .passed && $0.output.hasPrefix("agent-2") }, "\(tearDowns)")
    }

    /// A hook's shell lines that kill its own SSH connection: the agent user's sshd process of the session, the first
    /// sshd among its ancestors (the agent is lost as if its host vanished), then wait for the end.
    static let killOwnSession = """
        p=$PPID
        while [ "$p" -gt 1 ]; do
          case $(cat /proc/$p/comm) in sshd*) kill -9 "$p"; break;; esac
          p=$(ps -o ppid= -p "$p" | tr -d ' ')
        done
        sleep 5
        """

    @Test func anAgentLostDuringItsSlotsSetUpIsReadmittedAndSetUpAgain() async throws {
        let dir = try TempDir()
        var s = try await settings(dir)
        let marker = "/tmp/fanout-hook-lost-" + UUID().uuidString.prefix(8)
        // agent-2's first slot set-up kills its own SSH connection (the agent user's sshd process of the session, the
        // first sshd among its ancestors), once: the agent is lost in the middle of setting up.
        s.hooks[.slot, .setUp] = .init(line: """
            if [ "$FANOUT_AGENT" = agent-2 ] && [ "$FANOUT_SLOT" = 0 ] && mkdir \(marker) 2>/dev/null; then
            \(Self.killOwnSession)
            fi
            """, timeout: 30)
        s.hooks[.slot, .tearDown] = .init(line: "echo torn down", timeout: 30)
        defer { try? FileManager.default.removeItem(atPath: marker) }
        let log = EventLog()
        let outcome = try await Coordinator(settings: s) { log.record($0) }.run()
        #expect(log.firstWarning(containing: "agent-2 was lost while setting up: it is set up again when it is back") != nil,
                "\(outcome.report.warnings)")
        #expect(outcome.exitCode == .success, "\(outcome.report.warnings)")
        #expect(outcome.report.counts.notRun == 0 && outcome.report.counts.failures == 0)
        let hooks = try #require(outcome.report.hooks).filter { $0.agent == "agent-2" }
        // Set up twice (the lost session's set-ups, then again once it was back), torn down for both sessions.
        #expect(hooks.filter { $0.phase == .setUp && $0.status == .passed }.count >= 2, "\(hooks.map { "\($0.title) \($0.status) \($0.detail) \($0.output)" })")
        let tearDowns = hooks.filter { $0.phase == .tearDown }
        #expect(tearDowns.count == 4 && tearDowns.allSatisfy { $0.status == .passed }, "\(hooks.map { "\($0.title) \($0.status)" })")
        #expect(outcome.report.units.contains { $0.agent == "agent-2" }, "it took work once it was back")
    }

    @Test func aSetUpThatTakesItsOwnAgentDownEveryTimeIsGivenUpOn() async throws {
        let dir = try TempDir()
        var s = try await settings(dir, filters: ["GCDTests"])
        s.agents = s.agents.filter { $0.name == "agent-2" }
        // Every slot set-up kills its own SSH session: without a limit the agent would be set up again forever.
        s.hooks[.slot, .setUp] = .init(line: Self.killOwnSession, timeout: 30)
        s.hooks[.slot, .tearDown] = .init(line: "true", timeout: 30)
        let outcome = try await Coordinator(settings: s).run()
        #expect(outcome.exitCode == .infrastructure)
        #expect(outcome.report.warnings.contains { $0.contains("agent-2 was lost while setting up 6 times in a row") },
                "\(outcome.report.warnings)")
        #expect(!outcome.report.results.isEmpty && outcome.report.results.allSatisfy { $0.outcome == .notRun })
        // Every session's set-ups are torn down, or reported as not torn down: none is forgotten.
        let hooks = try #require(outcome.report.hooks)
        #expect(hooks.filter { $0.phase == .tearDown }.count == hooks.filter { $0.phase == .setUp }.count,
                "\(hooks.map { "\($0.title) \($0.status)" })")
    }

    @Test func aFrozenAgentIsNoticedAndReadmittedAfterThaw() async throws {
        let dir = try TempDir()
        // Waits twice as long and whole classes (none cut for idle slots): the run outlasts the freeze, its detection
        // and the thaw by several seconds, so there is still work when the agent comes back.
        var s = try await settings(dir, env: ["DEMO_LATENCY_SCALE": "2"])
        s.keepWhole = [".*"]
        #expect(s.ssh.deadAfter <= 10)
        let log = EventLog()
        let run = Task { try await Coordinator(settings: s) { log.record($0) }.run() }
        try await waitFor { log.firstUnitStarted(on: "agent-3") != nil }
        try await Task.sleep(for: .milliseconds(300))
        let frozenAt = Date()
        await inject("agent-3", "freeze")
        do {
            try await waitFor({ log.firstWarning(containing: "agent-3 was lost") != nil }, seconds: 20)
        } catch {
            await inject("agent-3", "thaw")
            throw error
        }
        await inject("agent-3", "thaw")
        let outcome = try await run.value
        let noticed = try #require(log.firstWarning(containing: "agent-3 was lost"))
        // Noticed by the keepalive deadline, before the unit's 60 s time limit (how fast: scripts/bench.sh).
        #expect(noticed.timeIntervalSince(frozenAt) < 45, "noticed after \(noticed.timeIntervalSince(frozenAt)) s")
        #expect(log.firstWarning(containing: "agent-3 is back") != nil, "re-admitted after SIGCONT")
        #expect(outcome.exitCode == .success)
        let ids = outcome.report.results.map(\.id)
        #expect(Set(ids).count == ids.count && outcome.report.counts.notRun == 0)
    }

    @Test func anAgentThatDiesEveryTimeCannotKeepAUnitCycling() async throws {
        let dir = try TempDir()
        var s = try await settings(dir, filters: ["^DemoKitTests\\.LargeInputTests$"])
        s.agents = [s.agents[0]]
        s.keepWhole = ["LargeInputTests"] // one unit per try: the idle slot does not take over its tests
        let killer = Task {
            // Every time the unit starts on agent-1, the agent dies once a test of it has ended (the unit made
            // progress: a loss before any test started spends the loss budget instead); then it comes back.
            var seen = 0
            func count(_ matching: (ProgressEvent) -> Bool) -> Int { log.all.filter { matching($0.1) }.count }
            while !Task.isCancelled {
                let starts = count { if case .unitStarted = $0 { true } else { false } }
                if starts > seen {
                    seen = starts
                    let ended = count { if case .testEnded = $0 { true } else { false } }
                    let deadline = ContinuousClock.now + .seconds(60)
                    while count({ if case .testEnded = $0 { true } else { false } }) == ended, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    await killSessions("agent-1")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let outcome = try await Coordinator(settings: s) { log.record($0) }.run()
        killer.cancel()
        #expect(outcome.exitCode == .infrastructure)
        // Tests that finished before a kill keep their result; the rest are not run, and the report says why.
        let notRun = outcome.report.results.filter { $0.outcome == .notRun }
        #expect(!notRun.isEmpty)
        #expect(notRun.allSatisfy { $0.issues.last?.message.contains("budget") == true })
        #expect(outcome.report.results.allSatisfy { $0.outcome == .notRun || $0.outcome == .passed })
        // The units that made progress before their agent died: the first try plus the budget, then it stops. (The
        // other slot of the agent may take the re-queued unit before the loss is noticed and find the agent gone
        // before its process starts a test: those spend the loss budget, not this one.)
        let progressed = Set(outcome.report.results.flatMap(\.attempts).filter { $0.outcome == .passed }.map(\.unit))
        let endings = outcome.report.units.map { "\($0.id): \($0.ending)" }
        #expect(progressed.count == s.requeueBudget + 1, "first try plus the budget, then it stops: \(endings)")
        #expect(outcome.report.units.count <= s.requeueBudget + 1 + RequeuePolicy(budget: s.requeueBudget).lossBudget, "\(endings)")
    }

    let log = EventLog()
}
