import FanoutAgents
import FanoutCore
import FanoutTestSupport
import Foundation
import Testing

/// A workload for usage tests, deterministic in CPU time rather than in loop counts: `python3 usage.py BURN
/// [RELEASE AFTER [MiB]]` burns BURN CPU seconds, then (with RELEASE) holds MiB mebibytes and waits until the file
/// RELEASE exists (at most 60 s), then burns AFTER more seconds. Tests create RELEASE once a `.usage` sample shows
/// what they expect, so nothing depends on how fast the machine is or on when samples happen to be taken. With
/// USAGE_PIN=1 in its environment it runs on one core only (the first it may use), so that two of them take turns.
enum UsageWorkload {
    static let script = """
        import os, sys, time
        if os.environ.get("USAGE_PIN") == "1":
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        def burn(seconds):
            end = time.process_time() + seconds
            while time.process_time() < end:
                pass
        burn(float(sys.argv[1]))
        if len(sys.argv) > 2:
            held = bytearray(int(sys.argv[4]) * 1024 * 1024) if len(sys.argv) > 4 else None
            deadline = time.monotonic() + 60
            while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
                time.sleep(0.02)
            burn(float(sys.argv[3]))
        """

    /// Writes the script into `dir` and returns its path.
    static func install(in dir: String) throws -> String {
        let path = dir + "/usage.py"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}


/// Runs `command` to its end; once a `.usage` sample satisfies `release` (if given), creates the file `releaseFile`.
func collectUsage(_ transport: some Transport, _ command: Command, timeout: Double = 90, releaseFile: String? = nil,
                  release: (ResourceUsage) -> Bool = { _ in false }) async -> UsageRun {
    var run = UsageRun()
    for await event in transport.run(command, timeout: timeout) {
        run.events.append(event)
        if case .usage(let u) = event, let releaseFile, !run.released, release(u) {
            run.released = FileManager.default.createFile(atPath: releaseFile, contents: nil)
        }
    }
    return run
}

/// A fresh folder for one test, removed when it ends.
final class UsageFolder: Sendable {
    let path = NSTemporaryDirectory() + "fanout-usage-" + UUID().uuidString
    init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Local slots measure what a unit's process group consumes: samples while it runs (/proc) and the total at the end
/// (wait4). Real processes; every wait has a deadline. Serialized: these burn CPU, and the machine has 2 cores that
/// other suites measure time on.
@Suite(.serialized, .timeLimit(.minutes(3))) struct LocalUsageTests {
    let transport = LocalTransport(slots: 1)
    let python = "/usr/bin/python3"

    @Test func aBusyUnitReportsGrowingSamplesAndItsTotalRightBeforeItEnds() async throws {
        let dir = try UsageFolder()
        let script = try UsageWorkload.install(in: dir.path)
        let release = dir.path + "/release"
        // 0.6 s of CPU, held until a sample has seen it, then 0.6 s more.
        let run = await collectUsage(transport, Command(executable: python, arguments: [script, "0.6", release, "0.6"]),
                                     releaseFile: release) { $0.cpuSeconds >= 0.5 }
        #expect(run.ending == .exited(0))
        #expect(run.released, "a sample taken while it ran saw its CPU time: \(run.samples)")
        #expect(run.neverDecreases, "\(run.samples)")
        #expect(run.totalComesRightBeforeTheEnd)
        let total = try #require(run.final)
        #expect(total.cpuSeconds >= 1.15 && total.cpuSeconds < 5, "\(total)")
        let first = try #require(run.samples.first)
        #expect(total.cpuSeconds > first.cpuSeconds + 0.4, "it grew after the first sample: \(run.samples)")
        #expect((total.peakMemoryBytes ?? 0) > 1_000_000, "python's resident set: \(total)")
    }

    @Test func aSleepingUnitConsumesAlmostNoCPU() async throws {
        let run = await collectUsage(transport, Command(executable: "/bin/sleep", arguments: ["2"]))
        #expect(run.ending == .exited(0))
        #expect(run.totalComesRightBeforeTheEnd)
        #expect(run.samples.allSatisfy { $0.cpuSeconds < 0.2 }, "\(run.samples)")
        #expect(run.samples.allSatisfy { $0.cpuWaitSeconds != nil && $0.cpuWaitSeconds! < 0.2 },
                "asleep, it does not wait for a core (and this kernel keeps schedstat): \(run.samples)")
        #expect(run.samples.dropLast().allSatisfy { $0.readyThreads == 0 }, "\(run.samples)")
        #expect(run.neverDecreases)
    }

    @Test func thePeakMemoryOfAProcessThatHolds200MiBIsReported() async throws {
        let dir = try UsageFolder()
        let script = try UsageWorkload.install(in: dir.path)
        let release = dir.path + "/release"
        let run = await collectUsage(transport, Command(executable: python, arguments: [script, "0", release, "0", "200"]),
                                     releaseFile: release) { ($0.peakMemoryBytes ?? 0) >= 150 << 20 }
        #expect(run.ending == .exited(0))
        #expect(run.released, "a sample taken while it held the memory saw it (VmHWM): \(run.samples)")
        let total = try #require(run.final)
        #expect((total.peakMemoryBytes ?? 0) >= 150 << 20, "\(total)")
        #expect((total.peakMemoryBytes ?? 0) < 2 << 30, "\(total)")
        #expect(run.totalComesRightBeforeTheEnd)
    }

    @Test func aChildInTheGroupThatBurnsCPUIsCountedWhileItRunsAndInTheTotal() async throws {
        let dir = try UsageFolder()
        let script = try UsageWorkload.install(in: dir.path)
        let release = dir.path + "/release"
        // The leader only waits (it consumes nothing, and its children's time reaches it only when it reaps them):
        // a sample of 0.5 s while the child lives can only come from the child.
        let line = "\(python) \(ShellQuote.quote(script)) 0.6 \(ShellQuote.quote(release)) 0.2 & wait"
        let run = await collectUsage(transport, Command(executable: "/bin/sh", arguments: ["-c", line]),
                                     releaseFile: release) { $0.cpuSeconds >= 0.5 }
        #expect(run.ending == .exited(0))
        #expect(run.released, "the live child was counted: \(run.samples)")
        let total = try #require(run.final)
        #expect(total.cpuSeconds >= 0.75, "the child's whole time is in the total (the shell waited for it): \(total)")
        #expect(run.neverDecreases && run.totalComesRightBeforeTheEnd)
    }

    @Test func twoBusyProcessesOnOneCoreEachWaitWhileTheOtherRuns() async throws {
        let dir = try UsageFolder()
        let script = try UsageWorkload.install(in: dir.path)
        let release = dir.path + "/release"
        // Both burn 1.5 s on the same core, then sleep until released: while one runs, the other is ready and waits,
        // so together they wait about as long as they compute. Released once a sample has seen that.
        let one = "\(python) \(ShellQuote.quote(script)) 1.5 \(ShellQuote.quote(release)) 0"
        let run = await collectUsage(transport, Command(executable: "/bin/sh", arguments: ["-c", "\(one) & \(one) & wait"],
                                                        environment: ["USAGE_PIN": "1"]),
                                     releaseFile: release) { $0.cpuSeconds >= 2.9 && ($0.cpuWaitSeconds ?? 0) >= 1 }
        #expect(run.ending == .exited(0))
        #expect(run.released, "a sample saw both the CPU time and the wait: \(run.samples)")
        #expect(run.samples.allSatisfy { $0.cpuWaitSeconds != nil }, "\(run.samples)")
        #expect(run.samples.contains { ($0.readyThreads ?? 0) >= 2 }, "while they burned, both were ready: \(run.samples)")
        #expect(run.neverDecreases && run.totalComesRightBeforeTheEnd)
        #expect((run.final?.cpuWaitSeconds ?? 0) >= 1, "the total keeps the samples' wait: \(String(describing: run.final))")
    }

    @Test func aChildNobodyWaitsForStillCountsThroughTheSamples() async throws {
        let dir = try UsageFolder()
        let script = try UsageWorkload.install(in: dir.path)
        let release = dir.path + "/release"
        // The shell `exec`s sleep: the burning child's parent never reaps it, so wait4's rusage of the leader
        // knows nothing of it. The samples do, and the total is never less than the last sample.
        let line = "\(python) \(ShellQuote.quote(script)) 0.6 \(ShellQuote.quote(release)) 0 & "
            + "while [ ! -e \(ShellQuote.quote(release)) ]; do sleep 0.05; done; exec sleep 0.3"
        let run = await collectUsage(transport, Command(executable: "/bin/sh", arguments: ["-c", line]),
                                     releaseFile: release) { $0.cpuSeconds >= 0.5 }
        #expect(run.ending == .exited(0))
        #expect(run.released, "\(run.samples)")
        #expect((run.final?.cpuSeconds ?? 0) >= 0.5, "\(run.samples)")
        #expect(run.neverDecreases && run.totalComesRightBeforeTheEnd)
    }

    @Test func aProcessWhoseNameHoldsSpacesAndParenthesesIsMeasured() async throws {
        let dir = try UsageFolder()
        let script = try UsageWorkload.install(in: dir.path)
        let release = dir.path + "/release"
        // /proc/<pid>/stat shows the name between parentheses: `123 (a) (b c) S …`.
        let link = dir.path + "/a) (b c"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: python)
        let run = await collectUsage(transport, Command(executable: link, arguments: [script, "0.6", release, "0"]),
                                     releaseFile: release) { $0.cpuSeconds >= 0.5 }
        #expect(run.ending == .exited(0))
        #expect(run.released, "\(run.samples)")
    }

    @Test func aKilledUnitStillEndsWithItsUsage() async throws {
        let dir = try UsageFolder()
        let script = try UsageWorkload.install(in: dir.path)
        // Burns 0.3 s, then waits for a release that never comes: killed once a sample has seen it burn.
        let (stream, continuation) = AsyncStream<ProcessEvent>.makeStream(bufferingPolicy: .unbounded)
        let process = try #require(LocalProcess.start(
            Command(executable: python, arguments: [script, "0.3", dir.path + "/never", "0"]), timeout: 90,
            events: continuation))
        var run = UsageRun()
        for await event in stream {
            run.events.append(event)
            if case .usage(let u) = event, u.cpuSeconds >= 0.25 { process.cancel() }
        }
        #expect(run.ending == .cancelled)
        #expect(run.totalComesRightBeforeTheEnd)
        #expect((run.final?.cpuSeconds ?? 0) >= 0.25, "\(run.samples)")
    }

    @Test func theMachineReportsItsCoresMemoryAndIdentity() async throws {
        let r = try #require(await transport.resources())
        #expect(r.cores >= 1 && r.cores == ProcessInfo.processInfo.activeProcessorCount)
        #expect((r.memoryBytes ?? 0) > 64 << 20)
        let id = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        if let id, !id.isEmpty { #expect(r.machine == id) } else { #expect(r.machine != nil) }
    }
}
