import FanoutAgents
import FanoutCoordinator
import FanoutCore
import FanoutTestSupport
import Foundation
import Testing

/// What units consume on a real sshd agent on loopback (Agents/local-fleet), through SSHTransport: samples while
/// they run, the exact total from the unit's shell at the end, exit statuses and signals unchanged by that shell,
/// and the agent's cores and memory.
///
/// The "test binary" deployed to the agent is a small Python program that burns CPU seconds (deterministic in CPU
/// time, not in loop counts) and can hold until the test creates a release file once a sample has seen what it
/// expects: nothing depends on how fast the machine is or on when samples happen to be taken.
@Suite(.serialized, .timeLimit(.minutes(6))) struct ResourceUsageSSHTests {
    static let fleet = IntegrationFleet(name: "usage", port: 2637)

    /// `usage.py BURN [RELEASE AFTER]`: burns BURN CPU seconds; with RELEASE, waits until that file exists (at most
    /// 60 s), then burns AFTER more.
    static let workload = """
        #!/usr/bin/python3
        import os, sys, time
        def burn(seconds):
            end = time.process_time() + seconds
            while time.process_time() < end:
                pass
        burn(float(sys.argv[1]))
        if len(sys.argv) > 2:
            deadline = time.monotonic() + 60
            while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
                time.sleep(0.02)
            burn(float(sys.argv[3]))
        """

    /// An agent prepared for a run of its own, with the workload deployed as the product.
    struct Agent {
        let transport: SSHTransport
        let layout: RemoteLayout
        /// The workload's path on the agent.
        let workload: String
        /// A folder here that the agent user can read (release files go there).
        let dir: TempDir

        func run(_ command: Command, timeout: Double? = 120, release: @escaping (ResourceUsage) -> Bool = { _ in false })
            async -> UsageRun {
            var run = UsageRun()
            for await event in transport.run(command, timeout: timeout) {
                run.events.append(event)
                if case .usage(let u) = event, !run.released, release(u) {
                    run.released = FileManager.default.createFile(atPath: releaseFile, contents: nil)
                }
            }
            return run
        }

        var releaseFile: String { dir.file("release") }

        /// What is left in the run's usage folder on the agent.
        func usageFilesLeft() async throws -> String {
            try await transport.connection().run("ls -A \(ShellQuote.quote(layout.usage))").stdoutText
        }
    }

    func agent(_ index: Int = 0) async throws -> Agent {
        let settings = try await Self.fleet.settings()
        let dir = try TempDir()
        chmod(dir.path, 0o755)
        try FileManager.default.createDirectory(atPath: dir.file("product"), withIntermediateDirectories: true)
        let product = dir.file("product/usage.py")
        try Self.workload.write(toFile: product, atomically: true, encoding: .utf8)
        chmod(product, 0o755)
        let runID = "usage-" + UUID().uuidString.prefix(8).lowercased()
        let transport = SSHTransport(spec: settings.agents[index], settings: settings.ssh, archives: ProductArchives())
        let remote = try await transport.prepare(product: TestProduct(binary: product), runID: runID)
        return Agent(transport: transport, layout: try RemoteLayout(workdir: settings.agents[index].workdir, runID: runID),
                     workload: remote, dir: dir)
    }

    @Test func aBusyUnitReportsGrowingSamplesAndItsExactTotalRightBeforeItEnds() async throws {
        let a = try await agent()
        // 0.6 s of CPU, held until a sample has seen it, then 0.6 s more.
        let run = await a.run(Command(executable: a.workload, arguments: ["0.6", a.releaseFile, "0.6"])) { $0.cpuSeconds >= 0.5 }
        #expect(run.ending == .exited(0), "\(run.events.suffix(3))")
        #expect(run.released, "a sample taken while it ran saw its CPU time: \(run.samples)")
        #expect(run.neverDecreases && run.totalComesRightBeforeTheEnd, "\(run.samples)")
        let first = try #require(run.samples.first)
        let total = try #require(run.final)
        #expect(total.cpuSeconds >= 1.15 && total.cpuSeconds < 5, "\(total)")
        #expect(total.cpuSeconds > first.cpuSeconds + 0.4, "\(run.samples)")
        #expect((total.peakMemoryBytes ?? 0) > 1 << 20, "the samples saw python's resident set: \(total)")
        #expect(try await a.usageFilesLeft().isEmpty, "the unit's usage file was read and removed")
        await a.transport.shutdown()
    }

    @Test func aSleepingUnitConsumesAlmostNoCPU() async throws {
        let a = try await agent()
        let run = await a.run(Command(executable: "/bin/sleep", arguments: ["3"]))
        #expect(run.ending == .exited(0))
        #expect(run.totalComesRightBeforeTheEnd, "the shell wrote the total: \(run.events)")
        #expect(run.samples.allSatisfy { $0.cpuSeconds < 0.2 }, "\(run.samples)")
        await a.transport.shutdown()
    }

    @Test func aChildOfTheTestThatBurnsCPUIsCounted() async throws {
        let a = try await agent()
        let line = "\(ShellQuote.quote(a.workload)) 0.6 \(ShellQuote.quote(a.releaseFile)) 0.2 & wait"
        let run = await a.run(Command(executable: "/bin/sh", arguments: ["-c", line])) { $0.cpuSeconds >= 0.5 }
        #expect(run.ending == .exited(0))
        #expect(run.released, "the sampler counted the live child: \(run.samples)")
        #expect((run.final?.cpuSeconds ?? 0) >= 0.75, "the child's whole time is in the total: \(run.samples)")
        #expect(run.neverDecreases && run.totalComesRightBeforeTheEnd)
        await a.transport.shutdown()
    }

    @Test(arguments: [nil, 120.0])
    func exitStatusesAndSignalsComeThroughTheUnitsShellUnchanged(limit: Double?) async throws {
        let a = try await agent(1)
        let cases: [(Command, UnitEnding)] = [
            (Command(executable: "/bin/sh", arguments: ["-c", "echo out; exit 1"]), .exited(1)),
            (Command(executable: "/bin/sh", arguments: ["-c", "exit 3"]), .exited(3)),
            (Command(executable: "/usr/bin/python3", arguments: ["-c", "import os; os.abort()"]), .signaled(SIGABRT)),
            (Command(executable: "/usr/bin/python3", arguments: ["-c", "import ctypes; ctypes.string_at(0)"]), .signaled(SIGSEGV)),
            (Command(executable: "/bin/sh", arguments: ["-c", "kill -SEGV $$"]), .signaled(SIGSEGV)),
        ]
        for (command, expected) in cases {
            let run = await a.run(command, timeout: limit)
            #expect(run.ending == expected, "\(command.arguments) with limit \(String(describing: limit)): \(run.events.suffix(2))")
            #expect(run.totalComesRightBeforeTheEnd, "\(command.arguments)")
        }
        #expect(try await a.usageFilesLeft().isEmpty)
        await a.transport.shutdown()
    }

    @Test func aUnitKilledAtItsTimeLimitEndsWithItsLastSample() async throws {
        let a = try await agent()
        // Burns, then waits for a release that never comes: the time limit kills its group, so its shell writes
        // nothing and its last sample is its total.
        let run = await a.run(Command(executable: a.workload, arguments: ["0.3", a.dir.file("never"), "0"]), timeout: 6)
        #expect(run.ending == .timedOut(limit: 6))
        // Sampled every 2 s for 6 s: samples came, and after the first 0.3 s of burning they no longer change.
        try #require(run.samples.count >= 2, "a 6 s unit sampled every 2 s: \(run.events)")
        #expect(run.totalComesRightBeforeTheEnd && run.neverDecreases, "\(run.events.suffix(3))")
        #expect(run.samples.dropLast().last == run.samples.last, "no total of its own: the last sample stands: \(run.samples.suffix(2))")
        #expect(try await a.usageFilesLeft().isEmpty)
        await a.transport.shutdown()
    }

    @Test func theAgentReportsItsCoresMemoryAndMachine() async throws {
        let a = try await agent()
        let r = try #require(await a.transport.resources())
        #expect(r.cores >= 1)
        #expect((r.memoryBytes ?? 0) > 64 << 20, "\(r)")
        let here = await LocalTransport(slots: 1).resources()
        #expect(r.machine != nil && r.machine == here?.machine, "an agent on loopback is this machine: \(r)")
        await a.transport.shutdown()
    }
}

