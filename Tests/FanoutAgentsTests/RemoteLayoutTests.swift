import FanoutAgents
import FanoutCore
import Foundation
import Testing

/// The shell lines an agent runs, executed here by a real /bin/sh (dash, the usual remote shell) against a real
/// folder. (That the unit's wrapper hands the test binary's exit signal back through sshd is pinned by the SSH
/// transport tests.) What units consume: RemoteLayoutUsageTests.
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
        // Not writable by group or others whatever the umask: the agent-side checks refuse such parents.
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        layout = try RemoteLayout(workdir: folder.path + "/work dir", runID: "run-1")
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

    /// Four installed bundles, the first last used on 2020-01-01, the next on the 2nd, and so on.
    func installFourBundlesUsedOnSuccessiveDays() async throws -> [String] {
        var shas: [String] = []
        for i in 0..<4 {
            let (tar, sha) = try await makeArchive(["f": "content \(i)"])
            _ = await sh(layout.install(sha: sha, archive: tar))
            _ = await sh("touch -d '2020-01-0\(i + 1)' \(ShellQuote.quote(layout.bundle(sha) + "/.complete"))")
            shas.append(sha)
        }
        return shas
    }

    @Test func evictionKeepsTheNewestAndTheCurrent() async throws {
        _ = await sh(layout.prepareRun)
        let shas = try await installFourBundlesUsedOnSuccessiveDays()
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

    /// Runs a unit line in a shell and returns how it ended: (status or signal, whether it was a signal).
    func ending(of line: String) async throws -> (status: Int32, signaled: Bool) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", line]
        try p.run()
        await onOwnThread { p.waitUntilExit() }
        return (p.terminationStatus, p.terminationReason == .uncaughtSignal)
    }

    @Test func theAgentEnforcesAUnitsTimeLimitByItselfAndKeepsExitStatusesAndSignals() async throws {
        _ = await sh(layout.prepareRun)
        // Nobody kills this one from outside: the agent's own limit ends it.
        let hang = layout.unitCommand(Command(executable: "/bin/sleep", arguments: ["300"]), unit: 1,
                                      workingDirectory: layout.runDir, limit: 1)
        let ended = try await ending(of: hang)
        #expect(ended.signaled && ended.status == SIGKILL, "\(ended)")
        // A test's own exit status and signal come through the limit unchanged.
        let failing = layout.unitCommand(Command(executable: "/bin/sh", arguments: ["-c", "exit 3"]), unit: 2,
                                         workingDirectory: layout.runDir, limit: 60)
        let failed = try await ending(of: failing)
        #expect(!failed.signaled && failed.status == 3, "\(failed)")
        let crashing = layout.unitCommand(Command(executable: "/bin/sh", arguments: ["-c", "kill -ILL $$"]), unit: 3,
                                          workingDirectory: layout.runDir, limit: 60)
        let crashed = try await ending(of: crashing)
        #expect(crashed.signaled && crashed.status == SIGILL, "\(crashed)")
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

    /// What a run needs before its product, in one command (`readyRun`): on a trusted workdir it stops what this run
    /// left running (a re-admission), reaps another run whose lease lapsed and says so, and takes the lease with its
    /// watchdog; on a workdir others can write it does none of that.
    @Test func aRunGetsReadyInOneCommandAndDoesNothingOnAWorkdirOthersCanWrite() async throws {
        _ = await sh(layout.prepareRun)
        let line = layout.unitCommand(Command(executable: "/bin/sleep", arguments: ["300"]), unit: 1, workingDirectory: layout.runDir)
        let running = Task { try await runAsSessionLeader(line) }
        while !FileManager.default.fileExists(atPath: layout.pidFile(1)) { try await Task.sleep(for: .milliseconds(20)) }
        let pid = pid_t(try String(contentsOfFile: layout.pidFile(1), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let lapsed = try layout(run: "run-0")
        let (made, _, madeErr) = await sh(lapsed.prepareRun + "\ntouch -d '2 minutes ago' \(ShellQuote.quote(lapsed.lease))")
        #expect(made == .exited(0), "\(madeErr)")

        _ = await sh("chmod 0777 \(ShellQuote.quote(layout.workdir))")
        let (e1, out1, err1) = await sh(layout.readyRun(leaseSeconds: 60))
        #expect(e1 == .exited(RemoteLayout.untrustedStatus) && out1.isEmpty, "\(err1)")
        #expect(FileManager.default.fileExists(atPath: lapsed.runDir), "nothing reaped")
        #expect(!FileManager.default.fileExists(atPath: layout.lease), "no lease taken")
        #expect(kill(pid, 0) == 0, "nothing killed")

        _ = await sh("chmod 0700 \(ShellQuote.quote(layout.workdir))")
        let (e2, out2, err2) = await sh(layout.readyRun(leaseSeconds: 60))
        #expect(e2 == .exited(0) && out2 == "run-0 0\n", "\(out2) \(err2)")
        #expect(!FileManager.default.fileExists(atPath: lapsed.runDir))
        _ = try await running.value
        #expect(await processIsGone(pid))
        #expect(FileManager.default.fileExists(atPath: layout.lease) && FileManager.default.fileExists(atPath: layout.watchdogPID))
        let watchdog = pid_t(try String(contentsOfFile: layout.watchdogPID, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let (e3, _, _) = await sh(layout.cleanup)
        #expect(e3 == .exited(0) && !FileManager.default.fileExists(atPath: layout.runDir))
        #expect(await processIsGone(watchdog))
    }

    /// What a run keeps for its coordinator's death (a simulator's `simctl delete`) is run when the run is reaped:
    /// here by another run finding its lease lapsed. Values with quotes and spaces reach the shell as they were.
    @Test func whatARunKeepsForItsCoordinatorsDeathRunsWhenTheRunIsReaped() async throws {
        _ = await sh(layout.prepareRun)
        let marker = root + "/it's deleted"
        for device in ["iPhone 16", "O'Brien's iPad"] {
            let delete = Command(executable: "/bin/sh", arguments: ["-c", "printf '%s\\n' \"$1\" >> \"$2\"", "sh", device, marker])
            let (e, _, err) = await sh(layout.runIfCoordinatorGone(delete))
            #expect(e == .exited(0), "\(err)")
        }
        #expect(!FileManager.default.fileExists(atPath: marker), "kept, not run")
        // The run's lease lapsed two minutes ago; another run on the agent reaps it.
        let (touched, _, _) = await sh("touch -d '2 minutes ago' \(ShellQuote.quote(layout.lease))")
        #expect(touched == .exited(0))
        let (e, out, _) = await sh(try layout(run: "run-2").reapStale(seconds: 60))
        #expect(e == .exited(0) && out.contains("run-1 0"), "\(out)")
        #expect(try String(contentsOfFile: marker, encoding: .utf8) == "iPhone 16\nO'Brien's iPad\n")
        #expect(!FileManager.default.fileExists(atPath: layout.runDir))
    }

    // MARK: - Runs that share an agent

    /// Another user on the agent: the checks must refuse what it owns (this test runs as root, so it can chown).
    static let otherUID = 65534

    func layout(run: String) throws -> RemoteLayout { try RemoteLayout(workdir: layout.workdir, runID: run) }

    /// The bundle's folder as installed: its files, and nothing nested or left half-way.
    func installedFiles(_ sha: String) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: layout.bundle(sha)))
    }

    @Test func twoRunsInstallingTheSameBundleAtOnceNeitherNestNorDelete() async throws {
        let other = try layout(run: "run-2")
        _ = await sh(layout.prepareRun)
        _ = await sh(other.prepareRun)
        let (tar, sha) = try await makeArchive(["Tests.xctest": "binary", "data.txt": "x"])
        for round in 0..<12 {
            // Each run uploads its own copy of the archive, then both install at the same moment.
            let a = layout.incoming + "/\(sha).run-1.tar", b = other.incoming + "/\(sha).run-2.tar"
            try? FileManager.default.removeItem(atPath: a)
            try? FileManager.default.removeItem(atPath: b)
            try FileManager.default.copyItem(atPath: tar, toPath: a)
            try FileManager.default.copyItem(atPath: tar, toPath: b)
            try? FileManager.default.removeItem(atPath: layout.bundle(sha))
            if round % 3 == 1 {
                // A leftover without .complete (an eviction cut short) must not stop either of them.
                try FileManager.default.createDirectory(atPath: layout.bundle(sha) + "/junk", withIntermediateDirectories: true)
            } else if round % 3 == 2 {
                // Already installed by a third run: both keep it.
                let c = root + "/third.tar"
                try? FileManager.default.removeItem(atPath: c)
                try FileManager.default.copyItem(atPath: tar, toPath: c)
                _ = await sh(layout.install(sha: sha, archive: c))
            }
            async let first = sh(layout.install(sha: sha, archive: a))
            async let second = sh(other.install(sha: sha, archive: b))
            let (e1, _, err1) = await first, (e2, _, err2) = await second
            #expect(e1 == .exited(0) && e2 == .exited(0), "round \(round): \(err1) \(err2)")
            #expect(try installedFiles(sha) == [".complete", "Tests.xctest", "data.txt"],
                    "round \(round): one whole bundle, nothing nested in it")
            let (_, ready, readyErr) = await sh(layout.bundleReady(sha))
            #expect(ready == "yes\n", "\(readyErr)")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: layout.incoming)
            #expect(leftovers.isEmpty, "round \(round): nothing left in .incoming: \(leftovers)")
        }
    }

    @Test func aBundleFromAnotherUserIsRefusedWithTheReason() async throws {
        _ = await sh(layout.prepareRun)
        let sha = String(repeating: "ab", count: 32)
        // Planted: a complete-looking bundle that the agent user did not write.
        let planted = layout.bundle(sha)
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        try "#!/bin/sh\necho pwned\n".write(toFile: planted + "/Tests.xctest", atomically: true, encoding: .utf8)
        #expect(FileManager.default.createFile(atPath: planted + "/.complete", contents: nil))
        _ = await sh("chown -R \(Self.otherUID) \(ShellQuote.quote(planted))")
        let (e, out, err) = await sh(layout.bundleReady(sha))
        #expect(e == .exited(RemoteLayout.untrustedStatus))
        #expect(!out.contains("yes"))
        #expect(err.contains(planted) && err.contains("belongs to uid \(Self.otherUID), not to the agent user"), "\(err)")
        #expect(err.contains("chown") || err.contains("remove"), "says how to fix it: \(err)")

        // The folder is the agent user's, but a file in it belongs to someone else: refused too.
        _ = await sh("chown \(getuid()) \(ShellQuote.quote(planted))")
        let (e2, _, err2) = await sh(layout.bundleReady(sha))
        #expect(e2 == .exited(RemoteLayout.untrustedStatus))
        #expect(err2.contains("belongs to another user or is writable by group or others") && err2.contains("rm -rf"), "\(err2)")

        // All the agent user's, but a file anyone may rewrite: refused.
        _ = await sh("chown -R \(getuid()) \(ShellQuote.quote(planted)) && chmod 0666 \(ShellQuote.quote(planted + "/Tests.xctest"))")
        let (e3, _, err3) = await sh(layout.bundleReady(sha))
        #expect(e3 == .exited(RemoteLayout.untrustedStatus), "\(err3)")

        // Fixed as the message says: accepted.
        _ = await sh("chmod 0700 \(ShellQuote.quote(planted + "/Tests.xctest"))")
        let (e4, out4, err4) = await sh(layout.bundleReady(sha))
        #expect(e4 == .exited(0) && out4 == "yes\n", "\(err4)")
    }

    @Test func aWorkdirOthersCanWriteOrOwnIsRefusedBeforeAnythingRuns() async throws {
        _ = await sh("mkdir -p \(ShellQuote.quote(layout.workdir))")
        let (c0, _, cerr0) = await sh(layout.trustedCache)
        #expect(c0 == .exited(0), "a workdir without a cache yet passes the check: \(cerr0)")
        let (e0, _, err0) = await sh(layout.prepareRun)
        #expect(e0 == .exited(0), "a private workdir passes: \(err0)")
        let marker = root + "/killed-something"
        // A pid file planted in a workdir others could write must never be read, let alone killed.
        _ = await sh("chmod 0777 \(ShellQuote.quote(layout.workdir))")
        let (e1, _, err1) = await sh(layout.prepareRun + " && touch \(ShellQuote.quote(marker))")
        #expect(e1 == .exited(RemoteLayout.untrustedStatus))
        #expect(err1.contains(layout.workdir) && err1.contains("writable by group or others (mode 777)"), "\(err1)")
        #expect(err1.contains("chmod go-w"), "says how to fix it: \(err1)")
        #expect(!FileManager.default.fileExists(atPath: marker))
        // `fanout agents check` makes the same checks on what exists, without a run.
        let (c1, _, cerr1) = await sh(layout.trustedCache)
        #expect(c1 == .exited(RemoteLayout.untrustedStatus) && cerr1.contains("(mode 777)"), "\(cerr1)")

        _ = await sh("chmod 0700 \(ShellQuote.quote(layout.workdir)) && chown \(Self.otherUID) \(ShellQuote.quote(layout.bundles))")
        let (e2, _, err2) = await sh(layout.prepareRun)
        #expect(e2 == .exited(RemoteLayout.untrustedStatus))
        #expect(err2.contains(layout.bundles) && err2.contains("belongs to uid \(Self.otherUID)"), "\(err2)")

        // A parent that anyone may write (and is not sticky like /tmp) lets others swap the whole workdir.
        _ = await sh("chown \(getuid()) \(ShellQuote.quote(layout.bundles)) && chmod 0777 \(ShellQuote.quote(root))")
        let (e3, _, err3) = await sh(layout.prepareRun)
        #expect(e3 == .exited(RemoteLayout.untrustedStatus))
        #expect(err3.contains(root + " (above the work directory)") && err3.contains("not sticky"), "\(err3)")
        _ = await sh("chmod 1777 \(ShellQuote.quote(root))")
        let (e4, _, err4) = await sh(layout.prepareRun)
        #expect(e4 == .exited(0), "a sticky parent, like /tmp, is fine: \(err4)")
    }

    @Test func evictionSparesBundlesThatALiveRunUses() async throws {
        let other = try layout(run: "run-2")
        _ = await sh(layout.prepareRun)
        _ = await sh(other.prepareRun)
        let shas = try await installFourBundlesUsedOnSuccessiveDays()
        // run-2 is using the oldest bundle: it just marked it.
        _ = await sh(other.bundleReady(shas[0]))
        _ = await sh("touch -d '2020-01-01' \(ShellQuote.quote(layout.bundle(shas[0]) + "/.complete"))")
        func left() throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: layout.bundles).filter { !$0.hasPrefix(".") })
        }
        _ = await sh(layout.evict(keep: 1, current: shas[3]))
        #expect(try left() == [shas[3], shas[0]], "run-2's bundle stays; the unused old ones go")

        // run-2 went quiet long ago (a coordinator killed without cleaning up), but a unit it started still runs.
        let quiet = "touch -d '2020-01-01' \(ShellQuote.quote(other.usesMarker(shas[0]))) \(ShellQuote.quote(other.pids))"
        try String(getpgrp()).write(toFile: other.pidFile(1), atomically: true, encoding: .utf8)
        _ = await sh(quiet)
        _ = await sh(layout.evict(keep: 1, current: shas[3]))
        #expect(try left() == [shas[3], shas[0]], "a live process group of run-2 keeps its bundle")

        // Nothing of run-2 runs, but its coordinator renews its lease: it is alive and may start a unit any moment.
        try "999999999".write(toFile: other.pidFile(1), atomically: true, encoding: .utf8)
        _ = await sh(quiet)
        _ = await sh("touch \(ShellQuote.quote(other.lease))")
        _ = await sh(layout.evict(keep: 1, current: shas[3], leaseSeconds: 30))
        #expect(try left() == [shas[3], shas[0]], "a fresh lease keeps run-2's bundle")

        // Its lease lapsed (the coordinator died) and nothing of it is alive any more: its bundle may go.
        _ = await sh("touch -d '2020-01-01' \(ShellQuote.quote(other.lease))")
        _ = await sh(layout.evict(keep: 1, current: shas[3]))
        #expect(try left() == [shas[3]])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: layout.incoming)
        #expect(leftovers.isEmpty, "evicted bundles are removed, not parked: \(leftovers)")
    }

    @Test func anExecutableWhosePathHoldsAnEqualsSignRunsWithItsEnvironment() async throws {
        _ = await sh(layout.prepareRun)
        let dir = root + "/tools/A=B"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let tool = dir + "/X=1"
        try "#!/bin/sh\nprintf '%s|%s' \"$V\" \"$1\"\n".write(toFile: tool, atomically: true, encoding: .utf8)
        _ = await sh("chmod 0755 \(ShellQuote.quote(tool))")
        for command in [Command(executable: tool, arguments: ["arg=1"], environment: ["V": "v w"]),
                        Command(executable: tool, arguments: ["arg=1"])] {
            let line = layout.unitCommand(command, unit: 3, workingDirectory: layout.runDir)
            let ended = try await runAsSessionLeader(line)
            #expect(ended.status == 0, "\(line)")
            #expect(ended.stdout == (command.environment.isEmpty ? "" : "v w") + "|arg=1", "\(line)")
        }
    }

    // MARK: - A macOS agent's userland, emulated here

    /// Where `macLike` logs each BSD spelling it served, so a test can tell the fallbacks really ran.
    var bsdLog: String { root + "/bsd.log" }

    /// `script` as a macOS agent would run it: no `timeout` and no `sha256sum` on PATH (a folder of links to
    /// everything else in /usr/bin), BSD `stat` (no `-c`; `-f '%u %p'` prints the mode in octal with the file type
    /// bits, a line per file, `-f %m` the mtime; `--` ends the options), BSD `mv` (no `-T`), and `uname` saying Darwin (so that /proc goes unused). Shell
    /// functions stand in for the BSD tools.
    func macLike(_ script: String) throws -> String {
        let bin = root + "/mac-bin"
        if !FileManager.default.fileExists(atPath: bin) {
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            for name in try FileManager.default.contentsOfDirectory(atPath: "/usr/bin")
            where name != "timeout" && name != "sha256sum" {
                try FileManager.default.createSymbolicLink(atPath: bin + "/" + name, withDestinationPath: "/usr/bin/" + name)
            }
        }
        let log = ShellQuote.quote(bsdLog)
        return """
            PATH=\(ShellQuote.quote(bin)); export PATH
            stat() {
              case $1 in
                -c) echo "stat: illegal option -- c" >&2; return 1 ;;
                -f) echo "stat -f $2" >> \(log)
                    fmt=$2; shift 2; [ "$1" != -- ] || shift
                    case $fmt in
                      '%u %p') for f in "$@"; do command stat -c '%u %f' -- "$f" | { read -r u h && printf '%s %o\\n' "$u" "0x$h"; } || return 1; done ;;
                      %m) command stat -c %Y -- "$@" ;;
                      *) return 1 ;;
                    esac ;;
                *) command stat "$@" ;;
              esac
            }
            mv() { if [ "$1" = -T ]; then echo "mv: illegal option -- T" >&2; return 64; fi; command mv "$@"; }
            perl() { echo perl >> \(log); command perl "$@"; }
            shasum() { echo "shasum $*" >> \(log); command shasum "$@"; }
            uname() { echo "uname $*" >> \(log); echo Darwin; }

            """ + script
    }

    func bsdToolsUsed() -> String { (try? String(contentsOfFile: bsdLog, encoding: .utf8)) ?? "" }

    @Test func onAMacAgentTheTrustChecksReadBSDStat() async throws {
        let (e0, _, err0) = await sh(try macLike(layout.prepareRun))
        #expect(e0 == .exited(0), "a private workdir passes: \(err0)")
        #expect(bsdToolsUsed().contains("stat -f %u %p"), "the BSD stat was the one asked: \(bsdToolsUsed())")

        _ = await sh("chmod 0777 \(ShellQuote.quote(layout.workdir))")
        let (e1, _, err1) = await sh(try macLike(layout.prepareRun))
        #expect(e1 == .exited(RemoteLayout.untrustedStatus))
        #expect(err1.contains(layout.workdir) && err1.contains("writable by group or others (mode 777)"), "\(err1)")

        _ = await sh("chmod 0700 \(ShellQuote.quote(layout.workdir)) && chown \(Self.otherUID) \(ShellQuote.quote(layout.bundles))")
        let (e2, _, err2) = await sh(try macLike(layout.trustedCache))
        #expect(e2 == .exited(RemoteLayout.untrustedStatus) && err2.contains("belongs to uid \(Self.otherUID)"), "\(err2)")

        // The sticky bit sits beside the file type bits in BSD stat's %p: it must still be seen.
        _ = await sh("chown \(getuid()) \(ShellQuote.quote(layout.bundles)) && chmod 0777 \(ShellQuote.quote(root))")
        let (e3, _, err3) = await sh(try macLike(layout.prepareRun))
        #expect(e3 == .exited(RemoteLayout.untrustedStatus) && err3.contains("not sticky"), "\(err3)")
        _ = await sh("chmod 1777 \(ShellQuote.quote(root))")
        let (e4, _, err4) = await sh(try macLike(layout.prepareRun))
        #expect(e4 == .exited(0), "a sticky parent, like /tmp, is fine: \(err4)")
    }

    @Test func onAMacAgentBundlesInstallWithShasumAndPerlsRenameAndAreEvicted() async throws {
        _ = await sh(try macLike(layout.prepareRun))
        let (tar, sha) = try await makeArchive(["Tests.xctest": "binary", "data.txt": "x"])
        let (e, _, err) = await sh(try macLike(layout.install(sha: sha, archive: tar)))
        #expect(e == .exited(0), "\(err)")
        #expect(try installedFiles(sha) == [".complete", "Tests.xctest", "data.txt"])
        let (_, ready, readyErr) = await sh(try macLike(layout.bundleReady(sha)))
        #expect(ready == "yes\n", "\(readyErr)")
        #expect(bsdToolsUsed().contains("shasum -a 256") && bsdToolsUsed().contains("perl"), "\(bsdToolsUsed())")

        // A leftover without .complete is renamed aside and replaced; a tampered upload is refused.
        let (tar2, sha2) = try await makeArchive(["f": "other"])
        try FileManager.default.createDirectory(atPath: layout.bundle(sha2) + "/junk", withIntermediateDirectories: true)
        let (e2, _, err2) = await sh(try macLike(layout.install(sha: sha2, archive: tar2)))
        #expect(e2 == .exited(0), "\(err2)")
        #expect(try installedFiles(sha2) == [".complete", "f"])
        let (tar3, sha3) = try await makeArchive(["f": "third"])
        try "tampered".write(toFile: tar3, atomically: true, encoding: .utf8)
        let (e3, _, err3) = await sh(try macLike(layout.install(sha: sha3, archive: tar3)))
        #expect(e3 == .exited(65) && err3.contains("checksum mismatch"), "\(err3)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: layout.incoming)
        #expect(leftovers.isEmpty, "nothing half-finished stays in .incoming: \(leftovers)")

        // This run marked the bundle used (bundleReady): make it look long finished, so the bundle may go.
        _ = await sh("touch -d '2020-01-01' \(ShellQuote.quote(layout.bundle(sha) + "/.complete")) "
            + "\(ShellQuote.quote(layout.usesMarker(sha))) \(ShellQuote.quote(layout.pids))")
        _ = await sh(try macLike(layout.evict(keep: 1, current: sha2)))
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: layout.bundles).filter { !$0.hasPrefix(".") })
        #expect(left == [sha2])
        #expect(try FileManager.default.contentsOfDirectory(atPath: layout.incoming).isEmpty)
    }

    @Test func onAMacAgentWithoutTimeoutAWatcherEnforcesTheLimitAndKeepsExitStatusesAndSignals() async throws {
        _ = await sh(layout.prepareRun)
        let (noTimeout, _, _) = await sh(try macLike("command -v timeout"))
        #expect(noTimeout != .exited(0), "the emulated agent has no timeout command")

        let clock = ContinuousClock()
        let hang = layout.unitCommand(Command(executable: "/bin/sleep", arguments: ["300"]), unit: 1,
                                      workingDirectory: layout.runDir, limit: 1)
        let started = clock.now
        let ended = try await runAsSessionLeader(try macLike(hang))
        #expect(ended.signaled && ended.status == SIGKILL, "\(ended)")
        #expect(clock.now - started < .seconds(5), "killed about a second after its limit")

        // A test that ends by itself: its status comes through at once (the watcher holds no output open), and the
        // watcher leaves with it (the unit's process group empties).
        let failing = layout.unitCommand(Command(executable: "/bin/sh", arguments: ["-c", "echo out; exit 3"]), unit: 2,
                                         workingDirectory: layout.runDir, limit: 60)
        let failStart = clock.now
        let failed = try await runAsSessionLeader(try macLike(failing))
        #expect(!failed.signaled && failed.status == 3 && failed.stdout == "out\n", "\(failed)")
        #expect(clock.now - failStart < .seconds(5))
        let group = pid_t(try String(contentsOfFile: layout.pidFile(2), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let deadline = clock.now + .seconds(5)
        while kill(-group, 0) == 0, clock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(group > 0 && kill(-group, 0) != 0, "the watcher exited once the test was gone")

        let crashing = layout.unitCommand(Command(executable: "/bin/sh", arguments: ["-c", "kill -ILL $$"]), unit: 3,
                                          workingDirectory: layout.runDir, limit: 60)
        let crashed = try await runAsSessionLeader(try macLike(crashing))
        #expect(crashed.signaled && crashed.status == SIGILL, "\(crashed)")
    }
}
