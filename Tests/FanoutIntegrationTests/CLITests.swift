import FanoutCore
import Foundation
import Testing

/// The `fanout` executable: bad input gets a clear message and exit code 2, never a crash.
@Suite(.timeLimit(.minutes(10))) struct CLITests {
    @Test(arguments: [
        (["run", "--slots", "0", "--bundle", "/bin/true"], "--slots"),
        (["run", "--filter", "(unclosed", "--bundle", "/bin/true"], "not a valid regular expression"),
        (["run", "--package", "/nonexistent/package"], "no Swift package"),
        (["run", "--bundle", "/nonexistent/Thing.xctest"], "no test product"),
        (["run", "--no-such-flag"], "no-such-flag"),
        (["run", "-c", "fast", "--bundle", "/bin/true"], "unknown build configuration"),
        (["run", "--config", "/nonexistent/fanout.yml"], "cannot read the config file"),
    ])
    func badInputExitsTwoWithAClearMessage(args: [String], expected: String) async throws {
        let (code, _, err) = try await runCLI(args)
        #expect(code == 2, "\(args): exit \(code), stderr: \(err)")
        #expect(err.contains(expected), "\(args): \(err)")
    }

    @Test func filterMatchingNothingIsAUsageError() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let (code, _, err) = try await runCLI(["run", "--bundle", bundle, "--filter", "^NothingLikeThis$",
                                               "--history", dir.file("h.sqlite")])
        #expect(code == 2)
        #expect(err.contains("no test class matches"))
    }

    @Test func configErrorsNameFileLineAndKey() async throws {
        let dir = try TempDir()
        let config = dir.file("fanout.yml")
        try "slots: 2\nbuild:\n  configuration: debug\n  optimise: yes\n".write(toFile: config, atomically: true, encoding: .utf8)
        let (code, _, err) = try await runCLI(["plan", "--config", config])
        #expect(code == 2)
        #expect(err.contains("fanout.yml:4"), "\(err)")
        #expect(err.contains("build.optimise"), "\(err)")
    }

    @Test func planShowsEstimatesLowerBoundAndPrediction() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let (code, out, _) = try await runCLI(["plan", "--bundle", bundle, "--slots", "4", "--history", dir.file("h.sqlite")])
        #expect(code == 0)
        #expect(out.contains("LB (s)") && out.contains("predicted (s)"))
        #expect(out.contains("no history: test count"))
        #expect(out.contains("IntegrationTests.SharedNameTests") && out.contains("DemoKitTests.SharedNameTests"))
        #expect(!out.contains("Hooks"), "no hooks, no table")

        let config = dir.file("hooks.yml")
        try """
            hooks:
              timeout: 90
              slot: { set_up: 'createdb "app_test_$FANOUT_WORKER"', tear_down: { command: 'dropdb "app_test_$FANOUT_WORKER"', timeout: 20 } }
              run: { tear_down: ./clean.sh }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let (hooked, table, err) = try await runCLI(["plan", "--bundle", bundle, "--slots", "4", "--config", config,
                                                     "--history", dir.file("h.sqlite")])
        #expect(hooked == 0, "\(err)")
        let lines = table.components(separatedBy: "\nHooks\n").last?.split(separator: "\n").map(String.init) ?? []
        #expect(lines.count == 5, "a header, a rule and the three hooks in the order a run meets them: \(table)")
        #expect(lines.dropFirst(2).first?.contains("slot set-up") == true && lines.dropFirst(2).first?.contains("4×: each slot (FANOUT_WORKER 0–3)") == true)
        #expect(lines.dropFirst(2).first?.contains(#"90.0 s    createdb "app_test_$FANOUT_WORKER""#) == true, "\(lines)")
        #expect(lines.dropFirst(3).first?.contains("after the slot's last unit") == true && lines.dropFirst(3).first?.contains("20.0 s") == true, "\(lines)")
        #expect(lines.last?.contains("run teardown") == true && lines.last?.contains("at the very end") == true, "\(lines)")
    }

    @Test func runWritesReportsAndPrintsThePlainSummary() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let (code, out, _) = try await runCLI(["run", "--bundle", bundle, "--filter", "^DemoKitTests\\.(GCD|Prime)Tests$",
                                               "--history", dir.file("h.sqlite"), "--report-dir", dir.file("r")])
        #expect(code == 0)
        #expect(out.contains("unit 1 started"), "one plain line per event when stdout is not a terminal")
        #expect(out.contains("7 passed, 0 failed"))
        #expect(FileManager.default.fileExists(atPath: dir.file("r/report.json")))
        #expect(FileManager.default.fileExists(atPath: dir.file("r/junit.xml")))
        let (hcode, hout, _) = try await runCLI(["history", "show", "--history", dir.file("h.sqlite")])
        #expect(hcode == 0)
        #expect(hout.contains("DemoKitTests.GCDTests"))
    }
}
