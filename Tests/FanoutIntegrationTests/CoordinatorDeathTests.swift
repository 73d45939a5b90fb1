import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Starts `fanout run ARGS` in `dir` with its output thrown away.
private func startFanout(_ args: [String], in dir: TempDir) throws -> Process {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: try fanoutExecutable())
    p.arguments = ["run"] + args
    p.currentDirectoryURL = URL(fileURLWithPath: dir.path)
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    try p.run()
    return p
}

private func sigkill(_ p: Process) async {
    kill(p.processIdentifier, SIGKILL)
    await withCheckedContinuation { c in DispatchQueue.global().async { p.waitUntilExit(); c.resume() } }
}

/// The `fanout` process SIGKILLed mid-run (a CI job cancelled hard, the OOM killer): it can clean nothing up itself,
/// so the agents must. Real sshd agents, a test that hangs for an hour, a lease of a few seconds.
@Suite(.serialized, .timeLimit(.minutes(5))) struct CoordinatorDeathTests {
    static let fleet = IntegrationFleet(name: "lease", port: 2628)
    static let lease = 4

    /// The fleet's config with a short lease, and (when `hang`) a destination whose SessionTimeoutTests hangs.
    func config(_ dir: TempDir, hang: Bool) async throws -> String {
        _ = try await Self.fleet.settings()
        var text = try String(contentsOfFile: Self.fleet.directory + "/fleet.yml", encoding: .utf8)
        text += "\nssh:\n  lease: \(Self.lease)\n"
        if hang { text += "destination:\n  name: local\n  environment: { DEMO_HANG: \"1\" }\n" }
        let path = dir.file(hang ? "hang.yml" : "quick.yml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Every run folder on every agent of the fleet (the agents' work dirs are on this machine).
    func runFolders() -> [String] {
        let agents = Self.fleet.directory + "/agents"
        let names: [String] = (try? FileManager.default.contentsOfDirectory(atPath: agents)) ?? []
        var folders: [String] = []
        for agent in names {
            let runs = agents + "/" + agent + "/work/runs"
            let ids: [String] = (try? FileManager.default.contentsOfDirectory(atPath: runs)) ?? []
            folders += ids.map { runs + "/" + $0 }
        }
        return folders
    }

    /// Process groups recorded by the units running in `folders`.
    func unitGroups(in folders: [String]) -> [String] {
        var groups: [String] = []
        for f in folders {
            let pids: [String] = (try? FileManager.default.contentsOfDirectory(atPath: f + "/pids")) ?? []
            groups += pids.map { f + "/pids/" + $0 }
        }
        return groups
    }

    /// Starts `fanout run` on the fleet with the hanging test, waits until the hang runs on an agent, runs `before`,
    /// then SIGKILLs the coordinator. Returns the run's folders on the agents.
    func killCoordinatorMidRun(_ dir: TempDir, before: ([String]) -> Void = { _ in }) async throws -> [String] {
        let bundle = try await DemoSuite.shared.bundle()
        let config = try await config(dir, hang: true)
        let existing = Set(runFolders())
        let p = try startFanout(["--config", config, "--bundle", bundle, "--filter", "SessionTimeoutTests",
                                 "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite")], in: dir)
        var folders: [String] = []
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline, p.isRunning {
            folders = runFolders().filter { !existing.contains($0) }
            if !unitGroups(in: folders).isEmpty { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(!unitGroups(in: folders).isEmpty, "the hanging unit never started on an agent")
        try await Task.sleep(for: .milliseconds(500))
        before(folders)
        await sigkill(p)
        return folders
    }

    func leftOnAgents() async throws -> [String] {
        let settings = try await Self.fleet.settings()
        var left: [String] = []
        for spec in settings.agents { left += try await IntegrationFleet.processesOnAgent(spec, settings: settings.ssh) }
        return left
    }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    @Test func aSigkilledCoordinatorLeavesNothingRunningOnAnyAgentOnceItsLeaseLapses() async throws {
        let dir = try TempDir()
        let folders = try await killCoordinatorMidRun(dir)
        #expect(!folders.isEmpty)
        // The lease lapses after `lease` seconds; the watchdog looks every second. Allow generously more.
        let deadline = Date().addingTimeInterval(Double(Self.lease) + 20)
        var left = try await leftOnAgents()
        while Date() < deadline, !left.isEmpty || folders.contains(where: exists) {
            try await Task.sleep(for: .milliseconds(250))
            left = try await leftOnAgents()
        }
        #expect(left.isEmpty, "still running on the agents: \(left)")
        #expect(!folders.contains(where: exists), "run folders left: \(folders)")
    }

    /// A dead coordinator cannot delete its simulators: each agent's watchdog does, from the list the run kept in its
    /// folder (replay harness of AppleDestinationTests, real UI-test durations so the run is mid-unit).
    @Test func aSigkilledCoordinatorsSimulatorsAreDeletedByTheWatchdog() async throws {
        let dir = try TempDir()
        let state = try AppleDestinationTests.sharedState(dir)
        let replay = AppleDestinationTests.replay
        _ = try await Self.fleet.settings()
        var text = try String(contentsOfFile: Self.fleet.directory + "/fleet.yml", encoding: .utf8)
        text += """

            ssh:
              lease: \(Self.lease)
            destinations:
              - name: iphone
                runner: xcodebuild
                bundle: \(AppleDestinationTests.xctestrun)
                device: {platform: iOS Simulator, model: iPhone 17 Pro, os: "26.2", xcodebuild: \(replay)/bin/xcodebuild, xcrun: \(replay)/bin/xcrun}
                environment: {FANOUT_REPLAY_STATE: \(state), FANOUT_REPLAY_TIME_SCALE: "1"}

            """
        let config = dir.file("apple.yml")
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        let p = try startFanout(["--config", config, "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite")], in: dir)
        let started = Date().addingTimeInterval(90)
        while p.isRunning, Date() < started,
              !((try? AppleDestinationTests.invocations(state)) ?? []).contains(where: { $0["action"] as? String == "test" }) {
            try await Task.sleep(for: .milliseconds(100))
        }
        await sigkill(p)
        func created() throws -> Set<String> {
            Set(try AppleDestinationTests.invocations(state).filter { $0["action"] as? String == "create" }.compactMap { $0["udid"] as? String })
        }
        func deleted() throws -> Set<String> {
            Set(try AppleDestinationTests.invocations(state).filter { $0["action"] as? String == "delete" }.compactMap { $0["udid"] as? String })
        }
        #expect(!(try created()).isEmpty, "the run created simulators before it was killed")
        let reaped = Date().addingTimeInterval(Double(Self.lease) * 5 + 10)
        while Date() < reaped, try created() != deleted() {
            try await Task.sleep(for: .milliseconds(200))
        }
        let (made, gone) = (try created(), try deleted())
        #expect(made == gone, "left behind: \(made.subtracting(gone))")
    }

    @Test func theNextRunReapsWhatALostWatchdogLeftAndSaysSo() async throws {
        let dir = try TempDir()
        // The watchdogs die too (as if someone killed them): only the next run's preparation can clean up.
        let folders = try await killCoordinatorMidRun(dir) { folders in
            for f in folders {
                if let text = try? String(contentsOfFile: f + "/watchdog", encoding: .utf8),
                   let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                    kill(pid, SIGKILL)
                }
            }
        }
        #expect(!unitGroups(in: folders).isEmpty)
        try await Task.sleep(for: .seconds(Double(Self.lease) + 2))
        #expect(!(try await leftOnAgents()).isEmpty, "with no coordinator and no watchdog, the hang should still run")

        let next = try TempDir()
        let bundle = try await DemoSuite.shared.bundle()
        let (code, out, err) = try await runCLI(["run", "--config", try await config(next, hang: false), "--bundle", bundle,
                                                 "--filter", "ArithmeticTests", "--report-dir", next.file("r"),
                                                 "--history", next.file("h.sqlite")], cwd: next.path)
        #expect(code == 0, "\(out)\(err)")
        let report = try String(contentsOfFile: next.file("r/report.json"), encoding: .utf8)
        let ids = Set(folders.map { URL(fileURLWithPath: $0).lastPathComponent })
        #expect(ids.count == 1)
        for id in ids {
            #expect(report.contains("reaped run \(id)"), "report.json's warnings name the reaped run \(id)")
            #expect(out.contains("reaped run \(id)") || err.contains("reaped run \(id)"), "the console says so too")
        }
        #expect(try await leftOnAgents().isEmpty)
        #expect(!folders.contains(where: exists))
    }
}

extension CoordinatorDeathTests {
    @Test func aCoordinatorSuspendedPastItsLeaseRerunsTheReapedTestsInsteadOfReportingCrashes() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        _ = try await Self.fleet.settings()
        // SessionTimeoutTests takes about 8 s (latency × 40); the lease is 3 s; the coordinator sleeps 7 s, less than
        // dead_after, so only the lease can notice.
        // One agent: the others would still be deploying when the coordinator stops, and lose their run too.
        let fleet = try String(contentsOfFile: Self.fleet.directory + "/fleet.yml", encoding: .utf8)
        guard let cut = fleet.range(of: "  - name: agent-2") else { throw TestFailure("unexpected fleet.yml: \(fleet)") }
        var text = String(fleet[..<cut.lowerBound])
        text += "\nssh:\n  lease: 3\n  dead_after: 30\ndestination:\n  name: local\n  environment: { DEMO_LATENCY_SCALE: \"40\" }\n"
        let config = dir.file("suspend.yml")
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        let existing = Set(runFolders())
        let p = try startFanout(["--config", config, "--bundle", bundle, "--filter", "SessionTimeoutTests",
                                 "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite")], in: dir)
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline, p.isRunning, unitGroups(in: runFolders().filter { !existing.contains($0) }).isEmpty {
            try await Task.sleep(for: .milliseconds(100))
        }
        let folders = runFolders().filter { !existing.contains($0) }
        #expect(!unitGroups(in: folders).isEmpty, "the unit never started on an agent")
        kill(p.processIdentifier, SIGSTOP)
        try await Task.sleep(for: .seconds(7))
        #expect(!folders.contains(where: exists), "the agent reaped the run while its coordinator was suspended")
        kill(p.processIdentifier, SIGCONT)
        let end = Date().addingTimeInterval(120)
        while p.isRunning, Date() < end { try await Task.sleep(for: .milliseconds(100)) }
        if p.isRunning { await sigkill(p) }
        #expect(p.terminationStatus == 0)
        let report = try String(contentsOfFile: dir.file("r/report.json"), encoding: .utf8)
        #expect(report.contains("the agent reaped this run"), "the warning says why the tests ran again")
        #expect(!report.contains("\"crashed\""), "a test killed by the reaper is no crash")
        #expect(try await leftOnAgents().isEmpty)
    }
}

/// The same on local slots: the test processes are the coordinator's children, in process groups of their own.
@Suite(.serialized, .timeLimit(.minutes(3))) struct LocalCoordinatorDeathTests {
    func alive(_ pid: pid_t) -> Bool { FileManager.default.fileExists(atPath: "/proc/\(pid)/cmdline") && kill(pid, 0) == 0 }

    @Test func aSigkilledCoordinatorTakesItsLocalTestProcessesWithIt() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let config = dir.file("fanout.yml")
        try "destination:\n  name: local\n  environment: { DEMO_HANG: \"1\" }\n".write(toFile: config, atomically: true, encoding: .utf8)
        let p = try startFanout(["--config", config, "--bundle", bundle, "--filter", "SessionTimeoutTests", "--slots", "1",
                                 "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite")], in: dir)
        // The hanging test's process: a child of this coordinator running the class.
        let marker = [bundle, "SessionTimeoutTests"]
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, p.isRunning, ProcessTable.children(of: p.processIdentifier, with: marker).isEmpty {
            try await Task.sleep(for: .milliseconds(50))
        }
        let running = ProcessTable.children(of: p.processIdentifier, with: marker)
        #expect(running.count == 1, "the hanging test never started: \(running)")
        try await Task.sleep(for: .milliseconds(500))
        await sigkill(p)
        let gone = Date().addingTimeInterval(10)
        while Date() < gone, running.contains(where: alive) { try await Task.sleep(for: .milliseconds(50)) }
        let left = running.filter(alive)
        for pid in left { kill(pid, SIGKILL) } // never leave it behind, even when the check fails
        #expect(left.isEmpty, "the test process outlived its coordinator: \(left)")
    }
}
