import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// Bad input: a clear message, a documented exit code, never a crash.
@Suite(.serialized, .timeLimit(.minutes(10))) struct BadInputTests {
    @Test func anUnwritableReportFolderIsRefusedBeforeAnythingRuns() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        try "not a folder".write(toFile: dir.file("file"), atomically: true, encoding: .utf8)
        let (code, out, err) = try await runCLI(["run", "--bundle", bundle, "--report-dir", dir.file("file/reports"),
                                                 "--history", dir.file("h.sqlite")])
        #expect(code == 2)
        #expect(err.contains("cannot write reports to"))
        #expect(!out.contains("started on"), "no test ran")
    }

    @Test func aBuildFailureShowsTheCompilersErrorLines() async throws {
        let dir = try TempDir()
        let pkg = dir.file("Broken")
        try FileManager.default.createDirectory(atPath: pkg + "/Tests/BrokenTests", withIntermediateDirectories: true)
        try """
        // swift-tools-version: 6.0
        import PackageDescription
        let package = Package(name: "Broken", targets: [.testTarget(name: "BrokenTests")])
        """.write(toFile: pkg + "/Package.swift", atomically: true, encoding: .utf8)
        try """
        import XCTest
        final class BrokenTests: XCTestCase {
            func testA() { let x: Int = "not a number"; XCTAssertEqual(x, 1) }
        }
        """.write(toFile: pkg + "/Tests/BrokenTests/BrokenTests.swift", atomically: true, encoding: .utf8)
        let (code, _, err) = try await runCLI(["run", "--package", pkg, "--history", dir.file("h.sqlite"),
                                               "--report-dir", dir.file("r")])
        #expect(code == 2)
        #expect(err.contains("the build failed"))
        #expect(err.contains("BrokenTests.swift:3"), "the compiler's own error line, with its place: \(err)")
        #expect(err.contains("cannot convert value of type 'String'"))
    }

    @Test func anAgentThatCannotWriteItsWorkdirIsSkippedWithTheReason() async throws {
        let dir = try TempDir()
        var s = try await IntegrationFleet.badInput.settings()
        s.agents = [s.agents[0]]
        s.agents[0].workdir = "/root/fanout-not-allowed"
        s.bundlePath = try await DemoSuite.shared.bundle()
        s.filters = ["^DemoKitTests\\.GCDTests$"]
        s.historyPath = dir.file("h.sqlite")
        s.reportDirectory = dir.file("r")
        let outcome = try await Coordinator(settings: s).run()
        #expect(outcome.exitCode == .infrastructure)
        let warning = outcome.report.warnings.first { $0.contains("agent-1 is not usable") }
        #expect(warning?.contains("Permission denied") == true, "the agent's own error is shown: \(outcome.report.warnings)")
    }

    @Test func aKeysPassphraseNeverAppearsInOutputOrReports() async throws {
        let dir = try TempDir()
        let passphrase = "correct horse \(UUID().uuidString)"
        let key = dir.file("id_protected")
        let gen = await LocalTransport(slots: 1).capture(Command(
            executable: "/usr/bin/ssh-keygen", arguments: ["-q", "-t", "ed25519", "-N", passphrase, "-f", key, "-C", "fanout-test"]))
        #expect(gen.0 == .exited(0))
        var s = try await IntegrationFleet.badInput.settings()
        let authorized = IntegrationFleet.badInput.directory + "/agents/agent-1/authorized_keys"
        let original = try String(contentsOfFile: authorized, encoding: .utf8)
        defer { try? original.write(toFile: authorized, atomically: true, encoding: .utf8) }
        try (original + (try String(contentsOfFile: key + ".pub", encoding: .utf8))).write(toFile: authorized, atomically: true, encoding: .utf8)

        var config = try String(contentsOfFile: IntegrationFleet.badInput.directory + "/fleet.yml", encoding: .utf8)
        config = config.replacingOccurrences(of: "identity: \(s.agents[0].identity ?? "")",
                                             with: "identity: \(key)\n    passphrase_env: FANOUT_TEST_PASSPHRASE")
        try config.write(toFile: dir.file("fanout.yml"), atomically: true, encoding: .utf8)
        s.agents = [s.agents[0]]
        let bundle = try await DemoSuite.shared.bundle()
        let cli = try fanoutExecutable()
        let command = ShellQuote.join([cli, "run", "--config", dir.file("fanout.yml"), "--bundle", bundle, "--filter",
                                       "^DemoKitTests\\.GCDTests$", "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite")])
        let line = "FANOUT_TEST_PASSPHRASE=\(ShellQuote.quote(passphrase)) \(command)"
        let (e, out, err) = await LocalTransport(slots: 1).capture(Command(executable: "/bin/sh", arguments: ["-c", line]), timeout: 300)
        let all = String(decoding: out + err, as: UTF8.self)
        #expect(e == .exited(0), "\(all)")
        #expect(all.contains("agent-1 ready"), "it logged in with the protected key")
        for file in ["r/report.json", "r/junit.xml"] {
            let text = try String(contentsOfFile: dir.file(file), encoding: .utf8)
            #expect(!text.contains(passphrase), "\(file) holds the passphrase")
        }
        #expect(!all.contains(passphrase), "the console holds the passphrase")

        // A wrong passphrase: a clear error that does not echo what was given.
        let wrong = "FANOUT_TEST_PASSPHRASE=wrong-\(UUID().uuidString) \(command)"
        let (_, wout, werr) = await LocalTransport(slots: 1).capture(Command(executable: "/bin/sh", arguments: ["-c", wrong]), timeout: 300)
        let wall = String(decoding: wout + werr, as: UTF8.self)
        #expect(wall.contains("agent-1 is not usable"))
        #expect(!wall.contains("wrong-"), "the wrong passphrase is not echoed: \(wall)")
    }
}
