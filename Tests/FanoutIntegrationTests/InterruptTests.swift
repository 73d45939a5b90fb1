import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Synchronization
import Testing

/// The `fanout` process itself, interrupted with real signals mid-run.
@Suite(.serialized, .timeLimit(.minutes(10))) struct InterruptTests {
    /// What an interrupted run did: its exit code, everything it printed, and the seconds from the last signal to
    /// its exit.
    struct Interrupted {
        var code: Int32
        var output: String
        var secondsToExit: Double
    }

    /// Starts `fanout run …`, waits until one of its units' test processes runs (`unitRuns`, asked with the
    /// coordinator's pid), sends `signals` (each after the one before was acknowledged), and waits for the exit.
    /// Every wait has a deadline, and a run in which no unit ever started fails: signals sent before any test
    /// process runs would test nothing of what they claim.
    func interrupt(_ args: [String], with signals: [Int32], cwd: String,
                   unitRuns: @escaping (pid_t) async throws -> Bool,
                   beforeSignals: () async throws -> Void = {}) async throws -> Interrupted {
        let (p, pipe, output) = try start(["run"] + args, cwd: cwd)
        func stop(_ why: String) async -> TestFailure {
            kill(p.processIdentifier, SIGKILL)
            await waitForExit(of: p, within: 30)
            pipe.fileHandleForReading.readabilityHandler = nil
            return TestFailure("\(why)\n\(output.text)")
        }
        // The coordinator's word that it dispatched a unit, then the unit's own test process, running.
        guard try await waitUntil(seconds: 120, while: p.isRunning, { output.text.contains("started on") }) else {
            throw await stop("no unit started within 120 s (exit \(p.isRunning ? "none yet" : "\(p.terminationStatus)"))")
        }
        guard try await waitUntil(seconds: 60, while: p.isRunning, { try await unitRuns(p.processIdentifier) }) else {
            throw await stop("a unit was dispatched but no test process of it ran within 60 s")
        }
        try await beforeSignals()
        var lastSignal = ContinuousClock.now
        for (i, s) in signals.enumerated() {
            // The next signal once the coordinator has said it took the one before (its interrupt notice).
            if i > 0, !(try await waitUntil(seconds: 30, while: p.isRunning, { output.text.contains("again to quit at once") })) {
                break
            }
            kill(p.processIdentifier, s)
            lastSignal = .now
        }
        guard await waitForExit(of: p, within: 120) else { throw await stop("fanout did not exit within 120 s of its signals") }
        let seconds = (ContinuousClock.now - lastSignal).seconds
        pipe.fileHandleForReading.readabilityHandler = nil
        output.append(pipe.fileHandleForReading.readDataToEndOfFile())
        return Interrupted(code: p.terminationStatus, output: output.text, secondsToExit: seconds)
    }

    /// `fanout ARGS` started in `cwd`, its standard output and error gathered as they come.
    func start(_ args: [String], cwd: String) throws -> (Process, Pipe, OutputBox) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try fanoutExecutable())
        p.arguments = args
        p.currentDirectoryURL = URL(fileURLWithPath: cwd)
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        let output = OutputBox()
        pipe.fileHandleForReading.readabilityHandler = { output.append($0.availableData) }
        try p.run()
        return (p, pipe, output)
    }

    /// Polls `condition` every 50 ms for at most `seconds` while `alive` holds; whether it came true.
    func waitUntil(seconds: Double, while alive: @autoclosure () -> Bool,
                   _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline, alive() {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }

    /// Waits at most `seconds` for `p` to exit; whether it did.
    @discardableResult
    func waitForExit(of p: Process, within seconds: Double) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while p.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        guard !p.isRunning else { return false }
        p.waitUntilExit() // reaped already: returns at once, and makes terminationStatus safe to read
        return true
    }

    /// A local unit runs: a child of the coordinator runs the demo bundle.
    func localUnitRuns(_ bundle: String) -> (pid_t) async throws -> Bool {
        { !ProcessTable.children(of: $0, with: [bundle]).isEmpty }
    }

    func hangingConfig(_ dir: TempDir, fleet: String? = nil, lease: Int? = nil) throws -> String {
        var text = fleet.map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" } ?? ""
        if let lease { text += "\nssh:\n  lease: \(lease)\n" }
        text += "\ndestination:\n  name: local\n  environment: { DEMO_HANG: \"1\" }\n"
        let path = dir.file("fanout.yml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func report(_ dir: TempDir) throws -> RunReport {
        let data = try Data(contentsOf: URL(fileURLWithPath: dir.file("r/report.json")))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { d in
            let s = try d.singleValueContainer().decode(String.self)
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return f.date(from: s) ?? Date()
        }
        return try decoder.decode(RunReport.self, from: data)
    }

    @Test func sigintWritesAPartialReportAndExits130() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let config = try hangingConfig(dir)
        let run = try await interrupt(["--config", config, "--bundle", bundle, "--filter", "SessionTimeoutTests|GCDTests",
                                       "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite"), "--slots", "1"],
                                      with: [SIGINT], cwd: dir.path, unitRuns: localUnitRuns(bundle))
        #expect(run.code == 130, "\(run.output)")
        #expect(run.output.contains("interrupted"))
        let r = try report(dir)
        #expect(r.interrupted)
        #expect(r.exitCode == 130)
        #expect(r.results.contains { $0.outcome == .notRun })
        #expect(Set(r.results.map(\.id)).count == r.results.count, "every test once, even when interrupted")
    }

    @Test func sigintStillRunsEveryTeardownDue() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let log = ShellQuote.quote(dir.file("hooks.log"))
        let config = try hangingConfig(dir)
        try (String(contentsOfFile: config, encoding: .utf8) + """

            hooks:
              slot:
                set_up: echo "slot-set-up $FANOUT_WORKER" >> \(log)
                tear_down: echo "slot-teardown $FANOUT_WORKER" >> \(log)
              agent:
                tear_down: echo "agent-teardown $FANOUT_AGENT" >> \(log)
              run:
                tear_down: echo "run-teardown" >> \(log)

            """).write(toFile: config, atomically: true, encoding: .utf8)
        let run = try await interrupt(["--config", config, "--bundle", bundle, "--filter", "SessionTimeoutTests|GCDTests",
                                       "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite"), "--slots", "2"],
                                      with: [SIGINT], cwd: dir.path, unitRuns: localUnitRuns(bundle))
        #expect(run.code == 130, "\(run.output)")
        let lines = try String(contentsOfFile: dir.file("hooks.log"), encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(Set(lines.filter { $0.hasPrefix("slot-set-up") }) == ["slot-set-up 0", "slot-set-up 1"], "\(lines)")
        #expect(Set(lines.filter { $0.hasPrefix("slot-teardown") }) == ["slot-teardown 0", "slot-teardown 1"], "\(lines)")
        #expect(lines.suffix(2) == ["agent-teardown local", "run-teardown"], "\(lines)")
        let hooks = try #require(try report(dir).hooks)
        #expect(hooks.filter { $0.phase == .tearDown }.count == 4 && hooks.allSatisfy { $0.status == .passed }, "\(hooks)")
    }

    @Test func sigintDuringTheSlotsSetUpStopsItAndTearsDownWhatWasSetUp() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let log = ShellQuote.quote(dir.file("hooks.log"))
        let config = dir.file("fanout.yml")
        try """
            hooks:
              slot:
                set_up: if [ "$FANOUT_SLOT" = 1 ]; then echo "slot-waits 1" >> \(log); sleep 60; fi; echo "slot-set-up $FANOUT_WORKER" >> \(log)
                tear_down: echo "slot-teardown $FANOUT_WORKER" >> \(log)

            """.write(toFile: config, atomically: true, encoding: .utf8)
        let (p, pipe, output) = try start(["run", "--config", config, "--bundle", bundle, "--filter", "GCDTests", "--slots", "2",
                                           "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite")], cwd: dir.path)
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        func lines() -> [String] {
            ((try? String(contentsOfFile: dir.file("hooks.log"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        // Slot 0 is set up, slot 1's set-up is in its sleep: the agent has taken no work yet.
        let waiting = try await waitUntil(seconds: 120, while: p.isRunning) {
            lines().contains("slot-set-up 0") && lines().contains("slot-waits 1")
        }
        #expect(waiting, "\(output.text)")
        kill(p.processIdentifier, SIGINT)
        #expect(await waitForExit(of: p, within: 60), "exits well before slot 1's set-up would have ended")
        pipe.fileHandleForReading.readabilityHandler = nil
        #expect(p.terminationStatus == 130, "\(output.text)")
        #expect(!lines().contains("slot-set-up 1"), "slot 1's set-up was stopped: \(lines())")
        #expect(Set(lines().filter { $0.hasPrefix("slot-teardown") }) == ["slot-teardown 0", "slot-teardown 1"],
                "both set-ups began, both are torn down: \(lines())")
        let r = try report(dir)
        #expect(r.units.isEmpty && r.results.allSatisfy { $0.outcome == .notRun })
        let stopped = try #require(r.hooks?.first { $0.phase == .setUp && $0.slot == 1 })
        #expect(stopped.status == .notRun && stopped.detail.contains("interrupted"), "\(stopped)")
    }

    @Test func sigtermExits143() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let config = try hangingConfig(dir)
        let run = try await interrupt(["--config", config, "--bundle", bundle, "--filter", "SessionTimeoutTests",
                                       "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite")],
                                      with: [SIGTERM], cwd: dir.path, unitRuns: localUnitRuns(bundle))
        #expect(run.code == 143, "\(run.output)")
        #expect(try report(dir).interrupted)
        #expect(try report(dir).exitCode == 143)
    }

    /// Interrupts a run on the fleet with `signals` once a test process runs on an agent, and checks, on every
    /// agent, that nothing of ours is left. With `freezing`, the first agent found running a test is frozen (its
    /// sshd, its sessions and what they run: SIGSTOP by PID, fault.sh) before the signals, so that the first
    /// signal's stop waits on it for certain; it is thawed once fanout exited, and its own watchdog must then reap
    /// what ran there (the lease lapsed while it was frozen), within the deadline.
    func interruptOnTheFleet(with signals: [Int32], freezing: Bool = false) async throws -> (TempDir, Interrupted) {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let fleet = try await IntegrationFleet.interrupt.settings()
        let config = try hangingConfig(dir, fleet: IntegrationFleet.interrupt.directory + "/fleet.yml", lease: freezing ? 3 : nil)
        // A unit runs on an agent: a process of the agent user runs the deployed bundle (not just the lease's watchdog).
        let running = Mutex<String?>(nil)
        let unitRuns: (pid_t) async throws -> Bool = { _ in
            for spec in fleet.agents where try await IntegrationFleet.processesOnAgent(spec, settings: fleet.ssh)
                .contains(where: { $0.contains(".xctest") }) {
                running.withLock { $0 = spec.name }
                return true
            }
            return false
        }
        let frozen = Mutex<String?>(nil)
        defer { if let agent = frozen.withLock({ $0 }) { fault(agent, "thaw") } }
        let run = try await interrupt(["--config", config, "--bundle", bundle, "--filter", "SessionTimeoutTests|DatabaseMigration",
                                       "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite")],
                                      with: signals, cwd: dir.path, unitRuns: unitRuns) {
            guard freezing, let agent = running.withLock({ $0 }) else { return }
            let (code, out) = fault(agent, "freeze")
            guard code == 0 else { throw TestFailure("fault.sh \(agent) freeze failed (exit \(code)): \(out)") }
            frozen.withLock { $0 = agent }
        }
        #expect(run.code == 130, "\(run.output)")
        if let agent = frozen.withLock({ $0 }) {
            fault(agent, "thaw")
            frozen.withLock { $0 = nil }
        }
        for spec in fleet.agents {
            var left = try await IntegrationFleet.processesOnAgent(spec, settings: fleet.ssh)
            if freezing, spec.name == running.withLock({ $0 }) {
                // Its watchdog was frozen with it: once thawed it sees the lapsed lease (3 s) and reaps the run.
                let deadline = ContinuousClock.now + .seconds(60)
                while !left.isEmpty, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    left = try await IntegrationFleet.processesOnAgent(spec, settings: fleet.ssh)
                }
            }
            #expect(left.isEmpty, "\(spec.name): \(left)")
        }
        return (dir, run)
    }

    /// Runs fault.sh on an agent of the interrupt fleet: its exit code and output.
    @discardableResult
    func fault(_ agent: String, _ what: String) -> (Int32, String) {
        let script = repositoryRoot.appendingPathComponent("Agents/local-fleet/fault.sh").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [script, "--dir", IntegrationFleet.interrupt.directory, agent, what]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        do { try p.run() } catch { return (-1, "\(error)") }
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: out, as: UTF8.self))
    }

    @Test func sigintOnTheFleetLeavesNoProcessOnAnyAgent() async throws {
        let (dir, _) = try await interruptOnTheFleet(with: [SIGINT])
        #expect(try report(dir).interrupted)
    }

    /// The second SIGINT must reach a run that is still stopping: one agent is frozen before the first, so the
    /// first one's stop waits on it (its cleanup over SSH, until the connection is found dead) and cannot have
    /// ended when the second is sent. "At once" is a correctness bound, not a speed claim: the second Ctrl-C waits
    /// at most 2 s for the agents' kills, so an exit 20 s later means it waited for something it must not. The live
    /// agents are clean at the exit (the emergency stop killed what ran there); the frozen one once its watchdog runs.
    @Test func aSecondSigintQuitsAtOnceButStillKillsWhatWasStarted() async throws {
        let (_, run) = try await interruptOnTheFleet(with: [SIGINT, SIGINT], freezing: true)
        #expect(run.output.contains("fanout: quit"), "the second SIGINT was taken as such: \(run.output)")
        #expect(!run.output.contains("Fanout run "), "the run was quit, not stopped: no summary \(run.output)")
        #expect(run.secondsToExit < 20, "exited \(run.secondsToExit) s after the second SIGINT")
    }
}

final class OutputBox: Sendable {
    private let data = Mutex(Data())
    func append(_ d: Data) { data.withLock { $0.append(d) } }
    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
}
