import FanoutAgents
import FanoutCore
import Foundation
import Testing

/// What a unit consumes on an agent, measured by the agent-side shell lines, run here by a real /bin/sh against
/// real processes: the wrapper between the unit's group and its test (exit status and signal unchanged, CPU time
/// written at the end), the sampler of every running unit, the resources probe. Uses RemoteLayoutTests' folder and
/// helpers. Serialized: these burn CPU, and the machine has 2 cores that other suites measure time on.
@Suite(.serialized, .timeLimit(.minutes(3))) struct RemoteLayoutUsageTests {
    let base: RemoteLayoutTests
    init() throws { base = try RemoteLayoutTests() }

    var layout: RemoteLayout { base.layout }
    var root: String { base.root }
    func macLike(_ script: String) throws -> String { try base.macLike(script) }
    func bsdToolsUsed() -> String { base.bsdToolsUsed() }

    /// How the unit's time limit is enforced on the agent: none, GNU timeout, or the watcher of a macOS agent.
    enum LimitPath: CaseIterable, CustomStringConvertible {
        case none, timeout, macWatcher
        var description: String { "\(self == .none ? "no limit" : self == .timeout ? "timeout" : "mac watcher")" }
    }

    func unitLine(_ command: Command, unit: Int, path: LimitPath) throws -> String {
        let line = layout.unitCommand(command, unit: unit, workingDirectory: layout.runDir, limit: path == .none ? nil : 60)
        return path == .macWatcher ? try macLike(line) : line
    }

    /// Waits (up to 30 s) until `file` exists.
    func waitFor(_ file: String) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !FileManager.default.fileExists(atPath: file) {
            guard ContinuousClock.now < deadline else { throw UsageTestFailure("\(file) never appeared") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Runs the sampler (as a macOS agent would, with `mac`) until `done` holds of what it printed (up to 30 s).
    func sample(mac: Bool = false, until done: ([Int: ResourceUsage]) -> Bool) async throws -> [Int: ResourceUsage] {
        let deadline = ContinuousClock.now + .seconds(30)
        var last: [Int: ResourceUsage] = [:]
        while ContinuousClock.now < deadline {
            let (e, out, err) = await sh(mac ? try macLike(layout.usageSample) : layout.usageSample)
            guard e == .exited(0) else { throw UsageTestFailure("the sampler failed (\(e)): \(err)") }
            last = RemoteUsage.parseUsageSample(out)
            if done(last) { return last }
            try await Task.sleep(for: .milliseconds(250))
        }
        throw UsageTestFailure("the samples never showed what was expected; the last: \(last)")
    }

    func pid(in file: String) throws -> pid_t {
        pid_t(try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    @Test(arguments: LimitPath.allCases)
    func theWrapperEndsAsItsTestEndedAndWritesItsCPUTime(path: LimitPath) async throws {
        _ = await sh(layout.prepareRun)
        let python = "/usr/bin/python3"
        let cases: [(Command, status: Int32, signaled: Bool)] = [
            (Command(executable: "/bin/sh", arguments: ["-c", "echo out; exit 0"]), 0, false),
            (Command(executable: "/bin/sh", arguments: ["-c", "exit 1"]), 1, false),
            (Command(executable: "/bin/sh", arguments: ["-c", "exit 200"]), 200, false),
            // 128 + SIGSTOP on Linux: a status, which must not stop the shell.
            (Command(executable: "/bin/sh", arguments: ["-c", "exit 147"]), 147, false),
            (Command(executable: python, arguments: ["-c", "import os; os.abort()"]), SIGABRT, true),
            (Command(executable: "/bin/sh", arguments: ["-c", "kill -SEGV $$"]), SIGSEGV, true),
            (Command(executable: "/bin/sh", arguments: ["-c", "kill -KILL $$"]), SIGKILL, true),
        ]
        for (i, c) in cases.enumerated() {
            let unit = 10 + i
            let ended = try await runAsSessionLeader(try unitLine(c.0, unit: unit, path: path))
            #expect(ended.status == c.status && ended.signaled == c.signaled, "\(path) \(c.0.arguments): \(ended)")
            if i == 0 { #expect(ended.stdout == "out\n") }
            // The test died (or exited) by itself: its shell lived on to write what it consumed.
            let (_, written, _) = await sh(layout.takeUsage(unit))
            #expect(RemoteUsage.parseTimes(written) != nil, "\(path) \(c.0.arguments): '\(written)'")
            #expect(!FileManager.default.fileExists(atPath: layout.usageFile(unit)), "taken means removed")
        }
    }

    @Test(arguments: [LimitPath.none, .timeout])
    func theWrapperCountsTheCPUTimeOfEverythingItsTestWaitedFor(path: LimitPath) async throws {
        _ = await sh(layout.prepareRun)
        let script = try UsageWorkload.install(in: root)
        let test = Command(executable: "/bin/sh", arguments: ["-c", "/usr/bin/python3 \"$1\" 0.6 & wait", "sh", script])
        let ended = try await runAsSessionLeader(try unitLine(test, unit: 1, path: path))
        #expect(ended.status == 0 && !ended.signaled)
        let (_, written, _) = await sh(layout.takeUsage(1))
        let cpu = try #require(RemoteUsage.parseTimes(written), "'\(written)'")
        #expect(cpu >= 0.55 && cpu < 5, "the grandchild's 0.6 s: \(cpu)")
    }

    @Test(arguments: LimitPath.allCases)
    func killingAUnitKillsItsShellItsTestAndWhatTheTestStarted(path: LimitPath) async throws {
        _ = await sh(layout.prepareRun)
        let test = root + "/test.pid", child = root + "/child.pid"
        let command = Command(executable: "/bin/sh", arguments: ["-c", "echo $$ > \"$1\"; sleep 300 & echo $! > \"$2\"; wait", "sh", test, child])
        let running = Task { try await runAsSessionLeader(try unitLine(command, unit: 4, path: path)) }
        try await waitFor(child)
        let shell = try pid(in: layout.pidFile(4))
        _ = await sh(layout.killUnit(4))
        let ended = try await running.value
        #expect(ended.signaled && ended.status == SIGKILL, "\(path): \(ended)")
        #expect(await processIsGone(shell), "\(path): the unit's shell")
        #expect(await processIsGone(try pid(in: test)), "\(path): the test")
        #expect(await processIsGone(try pid(in: child)), "\(path): what the test started")
        let (_, written, _) = await sh(layout.takeUsage(4))
        #expect(written.isEmpty, "a killed group writes nothing: the last sample stands")
    }

    @Test func theSamplerSumsEachRunningUnitsGroupAndSkipsFinishedOnes() async throws {
        _ = await sh(layout.prepareRun)
        let script = try UsageWorkload.install(in: root)
        let release = root + "/release"
        // Unit 1 burns in a child of its test (under GNU timeout: the same group); unit 2 sleeps; unit 3 is over.
        let burner = Command(executable: "/bin/sh", arguments: ["-c", "/usr/bin/python3 \"$1\" 0.6 \"$2\" 0.2 & wait", "sh", script, release])
        let one = Task { try await runAsSessionLeader(try unitLine(burner, unit: 1, path: .timeout)) }
        let two = Task { try await runAsSessionLeader(try unitLine(Command(executable: "/bin/sleep", arguments: ["300"]), unit: 2, path: .none)) }
        _ = try await runAsSessionLeader(try unitLine(Command(executable: "/bin/true", arguments: []), unit: 3, path: .none))
        try await waitFor(layout.pidFile(2))

        let seen = try await sample { ($0[1]?.cpuSeconds ?? 0) >= 0.5 && $0[2] != nil }
        #expect((seen[1]?.peakMemoryBytes ?? 0) > 1 << 20, "python's resident set: \(seen)")
        #expect((seen[2]?.cpuSeconds ?? 1) < 0.2 && (seen[2]?.peakMemoryBytes ?? 0) > 0, "\(seen)")
        #expect(seen[3] == nil, "a unit whose group is gone prints nothing: \(seen)")
        #expect(Set(seen.keys).isSubset(of: [1, 2]), "\(seen)")

        #expect(FileManager.default.createFile(atPath: release, contents: nil))
        let ended = try await one.value
        #expect(ended.status == 0 && !ended.signaled, "\(ended)")
        let (_, written, _) = await sh(layout.takeUsage(1))
        #expect((RemoteUsage.parseTimes(written) ?? 0) >= 0.75, "'\(written)'")
        let after = try await sample { $0[1] == nil }
        #expect(after[2] != nil)
        _ = await sh(layout.killUnit(2))
        _ = try await two.value
    }

    @Test func theSamplerAddsHowLongEachUnitWaitedForACore() async throws {
        _ = await sh(layout.prepareRun)
        let script = try UsageWorkload.install(in: root)
        let release = root + "/release"
        // Unit 1: two busy processes on one core, 1.5 s of CPU each, so each waits while the other runs; unit 2
        // sleeps.
        let one = "/usr/bin/python3 \"$1\" 1.5 \"$2\" 0"
        let busy = Command(executable: "/bin/sh", arguments: ["-c", "\(one) & \(one) & wait", "sh", script, release],
                           environment: ["USAGE_PIN": "1"])
        let first = Task { try await runAsSessionLeader(try unitLine(busy, unit: 1, path: .timeout)) }
        let second = Task { try await runAsSessionLeader(try unitLine(Command(executable: "/bin/sleep", arguments: ["300"]), unit: 2, path: .none)) }
        try await waitFor(layout.pidFile(2))
        // While they burn, both are ready to run (one on the core, one waiting for it).
        let burning = try await sample { ($0[1]?.readyThreads ?? 0) >= 2 && $0[2] != nil }
        #expect(burning[2]?.readyThreads == 0, "asleep, none of its threads is ready: \(burning)")
        let seen = try await sample { ($0[1]?.cpuSeconds ?? 0) >= 2.9 && ($0[1]?.cpuWaitSeconds ?? 0) >= 1 && $0[2] != nil }
        let asleep = try #require(seen[2]?.cpuWaitSeconds, "every Linux member reports its wait: \(seen)")
        #expect(asleep < 0.2, "\(seen)")
        #expect(FileManager.default.createFile(atPath: release, contents: nil))
        let ended = try await first.value
        #expect(ended.status == 0 && !ended.signaled, "\(ended)")
        _ = await sh(layout.killUnit(2))
        _ = try await second.value
    }

    @Test func onAMacAgentTheSamplerReadsPs() async throws {
        _ = await sh(layout.prepareRun)
        let script = try UsageWorkload.install(in: root)
        let release = root + "/release"
        _ = try macLike("") // the emulated userland, made once before two units start with it at the same time
        // ps prints whole seconds here (procps); macOS's ps prints hundredths.
        let burner = Command(executable: "/usr/bin/python3", arguments: [script, "1.2", release, "0"])
        let one = Task { try await runAsSessionLeader(try unitLine(burner, unit: 1, path: .macWatcher)) }
        let two = Task { try await runAsSessionLeader(try unitLine(Command(executable: "/bin/sleep", arguments: ["300"]), unit: 2, path: .macWatcher)) }
        try await waitFor(layout.pidFile(2))
        let seen = try await sample(mac: true) { ($0[1]?.cpuSeconds ?? 0) >= 1 && $0[2] != nil }
        #expect(seen[2]?.cpuSeconds == 0 && (seen[2]?.peakMemoryBytes ?? 0) > 0, "\(seen)")
        #expect((seen[1]?.peakMemoryBytes ?? 0) > 1 << 20, "\(seen)")
        #expect(bsdToolsUsed().contains("uname"), "the sampler asked which system it is on")
        #expect(FileManager.default.createFile(atPath: release, contents: nil))
        _ = try await one.value
        _ = await sh(layout.killUnit(2))
        _ = try await two.value
    }

    @Test func whatTheWrapperAndTheSamplerPrintIsParsed() {
        #expect(RemoteUsage.parseTimes("0m0.010000s 0m0.000000s\n0m1.230000s 0m0.270000s\n") == 1.5)
        #expect(RemoteUsage.parseTimes("0m0.002s 0m0.000s\n1m2.500s 0m0.500s\n") == 63)
        #expect(RemoteUsage.parseTimes("0m0,002s 0m0,000s\n0m1,250s 0m0,250s\n") == 1.5, "a decimal comma")
        #expect(RemoteUsage.parseTimes("0.00s 0.00s\n1.25s 0.25s") == 1.5, "zsh")
        #expect(RemoteUsage.parseTimes("1h0m0s 0m0s\n1h0m1s 0s\n") == 3601)
        #expect(RemoteUsage.parseTimes("") == nil)
        #expect(RemoteUsage.parseTimes("0m0.01s 0m0.00s\n") == nil, "no children line")
        #expect(RemoteUsage.parseTimes("0m0.01s 0m0.00s\ngarbage here\n") == nil)
        #expect(RemoteUsage.parseTimes("0m0.01s 0m0.00s\n0m1.0 0m0.0s\n") == nil, "a word without its unit")

        let samples = RemoteUsage.parseUsageSample("3 1.25 2048\n4 0.00 0\nbad line\n5 x 1\n6 1.0 -1\n7 2.0 10 extra\n3 1.00 4096\n")
        #expect(samples == [3: ResourceUsage(cpuSeconds: 1.25, peakMemoryBytes: 4096 * 1024),
                            4: ResourceUsage(cpuSeconds: 0, peakMemoryBytes: nil)])
        // Run-queue waits in nanoseconds and threads ready now, one line per member process, summed; a wait with no
        // usage line is dropped.
        let waits = RemoteUsage.parseUsageSample(
            "3 1.25 2048\nW 3 1500000000 1\nW 3 250000000 2\nW 9 1 1\nW 3 x 1\nW 3 -5 0\nW 3 5 -1\nW 3 5\n4 0.00 0\n")
        #expect(waits == [3: ResourceUsage(cpuSeconds: 1.25, peakMemoryBytes: 2048 * 1024, cpuWaitSeconds: 1.75, readyThreads: 3),
                          4: ResourceUsage(cpuSeconds: 0, peakMemoryBytes: nil)])
    }

    @Test func theResourcesProbeReportsThisMachine() async throws {
        let (e, out, err) = await sh(AgentResourcesProbe.command)
        #expect(e == .exited(0), "\(err)")
        let r = try #require(AgentResourcesProbe.parse(out), "\(out)")
        #expect(r.cores >= 1)
        #expect((r.memoryBytes ?? 0) > 64 << 20, "\(out)")
        let here = await LocalTransport(slots: 1).resources()
        #expect(r.machine != nil && r.machine == here?.machine, "an agent on this machine is this machine: \(out)")

        // macOS's answers, in the probe's words.
        let mac = AgentResourcesProbe.parse("cores 10\nmemory-bytes 17179869184\nmachine mac-mini.local\n")
        #expect(mac == AgentResources(cores: 10, memoryBytes: 17_179_869_184, machine: "mac-mini.local"))
        #expect(AgentResourcesProbe.parse("cores 4\nmemory-kB 8000000\nmachine \n") == AgentResources(cores: 4, memoryBytes: 8_192_000_000))
        #expect(AgentResourcesProbe.parse("cores \nmemory-bytes \nmachine x\n") == nil, "no cores: the agent could not tell")
    }
}

struct UsageTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
