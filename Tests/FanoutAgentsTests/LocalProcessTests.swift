import FanoutAgents
import FanoutCore
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2))) struct LocalProcessTests {
    let transport = LocalTransport(slots: 1)

    @Test func separatesStreamsAndReportsExitStatus() async {
        let (e, out, err) = await transport.capture(Command(executable: "/bin/sh", arguments: ["-c", "echo out; echo err >&2; exit 3"]))
        #expect(e == .exited(3))
        #expect(String(decoding: out, as: UTF8.self) == "out\n")
        #expect(String(decoding: err, as: UTF8.self) == "err\n")
    }

    @Test func reportsTheSignalAProcessDiedOf() async {
        let (e, _, _) = await transport.capture(Command(executable: "/bin/sh", arguments: ["-c", "kill -SEGV $$"]))
        #expect(e == .signaled(11))
    }

    @Test func missingExecutableFailsToStart() async {
        let (e, _, _) = await transport.capture(Command(executable: "/nonexistent/binary", arguments: []))
        guard case .failedToStart(let why) = e else { Issue.record("got \(e)"); return }
        #expect(why.contains("/nonexistent/binary"))
    }

    @Test func timeoutKillsTheWholeProcessGroup() async throws {
        let dir = NSTemporaryDirectory() + "fanout-lp-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A child that leaves a grandchild behind: the time-out must take both.
        let script = "sleep 300 & echo $! > \(dir)/child; sleep 300"
        let (e, _, _) = await transport.capture(Command(executable: "/bin/sh", arguments: ["-c", script]), timeout: 0.5)
        #expect(e == .timedOut(limit: 0.5))
        let child = try String(contentsOfFile: dir + "/child", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(await processIsGone(pid_t(child) ?? 0), "the grandchild is gone too")
    }

    @Test func cancellingTheConsumerKillsTheProcess() async throws {
        let dir = NSTemporaryDirectory() + "fanout-lp-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let task = Task {
            for await _ in transport.run(Command(executable: "/bin/sh", arguments: ["-c", "echo $$ > \(dir)/pid; exec sleep 300"]), timeout: nil) {}
        }
        while !FileManager.default.fileExists(atPath: dir + "/pid") { try await Task.sleep(for: .milliseconds(10)) }
        let pid = pid_t(try String(contentsOfFile: dir + "/pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        task.cancel()
        _ = await task.value
        #expect(await processIsGone(pid))
    }

    @Test func streamsOutputAsItIsWritten() async {
        var chunks = 0
        var sawFirstBeforeEnd = false
        for await event in transport.run(Command(executable: "/bin/sh", arguments: ["-c", "echo one; sleep 0.3; echo two"]), timeout: 10) {
            if case .output(.stdout, let b) = event {
                chunks += 1
                if String(decoding: b, as: UTF8.self).hasPrefix("one") { sawFirstBeforeEnd = true }
            }
        }
        #expect(sawFirstBeforeEnd && chunks == 2, "output arrives as it is written, not at the end")
    }

    /// Units start concurrently; a test process that inherited another unit's pipe would hold that unit's output
    /// open, and its end would be seen only when this process ended too. A child gets 0, 1 and 2 and nothing else.
    @Test func aChildInheritsNoOtherDescriptors() async throws {
        let dir = NSTemporaryDirectory() + "fanout-lp-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A unit still running while the next one starts: its pipes are open in this process meanwhile.
        let running = Task {
            for await _ in transport.run(Command(executable: "/bin/sh", arguments: ["-c", "echo $$ > \(dir)/pid; exec sleep 300"]), timeout: 60) {}
        }
        defer { running.cancel() }
        while !FileManager.default.fileExists(atPath: dir + "/pid") { try await Task.sleep(for: .milliseconds(10)) }
        let (e, out, _) = await transport.capture(Command(executable: "/bin/sh", arguments: ["-c", "cd /proc/$$/fd && ls"]))
        #expect(e == .exited(0))
        let fds = Set(String(decoding: out, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Int($0) })
        // `ls` itself opens the directory it lists, in its own process: the shell's table is what is listed.
        #expect(fds == [0, 1, 2], "the child's descriptors: \(fds.sorted())")
    }
}
