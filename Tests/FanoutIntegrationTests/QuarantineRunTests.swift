import FanoutAgents
import FanoutCoordinator
import FanoutCore
import FanoutReports
import Foundation
import Testing

/// Quarantine on real runs of the demo suite: a muted failure does not fail the run and is shown in every format;
/// a skipped test never starts (the binary's own output and the test's own side effect say so); bad entries are
/// errors that name the file, line and key.
@Suite(.serialized, .timeLimit(.minutes(10))) struct QuarantineRunTests {
    static func entry(_ test: String, _ mode: QuarantineMode, destination: String? = nil) -> QuarantineEntry {
        QuarantineEntry(test: test, destination: destination, mode: mode, reason: "flaky backend", owner: "@ci",
                        added: QuarantineFile.day(), expires: QuarantineFile.day(plus: 7))
    }

    @Test func aRunWhoseOnlyFailureIsMutedExitsZeroAndEveryFormatShowsIt() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        var settings = demoSettings(bundle: bundle, dir: dir, filters: ["RetryableFetchTests"],
                                    env: ["DEMO_FLAKY_DIR": dir.path])
        settings.quarantinePath = dir.file("quarantine.yml")
        try QuarantineFile.write(Quarantine(entries: [Self.entry(
            "IntegrationTests.RetryableFetchTests/testFetchWithFlakyBackend", .mute)]), to: settings.quarantinePath)
        let outcome = try await Coordinator(settings: settings).run()
        let muted = try #require(outcome.report.result("IntegrationTests.RetryableFetchTests/testFetchWithFlakyBackend"))
        #expect(muted.outcome == .failed, "the framework's verdict stands")
        #expect(muted.quarantine?.mode == .mute)
        #expect(outcome.exitCode == .success, "its failure does not fail the run")
        #expect(outcome.report.counts.muted == 1 && outcome.report.counts.failures == 0)

        let json = try String(contentsOfFile: dir.file("report/report.json"), encoding: .utf8)
        #expect(json.contains("\"quarantine\"") && json.contains("\"mute\""))
        let junit = try String(contentsOfFile: dir.file("report/junit.xml"), encoding: .utf8)
        #expect(junit.contains("failures=\"0\"") && junit.contains("muted by quarantine, failed"))
        #expect(!junit.contains("<failure"), "no JUnit reader may count it as a failure")
        let markdown = try String(contentsOfFile: dir.file("report/summary.md"), encoding: .utf8)
        #expect(markdown.contains("### Quarantined: 1 muted (1 failed without failing the run)"))
        let html = try String(contentsOfFile: dir.file("report/report.html"), encoding: .utf8)
        #expect(html.contains("<section id=\"quarantined\">"))
        let console = ConsoleSummary(color: false).render(outcome.report)
        #expect(console.contains("Quarantined (1 muted") && console.contains("flaky backend · @ci"))
        // The history keeps its real verdict: its flake score goes on counting while it is muted. One failed run is
        // no evidence of a flake yet; a pass of the same build next (its marker is there now) makes one.
        var (code, out, _) = try await runCLI(["history", "flaky", "--history", settings.historyPath])
        #expect(code == 0)
        #expect(!out.contains("testFetchWithFlakyBackend"), "one failed run is no evidence of a flake yet: \(out)")
        let again = try await Coordinator(settings: settings).run()
        #expect(again.report.result("IntegrationTests.RetryableFetchTests/testFetchWithFlakyBackend")?.outcome == .passed)
        (code, out, _) = try await runCLI(["history", "flaky", "--history", settings.historyPath])
        #expect(code == 0 && out.contains("IntegrationTests.RetryableFetchTests/testFetchWithFlakyBackend"),
                "the muted failure counted: failed and passed on one build: \(out)")
    }

    @Test func aSkippedTestNeverStartsAndIsReportedSkippedByQuarantine() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        // testStoreIsHealthy, if it ever started, would write its PID into the straggler folder and stall 5 minutes.
        let straggler = dir.file("straggler")
        var settings = demoSettings(bundle: bundle, dir: dir, filters: ["HealthCheckTests", "MathSuite"],
                                    env: ["DEMO_STRAGGLER_DIR": straggler])
        settings.quarantinePath = dir.file("quarantine.yml")
        try QuarantineFile.write(Quarantine(entries: [
            Self.entry("IntegrationTests.HealthCheckTests/testStoreIsHealthy", .skip),
            Self.entry("DemoKitTests.MathSuite/multiplication()", .skip),
        ]), to: settings.quarantinePath)
        let outcome = try await Coordinator(settings: settings).run()
        #expect(outcome.exitCode == .success)
        #expect(!FileManager.default.fileExists(atPath: straggler + "/straggler-pid"), "the skipped test did not start")
        for name in ["IntegrationTests.HealthCheckTests/testStoreIsHealthy", "DemoKitTests.MathSuite/multiplication()"] {
            let r = try #require(outcome.report.result(name))
            #expect(r.outcome == .skipped && r.quarantine?.mode == .skip)
            #expect(r.attempts.first?.skipReason == "quarantined (skip): flaky backend")
        }
        // The binaries' own output: the other tests of both classes ran, the skipped ones never appear.
        let logs = outcome.report.units.map(\.log).joined(separator: "\n")
        #expect(logs.contains("testBreakerHealthyWhenClosed") && logs.contains("additionIsCommutative"))
        #expect(!logs.contains("testStoreIsHealthy") && !logs.contains("multiplication"), "\(logs)")
        #expect(outcome.report.result("IntegrationTests.HealthCheckTests/testBreakerHealthyWhenClosed")?.outcome == .passed)
        #expect(outcome.report.results.count == 6, "every test asked for is in the report once")
    }

    @Test func badEntriesAreErrorsThatNameTheFileLineAndKey() throws {
        let cases: [(String, String)] = [
            ("tests:\n  - test: A.B/t\n    mode: mute\n    reason: r\n    owner: o\n    added: 2026-11-01\n    expire: 2026-12-01\n",
             "q.yml:7: unknown key 'tests[0].expire'"),
            ("tests:\n  - test: A.B/t\n    mode: mutter\n    reason: r\n    owner: o\n    added: 2026-11-01\n    expires: 2026-12-01\n",
             "q.yml:3: 'tests[0].mode' must be one of mute, skip"),
            ("tests:\n  - test: A.B/t\n    mode: mute\n    reason: r\n    added: 2026-11-01\n    expires: 2026-12-01\n",
             "q.yml:2: 'tests[0]' needs `owner` or `issue`"),
            ("tests:\n  - test: A.B/t\n    mode: mute\n    reason: r\n    owner: o\n    added: 2026-11-01\n    expires: 12/01/2026\n",
             "q.yml:7: 'tests[0].expires' must be a day, YYYY-MM-DD"),
            ("tests:\n  - test: NoModule\n    mode: mute\n    reason: r\n    owner: o\n    added: 2026-11-01\n    expires: 2026-12-01\n",
             "q.yml:2: 'tests[0].test' must be Module.Class/test or Module.Class"),
            ("tests:\n  - test: A.B/t\n    mode: mute\n    reason: r\n    owner: o\n    expires: 2026-12-01\n",
             "q.yml:2: 'tests[0]' needs `added`"),
        ]
        for (text, expected) in cases {
            do {
                _ = try QuarantineFile.parse(text, file: "q.yml")
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description.contains(expected), "\(error.description)")
            }
        }
    }

    @Test func theCLIRefusesABadFileAndAnUnknownDestinationWithExit2() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let file = dir.file("q.yml")
        try "tests:\n  - test: A.B/t\n    mode: mute\n".write(toFile: file, atomically: true, encoding: .utf8)
        let common = ["run", "--bundle", bundle, "--filter", "GCDTests", "--quarantine", file, "--no-record",
                      "--report-dir", dir.file("r")]
        let (code, _, err) = try await runCLI(common)
        #expect(code == 2, "\(err)")
        #expect(err.contains("q.yml:2: 'tests[0]' needs `reason`"), "\(err)")

        try QuarantineFile.write(Quarantine(entries: [Self.entry("DemoKitTests.GCDTests", .mute, destination: "ios")]),
                                 to: file)
        let (code2, _, err2) = try await runCLI(common)
        #expect(code2 == 2, "\(err2)")
        #expect(err2.contains("the entry for DemoKitTests.GCDTests is for the destination 'ios', which is not configured"), "\(err2)")
        let (code3, _, err3) = try await runCLI(["quarantine", "add", "DemoKitTests.GCDTests", "--reason", "r", "--owner", "o",
                                                 "--destination", "ios", "--quarantine", file])
        #expect(code3 == 2 && err3.contains("unknown destination 'ios'"), "\(err3)")
    }

    @Test func addListRemoveAndExpiryFromTheCLI() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let file = dir.file("q.yml")
        let (a, out, err) = try await runCLI(["quarantine", "add", "DemoKitTests.GCDTests/testLCM", "--mode", "skip",
                                              "--reason", "slow on CI", "--issue", "https://example.com/1", "--days", "3",
                                              "--quarantine", file])
        #expect(a == 0, "\(err)")
        #expect(out.contains("added DemoKitTests.GCDTests/testLCM: skip until \(QuarantineFile.day(plus: 3))"))
        let (n, _, noOwnerErr) = try await runCLI(["quarantine", "add", "DemoKitTests.GCDTests", "--reason", "r",
                                                   "--quarantine", file])
        #expect(n == 2 && noOwnerErr.contains("needs an owner or an issue"), "\(noOwnerErr)")
        // An entry that expired yesterday: listed as expired, and a run warns and runs the test.
        var quarantine = try QuarantineFile.load(file)
        quarantine.entries.append(QuarantineEntry(test: "DemoKitTests.GCDTests/testGCD", mode: .skip, reason: "old",
                                                  owner: "@me", added: "2026-01-01", expires: QuarantineFile.day(plus: -1)))
        try QuarantineFile.write(quarantine, to: file)
        let (l, list, _) = try await runCLI(["quarantine", "list", "--quarantine", file])
        #expect(l == 0)
        #expect(list.contains("EXPIRED: not applied") && list.contains("active") && list.contains("slow on CI"), "\(list)")
        let (r, runOut, runErr) = try await runCLI(["run", "--bundle", bundle, "--filter", "GCDTests", "--quarantine", file,
                                                    "--no-record", "--report-dir", dir.file("r")])
        #expect(r == 0, "\(runErr)")
        #expect(runOut.contains("testGCD expired on") || runErr.contains("testGCD expired on"), "\(runOut + runErr)")
        let report = try JSONConventions.decoder().decode(RunReport.self,
                                                          from: Data(contentsOf: URL(fileURLWithPath: dir.file("r/report.json"))))
        #expect(report.result("DemoKitTests.GCDTests/testGCD")?.outcome == .passed, "an expired entry no longer applies")
        #expect(report.result("DemoKitTests.GCDTests/testLCM")?.quarantine?.mode == .skip)
        let (rm, rmOut, rmErr) = try await runCLI(["quarantine", "remove", "DemoKitTests.GCDTests/testLCM",
                                                   "--quarantine", file])
        #expect(rm == 0 && rmOut.contains("removed DemoKitTests.GCDTests/testLCM"), "\(rmErr)")
        let (rm2, _, rm2Err) = try await runCLI(["quarantine", "remove", "DemoKitTests.GCDTests/testLCM", "--quarantine", file])
        #expect(rm2 == 2 && rm2Err.contains("has no quarantine entry"), "\(rm2Err)")
        #expect(try QuarantineFile.load(file).entries.map(\.test) == ["DemoKitTests.GCDTests/testGCD"])
    }

    /// Two runs where the test fails, then passes on a retry: proposed. Then clean runs: proposed for release.
    @Test func proposeQuarantinesAFlakyTestAndReleasesItOnceItPassesCleanly() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let file = dir.file("q.yml")
        for round in 0..<2 {
            var settings = demoSettings(bundle: bundle, dir: dir, filters: ["RetryableFetchTests", "GCDTests"],
                                        env: ["DEMO_FLAKY_DIR": dir.file("flaky-\(round)")])
            settings.retries = 1
            settings.quarantinePath = file
            #expect(try await Coordinator(settings: settings).run().exitCode == .success)
        }
        let history = dir.file("history.sqlite")
        let (dry, dryOut, dryErr) = try await runCLI(["history", "flaky", "--history", history, "--propose", "--dry-run",
                                                      "--quarantine", file])
        #expect(dry == 0, "\(dryErr)")
        #expect(dryOut.contains("would quarantine IntegrationTests.RetryableFetchTests/testFetchWithFlakyBackend"), "\(dryOut)")
        #expect(!FileManager.default.fileExists(atPath: file), "a dry run writes nothing")
        // Its flake rate is 50 % over 2 failures: a higher threshold, or more failures asked for, proposes nothing.
        for extra in [["--threshold", "0.6"], ["--min-failures", "3"]] {
            let (c, o, e) = try await runCLI(["history", "flaky", "--history", history, "--propose", "--dry-run",
                                              "--quarantine", file] + extra)
            #expect(c == 0 && !o.contains("would quarantine"), "\(extra): \(o) \(e)")
        }
        let (low, lowOut, _) = try await runCLI(["history", "flaky", "--history", history, "--propose", "--dry-run",
                                                 "--threshold", "0.5", "--min-failures", "2", "--quarantine", file])
        #expect(low == 0 && lowOut.contains("would quarantine IntegrationTests.RetryableFetchTests"), "at the bounds: \(lowOut)")
        let (p, pOut, pErr) = try await runCLI(["history", "flaky", "--history", history, "--propose", "--quarantine", file])
        #expect(p == 0, "\(pErr)")
        let entries = try QuarantineFile.load(file).entries
        #expect(entries.map(\.test) == ["IntegrationTests.RetryableFetchTests/testFetchWithFlakyBackend"], "\(pOut)")
        #expect(entries.first?.mode == .mute && entries.first?.reason.contains("flake rate 50.0%") == true)
        #expect(!pOut.contains("GCDTests"), "no stable test is proposed")
        // Two clean runs (no flaky marker folder): with --release-after 2 it is released.
        for _ in 0..<2 {
            var settings = demoSettings(bundle: bundle, dir: dir, filters: ["RetryableFetchTests"])
            settings.quarantinePath = file
            let outcome = try await Coordinator(settings: settings).run()
            #expect(outcome.report.result("IntegrationTests.RetryableFetchTests/testFetchWithFlakyBackend")?.quarantine?.mode == .mute)
        }
        let (rel, relOut, relErr) = try await runCLI(["history", "flaky", "--history", history, "--propose",
                                                      "--release-after", "2", "--quarantine", file])
        #expect(rel == 0, "\(relErr)")
        #expect(relOut.contains("release IntegrationTests.RetryableFetchTests/testFetchWithFlakyBackend"), "\(relOut)")
        #expect(try QuarantineFile.load(file).entries.isEmpty)
    }
}
