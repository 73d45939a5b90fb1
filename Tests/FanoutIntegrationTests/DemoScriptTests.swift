import FanoutAgents
import FanoutCore
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// README's first command, run the way a new user runs it: `scripts/demo.sh` in a fresh tree (the files git knows,
/// no build folders at all), in fleet mode (4 real sshd agents), on both destinations. Only the Fanout executable is
/// reused from this build instead of built again (FANOUT_DEMO_FANOUT); CI's own clean clone builds it from scratch.
@Suite(.serialized, .timeLimit(.minutes(10))) struct DemoScriptTests {
    @Test func theQuickstartDemoRunsOnAFreshTree() async throws {
        let dir = try TempDir()
        let tree = dir.file("fanout")
        let fleet = "/tmp/fanout-integration-fleet-demo-script"
        let shell = LocalTransport(slots: 1)
        // A fresh tree: tracked files and new files that are not ignored, as a clone of this work tree would have.
        let copy = "mkdir -p \(ShellQuote.quote(tree)) && cd \(ShellQuote.quote(repositoryRoot.path)) && "
            + "git ls-files -z --cached --others --exclude-standard | "
            + "tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C \(ShellQuote.quote(tree))"
        let (copied, _, copyErr) = await shell.capture(Command(executable: "/bin/sh", arguments: ["-c", copy]), timeout: 120)
        #expect(copied == .exited(0), "copying the tree: \(String(decoding: copyErr, as: UTF8.self))")
        #expect(FileManager.default.fileExists(atPath: tree + "/scripts/demo.sh"))
        #expect(!FileManager.default.fileExists(atPath: tree + "/.build"))
        #expect(!FileManager.default.fileExists(atPath: tree + "/Tests/Fixtures/DemoSuite/.build"),
                "the demo suite has never been built in a fresh tree")

        let report = dir.file("report")
        let env = ["FANOUT_DEMO_FANOUT": try fanoutExecutable(), "FANOUT_DEMO_FLEET_DIR": fleet, "FANOUT_DEMO_PORT": "2627"]
        let (ending, out, err) = await shell.capture(
            Command(executable: "/bin/bash", arguments: [tree + "/scripts/demo.sh", "--report-dir", report],
                    environment: env), timeout: 540)
        let output = String(decoding: out, as: UTF8.self) + String(decoding: err, as: UTF8.self)
        #expect(ending == .exited(0), "demo.sh on a fresh tree: \(output.suffix(3000))")
        #expect(output.contains("fanout exited 0"))

        let asRoot = getuid() == 0
        #expect(!asRoot || output.contains("starting 4 sshd agents"), "fleet mode as root (the fleet needs root)")
        let data = try Data(contentsOf: URL(fileURLWithPath: report + "/report.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let results = try #require(json["results"] as? [[String: Any]])
        let destinations = try #require(json["destinations"] as? [String])
        let agents = try #require(json["agents"] as? [[String: Any]])
        if asRoot {
            #expect(destinations.sorted() == ["debug", "release"])
            #expect(agents.count == 4 && agents.allSatisfy { $0["transport"] as? String == "ssh" })
        }
        // Every test of the demo suite on every destination, each once, none failed.
        let perDestination = Dictionary(grouping: results, by: { $0["destination"] as? String ?? "" }).mapValues(\.count)
        #expect(results.count >= 208 * destinations.count, "\(perDestination)")
        #expect(perDestination.values.allSatisfy { $0 == results.count / max(1, destinations.count) })
        let outcomes = Set(results.compactMap { $0["outcome"] as? String })
        #expect(outcomes.isSubset(of: ["passed", "skipped"]), "\(outcomes)")

        // The script stopped its fleet: no sshd of that fleet is left.
        let (_, ps, _) = await shell.capture(Command(executable: "/bin/sh", arguments: ["-c", "ps -eo args= | grep -F -- \(ShellQuote.quote(fleet)) | grep -v grep || true"]), timeout: 30)
        #expect(String(decoding: ps, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty,
                "fleet processes left: \(String(decoding: ps, as: UTF8.self))")
    }

    /// Without root the demo needs none: it says first that it runs on local slots (no fleet), and runs both
    /// destinations there. Run as `nobody` in a fresh tree that user owns, with a HOME of its own.
    @Test(.enabled(if: getuid() == 0, "needs root to become another user (nobody)"))
    func withoutRootTheDemoSaysSoAndRunsBothDestinationsOnLocalSlots() async throws {
        let dir = try TempDir()
        let tree = dir.file("fanout"), home = dir.file("home"), report = dir.file("home/report")
        let shell = LocalTransport(slots: 1)
        let copy = "mkdir -p \(ShellQuote.quote(tree)) \(ShellQuote.quote(home)) && cd \(ShellQuote.quote(repositoryRoot.path)) && "
            + "git ls-files -z --cached --others --exclude-standard | "
            + "tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C \(ShellQuote.quote(tree)) && "
            + "chmod 0755 \(ShellQuote.quote(dir.path)) && chown -R 65534:65534 \(ShellQuote.quote(tree)) \(ShellQuote.quote(home))"
        let (copied, _, copyErr) = await shell.capture(Command(executable: "/bin/sh", arguments: ["-c", copy]), timeout: 120)
        try #require(copied == .exited(0), "copying the tree: \(String(decoding: copyErr, as: UTF8.self))")
        let demo = "cd \(ShellQuote.quote(tree)) && scripts/demo.sh --report-dir \(ShellQuote.quote(report))"
        let (ending, out, err) = await shell.capture(Command(executable: "/usr/bin/setpriv", arguments: [
            "--reuid=65534", "--regid=65534", "--clear-groups", "env", "-i", "HOME=\(home)",
            "PATH=/opt/swift/usr/bin:/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
            "FANOUT_DEMO_FANOUT=\(try fanoutExecutable())", "/bin/bash", "-c", demo]), timeout: 540)
        let output = String(decoding: out, as: UTF8.self) + String(decoding: err, as: UTF8.self)
        #expect(ending == .exited(0), "demo.sh as nobody: \(output.suffix(3000))")
        #expect(output.contains("demo: not root, so no SSH fleet"), "it says so before it runs: \(output.prefix(1500))")
        #expect(!output.contains("setup: installing"), "nothing installed without root")
        let data = try Data(contentsOf: URL(fileURLWithPath: report + "/report.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let destinations = try #require(json["destinations"] as? [String])
        let agents = try #require(json["agents"] as? [[String: Any]])
        let results = try #require(json["results"] as? [[String: Any]])
        #expect(destinations.sorted() == ["debug", "release"], "both destinations on local slots")
        #expect(agents.allSatisfy { $0["transport"] as? String == "local" })
        #expect(results.count >= 208 * 2)
        let outcomes = Set(results.compactMap { $0["outcome"] as? String })
        #expect(outcomes.isSubset(of: ["passed", "skipped"]), "\(outcomes)")
    }

    /// scripts/demo-database.sh: a private PostgreSQL server, the fixture on one shared database (it fails) and with a
    /// database per worker (it passes), none of those left, the server stopped.
    @Test func theDatabaseDemoShowsOneSharedDatabaseFailAndOnePerWorkerPass() async throws {
        let dir = try TempDir()
        let work = dir.file("demo")
        let env = ["FANOUT_DEMO_FANOUT": try fanoutExecutable(), "FANOUT_DEMO_DATABASE_DIR": work]
        let (ending, out, err) = await LocalTransport(slots: 1).capture(
            Command(executable: "/bin/bash", arguments: [repositoryRoot.path + "/scripts/demo-database.sh"], environment: env),
            timeout: 540)
        let output = String(decoding: out, as: UTF8.self) + String(decoding: err, as: UTF8.self)
        #expect(ending == .exited(0), "\(output.suffix(3000))")
        #expect(output.contains("(exit 1: the tests of different slots emptied and filled one table at once)"), "\(output.suffix(3000))")
        #expect(output.contains("PASSED · all 30 tests that ran passed · exit 0"), "\(output.suffix(3000))")
        let listed = output.components(separatedBy: "dropped by its slot's teardown):\n").last ?? ""
        #expect(listed.hasPrefix("postgres\nqueue\nshared\n"), "no app_test_ database left: \(listed)")
        #expect(!FileManager.default.fileExists(atPath: work + "/postgres"), "the server was stopped and its folder removed")
    }

}
