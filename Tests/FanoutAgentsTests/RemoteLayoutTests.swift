import FanoutAgents
import FanoutCore
import Foundation
import Testing

/// The shell lines an agent runs, executed here by a real /bin/sh (dash, the usual remote shell) against a real
/// folder. (That `exec` hands the test binary's exit signal back through sshd is pinned by the SSH transport tests.)
@Suite(.timeLimit(.minutes(2))) struct RemoteLayoutTests {
    let folder: Folder
    let layout: RemoteLayout
    var root: String { folder.path }

    /// A temporary folder removed when the test (and so its suite value) ends.
    final class Folder: Sendable {
        let path = NSTemporaryDirectory() + "fanout-layout-" + UUID().uuidString
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    init() throws {
        folder = Folder()
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        layout = try RemoteLayout(workdir: folder.path + "/work dir", runID: "run-1")
    }

    func sh(_ script: String) async -> (UnitEnding, String, String) {
        let (e, o, r) = await LocalTransport(slots: 1).capture(Command(executable: "/bin/sh", arguments: ["-c", script]))
        return (e, String(decoding: o, as: UTF8.self), String(decoding: r, as: UTF8.self))
    }

    func makeArchive(_ contents: [String: String]) async throws -> (String, String) {
        let src = root + "/src-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: src, withIntermediateDirectories: true)
        for (name, text) in contents { try text.write(toFile: src + "/" + name, atomically: true, encoding: .utf8) }
        let tar = root + "/a-" + UUID().uuidString + ".tar"
        _ = await sh("tar -cf \(ShellQuote.quote(tar)) -C \(ShellQuote.quote(src)) .")
        let (_, sum, _) = await sh("sha256sum \(ShellQuote.quote(tar)) | cut -d' ' -f1")
        return (tar, sum.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func rejectsUnsafeWorkdirsAndRunIDs() {
        #expect(throws: AgentError.self) { try RemoteLayout(workdir: "relative/dir", runID: "r") }
        #expect(throws: AgentError.self) { try RemoteLayout(workdir: "/srv/../etc", runID: "r") }
        #expect(throws: AgentError.self) { try RemoteLayout(workdir: "/", runID: "r") }
        #expect(throws: AgentError.self) { try RemoteLayout(workdir: "/srv/f", runID: "r; rm -rf /") }
        #expect(throws: AgentError.self) { try RemoteLayout(workdir: "/srv/f", runID: "../x") }
        #expect((try? RemoteLayout(workdir: "/srv/fanout/", runID: "20261121-1a"))?.workdir == "/srv/fanout")
    }

    @Test func installIsVerifiedAtomicAndCached() async throws {
        _ = await sh(layout.prepareRun)
        let (tar, sha) = try await makeArchive(["Tests.xctest": "binary", "data.txt": "x"])
        let (ready0, out0, _) = await sh(layout.bundleReady(sha))
        #expect(ready0 == .exited(0) && out0 == "no\n")
        let (e, _, err) = await sh(layout.install(sha: sha, archive: tar))
        #expect(e == .exited(0), "\(err)")
        #expect(FileManager.default.fileExists(atPath: layout.bundle(sha) + "/Tests.xctest"))
        #expect(!FileManager.default.fileExists(atPath: tar), "the uploaded archive is removed")
        let (_, out1, _) = await sh(layout.bundleReady(sha))
        #expect(out1 == "yes\n")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: layout.incoming)
        #expect(leftovers.isEmpty, "nothing half-finished stays in .incoming: \(leftovers)")
    }

    @Test func corruptUploadIsRefusedAndNeverUsed() async throws {
        _ = await sh(layout.prepareRun)
        let (tar, sha) = try await makeArchive(["Tests.xctest": "binary"])
        try "tampered".write(toFile: tar, atomically: true, encoding: .utf8)
        let (e, _, err) = await sh(layout.install(sha: sha, archive: tar))
        #expect(e == .exited(65))
        #expect(err.contains("checksum mismatch"))
        let (_, ready, _) = await sh(layout.bundleReady(sha))
        #expect(ready == "no\n")
    }

    @Test func evictionKeepsTheNewestAndTheCurrent() async throws {
        _ = await sh(layout.prepareRun)
        var shas: [String] = []
        for i in 0..<4 {
            let (tar, sha) = try await makeArchive(["f": "content \(i)"])
            _ = await sh(layout.install(sha: sha, archive: tar))
            _ = await sh("touch -d '2020-01-0\(i + 1)' \(ShellQuote.quote(layout.bundle(sha) + "/.complete"))")
            shas.append(sha)
        }
        // Keep 2: the two newest (3, 2) stay; 0 is current, so it stays too; 1 goes.
        _ = await sh(layout.evict(keep: 2, current: shas[0]))
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: layout.bundles).filter { !$0.hasPrefix(".") })
        #expect(left == [shas[3], shas[2], shas[0]])
    }

    @Test func unitRunsInItsOwnGroupWithQuotedValuesAndCanBeKilled() async throws {
        _ = await sh(layout.prepareRun)
        let marker = root + "/marker"
        let weird = "a b'c\"$(touch \(marker))`touch \(marker)`;\nnext"
        let command = Command(executable: "/bin/sh", arguments: ["-c", "printf '%s' \"$1\"; printf '|%s' \"$V\"; sleep 300", "sh", weird],
                              environment: ["V": "x y $HOME"])
        let line = layout.unitCommand(command, unit: 7, workingDirectory: layout.runDir)
        let killer = Task {
            while !FileManager.default.fileExists(atPath: layout.pidFile(7)) { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(200))
            let pid = try String(contentsOfFile: layout.pidFile(7), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            _ = await sh(layout.killUnit(7))
            return pid
        }
        let ended = try await runAsSessionLeader(line)
        let pid = try await killer.value
        #expect(ended.stdout == weird + "|x y $HOME", "every value arrives byte for byte; nothing was expanded")
        #expect(!FileManager.default.fileExists(atPath: marker), "no command substitution ran")
        #expect(await processIsGone(pid_t(pid) ?? 0), "the whole group is gone")
        #expect(!FileManager.default.fileExists(atPath: layout.pidFile(7)))
    }

    @Test func cleanupKillsWhatIsLeftAndRemovesTheRunFolder() async throws {
        _ = await sh(layout.prepareRun)
        let line = layout.unitCommand(Command(executable: "/bin/sleep", arguments: ["300"]), unit: 1, workingDirectory: layout.runDir)
        let running = Task { try await runAsSessionLeader(line) }
        while !FileManager.default.fileExists(atPath: layout.pidFile(1)) { try await Task.sleep(for: .milliseconds(20)) }
        let pid = try String(contentsOfFile: layout.pidFile(1), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let (e, _, _) = await sh(layout.cleanup)
        #expect(e == .exited(0))
        _ = try await running.value
        #expect(!FileManager.default.fileExists(atPath: layout.runDir))
        #expect(await processIsGone(pid_t(pid) ?? 0))
    }
}
