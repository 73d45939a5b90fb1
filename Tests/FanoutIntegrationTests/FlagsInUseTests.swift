@testable import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// The `fanout` flags a user passes, each run through the real executable on the real demo suite, each checked for
/// what it does (its effect, seen against the same command without it where that tells).
@Suite(.timeLimit(.minutes(10))) struct FlagsInUseTests {
    let captured = repositoryRoot.appendingPathComponent("Tests/Fixtures/Captured")

    func report(_ dir: String) throws -> [String: Any] { try jsonReport(dir + "/report.json") }

    func results(_ report: [String: Any]) -> [String: [String: Any]] {
        var out: [String: [String: Any]] = [:]
        for r in report["results"] as? [[String: Any]] ?? [] {
            guard let id = r["id"] as? [String: Any], let suite = id["suite"] as? [String: Any] else { continue }
            out["\(suite["module"] ?? "").\(suite["name"] ?? "")/\(id["name"] ?? "")"] = r
        }
        return out
    }

    /// `--retries 1`: a test that fails once and then passes is `flaky` (exit 0); without the flag it fails (exit 1).
    @Test func retriesTurnAFailThenPassIntoFlaky() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let args = ["run", "--bundle", bundle, "--filter", "^IntegrationTests\\.RetryableFetchTests$", "--slots", "2"]
        let test = "IntegrationTests.RetryableFetchTests/testFetchWithFlakyBackend"
        var (code, out, err) = try await runCLI(args + ["--history", dir.file("a.sqlite"), "--report-dir", dir.file("a")],
                                                env: ["DEMO_FLAKY_DIR": dir.file("flaky-a")])
        #expect(code == 1, "no retries: the first failure is the verdict: \(out) \(err)")
        #expect(results(try report(dir.file("a")))[test]?["outcome"] as? String == "failed")
        (code, out, err) = try await runCLI(args + ["--retries", "1", "--history", dir.file("b.sqlite"), "--report-dir", dir.file("b")],
                                            env: ["DEMO_FLAKY_DIR": dir.file("flaky-b")])
        #expect(code == 0, "--retries 1: \(out) \(err)")
        let result = try #require(results(try report(dir.file("b")))[test])
        #expect(result["outcome"] as? String == "flaky")
        #expect((result["attempts"] as? [[String: Any]])?.compactMap { $0["outcome"] as? String } == ["failed", "passed"])
    }

    /// `--timings`: after the summary, the run's phases from the command's start to the report files written, with
    /// the time outside the tests; report.json has the same phases (up to the history written) without the flag too.
    @Test func timingsShowWhereTheRunsTimeWent() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let args = ["run", "--bundle", bundle, "--filter", "^DemoKitTests\\.ArithmeticTests$", "--history", dir.file("h.sqlite")]
        let (code, out, err) = try await runCLI(args + ["--timings", "--report-dir", dir.file("a")])
        #expect(code == 0, "\(out) \(err)")
        let table = try #require(out.components(separatedBy: "Timings: ").last)
        #expect(table.contains("of it outside the tests"), "\(out)")
        let named = table.split(separator: "\n").dropFirst().compactMap { $0.split(separator: " ").first.map(String.init) }
        #if os(Linux)
        let startUp = ["start-up"] // measured from /proc (elsewhere absent)
        #else
        let startUp: [String] = []
        #endif
        #expect(named == startUp + ["checks", "build", "discover", "history", "estimate", "plan", "agents", "tests",
                                    "wind-down", "assemble", "judge", "record", "reports", "stopping"], "\(table)")
        #expect(table.contains("(at once: report.json "), "\(table)")
        let phases = try #require((try report(dir.file("a"))["timing"] as? [String: Any])?["phases"] as? [[String: Any]])
        #expect(phases.compactMap { $0["phase"] as? String } == Array(named.dropLast(2)))
        #expect(phases.allSatisfy { ($0["seconds"] as? Double ?? -1) >= 0 }, "\(phases)")

        let (plainCode, plain, _) = try await runCLI(args + ["--report-dir", dir.file("b")])
        #expect(plainCode == 0 && !plain.contains("Timings: "), "the table only with the flag")
        #expect(((try report(dir.file("b"))["timing"] as? [String: Any])?["phases"] as? [[String: Any]])?.count == named.count - 2,
                "report.json always has them")
    }

    /// `--stall-timeout 3`: a test that sleeps for an hour (no output, no CPU time) is stopped as hung after its stall
    /// window. `--test-timeout 4`: the ceiling is the most a test may run at all, so the same test is stopped at 4 s
    /// although its stall window (300 s without history) is far longer. The message names the limit; the class's
    /// other tests pass.
    @Test(arguments: [("--stall-timeout", 3), ("--test-timeout", 4)])
    func aTimeLimitFlagStopsASilentTestAtIt(flag: String, seconds: Int) async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let (code, out, err) = try await runCLI(["run", "--bundle", bundle, "--filter", "^IntegrationTests\\.SessionTimeoutTests$",
                                                 flag, String(seconds), "--history", dir.file("h.sqlite"),
                                                 "--report-dir", dir.file("r")], env: ["DEMO_HANG": "1"])
        #expect(code == 1, "\(out) \(err)")
        let all = results(try report(dir.file("r")))
        let name = "IntegrationTests.SessionTimeoutTests/testIdleSessionExpires"
        let hung = try #require(all[name])
        #expect(hung["outcome"] as? String == "timed-out")
        let message = ((hung["attempts"] as? [[String: Any]])?.last?["issues"] as? [[String: Any]])?.first?["message"] as? String ?? ""
        #expect(["\(seconds).00 s", "\(seconds).0 s", "\(seconds) s"].contains { message.contains($0) }, "the limit it was stopped at: \(message)")
        #expect(all.filter { $0.key != name }.values.allSatisfy { $0["outcome"] as? String == "passed" },
                "\(all.mapValues { $0["outcome"] ?? "" })")
    }

    /// `history export --runs 1`: only the newest run goes into the export.
    @Test func historyExportRunsKeepsTheNewest() async throws {
        let dir = try TempDir()
        let history = dir.file("h.sqlite")
        let xunit = captured.appendingPathComponent("swift-test-xunit.xml").path
        let swiftTesting = captured.appendingPathComponent("swift-test-xunit-swift-testing.xml").path
        var (code, out, err) = try await runCLI(["history", "import", "--junit", xunit, swiftTesting, "--history", history])
        #expect(code == 0, "\(err)")
        (code, out, err) = try await runCLI(["history", "export", "--out", dir.file("all.json"), "--history", history])
        #expect(code == 0 && out.contains("exported 2 runs"), "\(out) \(err)")
        (code, out, err) = try await runCLI(["history", "export", "--out", dir.file("one.json"), "--runs", "1", "--history", history])
        #expect(code == 0 && out.contains("exported 1 run"), "\(out) \(err)")
    }

    /// `--configuration`, `--scratch-path` and `--Xbuild` reach `swift build` as given, for each command that builds:
    /// an extra argument swift build does not know fails the build with swift build's own message, and the command
    /// fanout shows carries all three. (`-c` is the short spelling of `--configuration`.)
    @Test(arguments: [["run", "--configuration", "release"], ["plan", "--configuration", "release"], ["list", "-c", "release"]])
    func buildFlagsReachSwiftBuild(first: [String]) async throws {
        let dir = try TempDir()
        let package = repositoryRoot.appendingPathComponent("Tests/Fixtures/DemoSuite").path
        let (code, _, err) = try await runCLI([first[0], "--package", package] + first.dropFirst()
            + ["--scratch-path", dir.file("scratch"), "--Xbuild", "--no-such-swift-build-flag", "--history", dir.file("h.sqlite")])
        #expect(code == 2, "\(err)")
        #expect(err.contains("swift build --build-tests --package-path \(package) -c release --scratch-path \(dir.file("scratch")) --no-such-swift-build-flag"), "\(err)")
        #expect(err.contains("Unknown option '--no-such-swift-build-flag'"), "swift build's own message: \(err)")
    }

    /// `--package`: the products' folder is asked (`swift build --show-bin-path`) while the build runs, not after it,
    /// so a no-op build costs one SwiftPM start, as `swift build` does. A stand-in `swift` first on PATH passes every
    /// command to the real one; its build waits (at most 30 s) until the `--show-bin-path` call has started, and fails
    /// when that never happens: asked after the build, as before, the run fails with swift build's "error:" line.
    @Test func theProductsFolderIsAskedWhileTheBuildRuns() async throws {
        let dir = try TempDir()
        let swift = try #require(ProductBuilder.findSwift())
        let bin = dir.file("fake-bin"), asked = dir.file("bin-path-asked")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let script = """
            #!/bin/sh
            case "$*" in
              *--show-bin-path*) : > \(ShellQuote.quote(asked)) ;;
              *build*)
                i=0
                while [ ! -e \(ShellQuote.quote(asked)) ]; do
                  i=$((i + 1))
                  if [ "$i" -gt 600 ]; then echo "error: --show-bin-path was not asked while the build ran" >&2; exit 1; fi
                  sleep 0.05
                done ;;
            esac
            exec \(ShellQuote.quote(swift)) "$@"

            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: bin + "/swift"))
        chmod(bin + "/swift", 0o755)
        let package = repositoryRoot.appendingPathComponent("Tests/Fixtures/DemoSuite").path
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let (code, out, err) = try await runCLI(["run", "--package", package, "--filter", "^DemoKitTests\\.ArithmeticTests$",
                                                 "--slots", "2", "--history", dir.file("h.sqlite"), "--report-dir", dir.file("r")],
                                                env: ["PATH": path])
        #expect(code == 0, "\(out) \(err)")
        #expect(!err.contains("was not asked while the build ran"), "\(err)")
        let ran = testIDs(try report(dir.file("r"))).filter { $0.contains("ArithmeticTests/") }
        #expect(!ran.isEmpty, "the tests of the product found in that folder ran: \(out)")
    }

    /// A history from a captured `swift test` run (DatabaseMigrationTests 8.1 s, EndToEndCheckoutTests 6.6 s): on 8
    /// slots both are longer than a slot's share, so the plan cuts them into groups of methods. `--keep-whole` keeps
    /// the one it names whole (and no idle slot takes its tests over); `--no-split` keeps every class whole.
    @Test(arguments: ["plan", "list"])
    func keepWholeAndNoSplitKeepClassesWhole(command: String) async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let history = dir.file("h.sqlite")
        let (imported, _, importErr) = try await runCLI(["history", "import", "--junit",
                                                         captured.appendingPathComponent("swift-test-xunit.xml").path,
                                                         captured.appendingPathComponent("swift-test-xunit-swift-testing.xml").path,
                                                         "--history", history])
        try #require(imported == 0, "\(importErr)")
        let base = [command, "--bundle", bundle, "--slots", "8", "--history", history]
        /// The estimates table's rows of a class: its test count in each piece.
        func pieces(_ out: String, _ name: String) -> [Int] {
            out.split(separator: "\n").filter { $0.hasPrefix("IntegrationTests.\(name) ") && $0.contains("xctest") }
                .compactMap { line in line.split(separator: " ").dropFirst(2).first.flatMap { Int($0) } }
        }
        let (c1, split, e1) = try await runCLI(base)
        #expect(c1 == 0, "\(e1)")
        #expect(pieces(split, "DatabaseMigrationTests").count >= 2 && pieces(split, "DatabaseMigrationTests").reduce(0, +) == 8, "\(split)")
        #expect(pieces(split, "EndToEndCheckoutTests").count >= 2, "\(split)")

        let (c2, kept, e2) = try await runCLI(base + ["--keep-whole", "DatabaseMigration"])
        #expect(c2 == 0, "\(e2)")
        #expect(pieces(kept, "DatabaseMigrationTests") == [8], "kept whole: \(kept)")
        #expect(pieces(kept, "EndToEndCheckoutTests").count >= 2, "the others still split: \(kept)")
        if command == "plan" {
            #expect(!kept.split(separator: "\n").contains {
                $0.contains("DatabaseMigrationTests") && ($0.contains("hands") || $0.contains("takes over"))
            }, "no idle slot takes its tests over: \(kept)")
        }

        let (c3, whole, e3) = try await runCLI(base + ["--no-split"])
        #expect(c3 == 0, "\(e3)")
        #expect(pieces(whole, "DatabaseMigrationTests") == [8] && pieces(whole, "EndToEndCheckoutTests") == [7], "\(whole)")
    }

    /// `run --keep-whole` and `run --no-split` on the same history: the class starts as one unit; `--keep-whole`
    /// also keeps idle slots from taking its tests over (`--no-split` leaves work stealing on).
    @Test func keepWholeAndNoSplitInARealRun() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let history = dir.file("h.sqlite")
        let (imported, _, importErr) = try await runCLI(["history", "import", "--junit",
                                                         captured.appendingPathComponent("swift-test-xunit.xml").path,
                                                         "--history", history, "--destination", "local"])
        try #require(imported == 0, "\(importErr)")
        let base = ["run", "--bundle", bundle, "--filter", "DatabaseMigrationTests|EndToEndCheckoutTests", "--slots", "8",
                    "--history", history, "--no-record"]
        func units(_ r: [String: Any], _ name: String) -> [[String: Any]] {
            (r["units"] as? [[String: Any]] ?? []).filter { ($0["suites"] as? [String] ?? []).contains { $0.contains(name) } }
        }
        let env = ["DEMO_LATENCY_SCALE": "0.05"]
        var (code, out, err) = try await runCLI(base + ["--report-dir", dir.file("split")], env: env)
        #expect(code == 0, "\(out) \(err)")
        #expect(units(try report(dir.file("split")), "DatabaseMigrationTests").count >= 2, "split by default")
        for (flags, name) in [(["--keep-whole", "DatabaseMigration"], "kept"), (["--no-split"], "whole")] {
            (code, out, err) = try await runCLI(base + flags + ["--report-dir", dir.file(name)], env: env)
            #expect(code == 0, "\(flags): \(out) \(err)")
            let mine = units(try report(dir.file(name)), "DatabaseMigrationTests")
            let planned = mine.filter { $0["takenFrom"] == nil }
            let ran = mine.reduce(0) { $0 + ($1["testCount"] as? Int ?? 0) }
            #expect(planned.count == 1 && ran == 8, "\(flags): one planned unit, every test once: \(mine.map { ($0["id"] ?? "", $0["testCount"] ?? "", $0["takenFrom"] ?? "-") })")
            if name == "kept" { #expect(mine.count == 1, "nothing taken over: \(mine.count) units") }
        }
    }

    /// `--feedback-first`: a class that failed in a recent run starts first, in the plan and in the run (unit 1).
    @Test func feedbackFirstStartsWhatFailedRecently() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let history = dir.file("h.sqlite")
        let failing = try await runCLI(["run", "--bundle", bundle, "--filter", "ArithmeticTests", "--history", history,
                                        "--report-dir", dir.file("failing")], env: ["DEMO_FAIL": "1"])
        #expect(failing.0 == 1, "DEMO_FAIL=1 fails ArithmeticTests: \(failing.1) \(failing.2)")
        func firstUnit(_ out: String) -> String? {
            out.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("1 ") }.map(String.init)
        }
        let (c1, plain, _) = try await runCLI(["plan", "--bundle", bundle, "--slots", "4", "--history", history])
        let (c2, first, e2) = try await runCLI(["plan", "--bundle", bundle, "--slots", "4", "--history", history, "--feedback-first"])
        #expect(c1 == 0 && c2 == 0, "\(e2)")
        #expect(firstUnit(plain)?.contains("ArithmeticTests") == false, "\(plain)")
        #expect(firstUnit(first)?.contains("DemoKitTests.ArithmeticTests") == true, "\(first)")

        let (code, out, err) = try await runCLI(["run", "--bundle", bundle, "--filter", "ArithmeticTests|GCDTests|LRUCacheTests",
                                                 "--slots", "1", "--feedback-first", "--history", history,
                                                 "--report-dir", dir.file("r")])
        #expect(code == 0, "\(out) \(err)")
        let units = try report(dir.file("r"))["units"] as? [[String: Any]] ?? []
        let one = units.first { $0["id"] as? Int == 1 }
        #expect((one?["suites"] as? [String])?.contains { $0.contains("ArithmeticTests") } == true, "\(units.map { $0["suites"] ?? "" })")
    }

    /// `--no-cpu-packing` turns CPU-aware packing off, and the report says which way the run went.
    @Test func noCpuPackingIsRecorded() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        for (flags, packing) in [([String](), true), (["--no-cpu-packing"], false)] {
            let (code, out, err) = try await runCLI(["run", "--bundle", bundle, "--filter", "GCDTests", "--no-record",
                                                     "--report-dir", dir.file("r\(packing)")] + flags)
            #expect(code == 0, "\(out) \(err)")
            #expect((try report(dir.file("r\(packing)"))["plan"] as? [String: Any])?["cpuPacking"] as? Bool == packing)
        }
    }

    /// `--color`: the summary is coloured even when stdout is not a terminal; without it, not.
    @Test func colorForcesColourOffATerminal() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let (c1, plain, _) = try await runCLI(["run", "--bundle", bundle, "--filter", "GCDTests", "--no-record", "--report-dir", dir.file("a")])
        let (c2, coloured, _) = try await runCLI(["run", "--bundle", bundle, "--filter", "GCDTests", "--no-record", "--color",
                                                  "--report-dir", dir.file("b")])
        #expect(c1 == 0 && c2 == 0)
        #expect(!plain.contains("\u{1B}["), "no escape sequence off a terminal")
        #expect(coloured.contains("\u{1B}["), "--color: \(coloured.suffix(500))")
    }

    /// The flags of the old time limits are refused with what replaced them.
    @Test(arguments: [["--timeout-factor", "3"], ["--min-timeout", "10"]])
    func oldTimeoutFlagsAreRefusedWithTheNewOnes(flag: [String]) async throws {
        let (code, _, err) = try await runCLI(["run", "--bundle", "/bin/true"] + flag)
        #expect(code == 2, "\(err)")
        #expect(err.contains("--stall-timeout") || err.contains("--test-timeout"), "says what replaced it: \(err)")
    }

    /// `history show --limit 1`: one row per table.
    @Test func historyShowLimit() async throws {
        let dir = try TempDir()
        let history = dir.file("h.sqlite")
        _ = try await runCLI(["history", "import", "--junit", captured.appendingPathComponent("swift-test-xunit.xml").path,
                              captured.appendingPathComponent("swift-test-xunit-swift-testing.xml").path, "--history", history])
        let (c1, all, _) = try await runCLI(["history", "show", "--history", history])
        let (c2, one, _) = try await runCLI(["history", "show", "--history", history, "--limit", "1"])
        #expect(c1 == 0 && c2 == 0)
        let classes = { (text: String) in text.split(separator: "\n").filter { $0.hasPrefix("IntegrationTests.") || $0.hasPrefix("DemoKitTests.") }.count }
        #expect(classes(all) > 1 && classes(one) == 1, "\(one)")
    }

    /// `quarantine add --expires`: the entry applies until that day.
    @Test func quarantineAddExpires() async throws {
        let dir = try TempDir()
        let (code, out, err) = try await runCLI(["quarantine", "add", "DemoKitTests.GCDTests/testLCM", "--reason", "r",
                                                 "--owner", "@me", "--expires", "2099-12-31", "--quarantine", dir.file("q.yml")])
        #expect(code == 0, "\(err)")
        #expect(out.contains("until 2099-12-31"), "\(out)")
        #expect(try String(contentsOfFile: dir.file("q.yml"), encoding: .utf8).contains("2099-12-31"))
    }
}
