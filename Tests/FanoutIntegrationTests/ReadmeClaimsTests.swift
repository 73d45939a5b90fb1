import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// What the README says `fanout list` and `FANOUT_SHARD` do, checked on the real demo suite.
@Suite(.timeLimit(.minutes(5))) struct ReadmeClaimsTests {
    /// "fanout list [--tests]: classes (and methods) with their estimates".
    @Test func listShowsEveryClassWithItsEstimateAndWithTestsItsMethods() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let common = ["--bundle", bundle, "--history", dir.file("h.sqlite")]
        let (code, out, err) = try await runCLI(["list"] + common)
        #expect(code == 0, "\(out)\(err)")
        let table = try ListTable(out)
        #expect(table.classes.count == table.classCount, "a row for each of the \(table.classCount) classes: \(out)")
        #expect(table.classes.map(\.tests).reduce(0, +) == table.testCount, "the rows' tests add up to the title's")
        #expect(Set(table.classes.map(\.framework)) == ["xctest", "swift-testing"])
        for c in table.classes {
            #expect(c.estimate > 0 && c.source.hasPrefix("no history: test count ×"), "\(c)")
            #expect(c.methods.isEmpty, "no methods without --tests: \(c)")
        }

        let (tcode, tout, terr) = try await runCLI(["list", "--tests"] + common)
        #expect(tcode == 0, "\(tout)\(terr)")
        let withTests = try ListTable(tout)
        #expect(withTests.classes.map(\.name) == table.classes.map(\.name))
        for c in withTests.classes { #expect(c.methods.count == c.tests, "a line per method: \(c)") }
        let session = withTests.classes.first { $0.name == "IntegrationTests.SessionTimeoutTests" }
        #expect(session?.methods.sorted() == ["testActiveSessionStaysOpen", "testIdleSessionExpires", "testSessionRenewal"])

        // After a run of one class its estimate comes from the history; the others' still from their test counts.
        let (rcode, rout, rerr) = try await runCLI(["run", "--filter", "^DemoKitTests\\.GCDTests$", "--report-dir", dir.file("r")] + common)
        #expect(rcode == 0, "\(rout)\(rerr)")
        let (_, after, _) = try await runCLI(["list"] + common)
        let timed = try ListTable(after).classes.filter { !$0.source.hasPrefix("no history") && !$0.source.hasPrefix("test count") }
        #expect(timed.map(\.name) == ["DemoKitTests.GCDTests"], "\(after)")
        #expect(timed.first?.source == "history (1 run)", "\(after)")
    }

    /// "--shard I/N … Read from FANOUT_SHARD … when the flag is absent; report.json records shard".
    @Test func fanoutShardPicksTheShardWhenTheFlagIsAbsent() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let config = dir.file("fanout.yml")
        try "destination:\n  name: local\n  environment: { DEMO_LATENCY_SCALE: \"0.05\" }\n".write(toFile: config, atomically: true, encoding: .utf8)
        let common = ["run", "--no-record", "--config", config, "--bundle", bundle, "--skip", "Performance|SessionTimeout|Straggler|Flaky",
                      "--history", dir.file("h.sqlite"), "--slots", "2"]
        func run(_ name: String, _ flags: [String], shardVariable: String) async throws -> (shard: [String: Int]?, tests: [String]) {
            let (code, out, err) = try await runCLI(common + flags + ["--report-dir", dir.file(name)], cwd: dir.path,
                                                    env: ["FANOUT_SHARD": shardVariable])
            #expect(code == 0, "\(name): \(out)\(err)")
            let report = try jsonReport(dir.file(name + "/report.json"))
            return (report["shard"] as? [String: Int], testIDs(report).sorted())
        }
        let byFlag = try await run("flag", ["--shard", "2/3"], shardVariable: "")
        let byVariable = try await run("variable", [], shardVariable: "2/3")
        #expect(byVariable.shard == ["index": 2, "count": 3], "report.json records the shard FANOUT_SHARD named")
        #expect(!byVariable.tests.isEmpty)
        #expect(byVariable.tests == byFlag.tests, "FANOUT_SHARD=2/3 runs what --shard 2/3 runs")
        let all = try await run("all", [], shardVariable: "")
        #expect(all.shard == nil)
        #expect(byVariable.tests.count < all.tests.count, "a shard is less than the whole run")
        // The flag wins over the variable.
        let both = try await run("both", ["--shard", "2/3"], shardVariable: "1/3")
        #expect(both.shard == ["index": 2, "count": 3])
        #expect(both.tests == byFlag.tests)
        // A bad value is named as the variable's.
        let (bad, _, err) = try await runCLI(["run", "--bundle", bundle, "--history", dir.file("h.sqlite")], cwd: dir.path,
                                             env: ["FANOUT_SHARD": "4/3"])
        #expect(bad == 2)
        #expect(err.contains("FANOUT_SHARD must be I/N with 1 ≤ I ≤ N (got '4/3')"), "\(err)")
    }
}

/// `fanout list`'s table, read back: its title's counts and each class row with the method lines under it.
struct ListTable {
    struct Row: CustomStringConvertible {
        var name, framework: String
        var tests: Int
        var estimate: Double
        var source: String
        var methods: [String] = []
        var description: String { "\(name) \(framework) \(tests) \(estimate) \(source) \(methods)" }
    }

    var classCount = 0
    var testCount = 0
    var classes: [Row] = []

    init(_ text: String) throws {
        let lines = text.split(separator: "\n").map(String.init)
        guard let title = lines.firstIndex(where: { $0.hasSuffix(" tests") && $0.contains(" classes, ") }) else {
            throw TestFailure("no `N classes, M tests` title in: \(text)")
        }
        let counts = lines[title].split(separator: " ")
        classCount = Int(counts[0]) ?? -1
        testCount = Int(counts[2]) ?? -1
        // The header, the rule (a run of dashes per column, which gives the columns' places), then rows; a method
        // line is indented by two spaces.
        guard lines.count > title + 2 else { throw TestFailure("no table under the title: \(text)") }
        let rule = Array(lines[title + 2])
        var columns: [Range<Int>] = []
        var i = 0
        while i < rule.count {
            guard rule[i] == "-" else { i += 1; continue }
            let start = i
            while i < rule.count, rule[i] == "-" { i += 1 }
            columns.append(start..<i)
        }
        guard columns.count == 5 else { throw TestFailure("not five columns: \(lines[title + 2])") }
        for line in lines.dropFirst(title + 3) {
            if line.hasPrefix("  ") {
                guard !classes.isEmpty else { throw TestFailure("a method line before any class: \(line)") }
                classes[classes.count - 1].methods.append(line.trimmingCharacters(in: .whitespaces))
                continue
            }
            let characters = Array(line)
            let cells = columns.enumerated().map { n, r in
                // The last column runs to the end of the line; the others to the end of their rule.
                let end = n == columns.count - 1 ? characters.count : min(r.upperBound, characters.count)
                return String(characters[min(r.lowerBound, end)..<end]).trimmingCharacters(in: .whitespaces)
            }
            guard let tests = Int(cells[2]), let estimate = Double(cells[3]) else { throw TestFailure("not a class row: \(line)") }
            classes.append(Row(name: cells[0], framework: cells[1], tests: tests, estimate: estimate, source: cells[4]))
        }
    }
}

/// What the README says `fanout agents check` and `--keep-remote` do, on real sshd agents on loopback.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ReadmeAgentClaimsTests {
    static let fleet = IntegrationFleet(name: "readme", port: 2633)

    /// "every SSH agent in parallel: reachable, host key, auth, toolchain, disk, slots"; "exits 3 if any agent is
    /// unusable".
    @Test func agentsCheckReportsEveryAgentAndExitsThreeWhenOneIsUnusable() async throws {
        let settings = try await Self.fleet.settings()
        let fleetConfig = Self.fleet.directory + "/fleet.yml"
        let (code, out, err) = try await runCLI(["agents", "check", "--config", fleetConfig, "--latency", "5"])
        #expect(code == 0, "\(out)\(err)")
        let header = out.split(separator: "\n").first { $0.hasPrefix("agent ") }.map(String.init) ?? ""
        for column in ["connect", "toolchain", "cpus", "free disk", "slots", "dispatch p50/p99", "status"] {
            #expect(header.contains(column), "\(column): \(out)")
        }
        for spec in settings.agents {
            let row = out.split(separator: "\n").first { $0.hasPrefix(spec.name + " ") }.map(String.init) ?? ""
            #expect(row.contains("\(spec.user ?? "")@\(spec.host):\(spec.port ?? 22)"), "\(spec.name): \(out)")
            #expect(row.contains("ok ("), "connected: \(row)")
            #expect(row.contains("Swift 6"), "its toolchain: \(row)")
            #expect(row.contains("iB"), "its free disk: \(row)")
            #expect(row.contains(" ms"), "its dispatch latency: \(row)")
            #expect(row.hasSuffix(" ok"), "usable: \(row)")
        }

        // One agent of each kind of trouble beside the good ones: each its own row and reason, and exit 3.
        let dir = try TempDir()
        let good = settings.agents[0]
        func agent(_ name: String, host: String = good.host, port: Int = good.port ?? 22, user: String = good.user ?? "",
                   extra: String = "") -> String {
            "  - { name: \(name), host: \(host), port: \(port), user: \(user), identity: \(good.identity ?? ""), slots: 2, "
                + "workdir: \(good.workdir)\(extra) }\n"
        }
        var text = "known_hosts: \(Self.fleet.directory)/known_hosts\nhost_key_policy: strict\nagents:\n" + agent(good.name)
        text += agent("unreachable", host: "127.0.1.77", port: 2699)
        text += agent("wrong-user", user: "fanout-no-such-user")
        text += agent("no-swift", extra: ", swift: /nonexistent/swift")
        try text.write(toFile: dir.file("agents.yml"), atomically: true, encoding: .utf8)
        let (bad, badOut, badErr) = try await runCLI(["agents", "check", "--config", dir.file("agents.yml")])
        #expect(bad == 3, "\(badOut)\(badErr)")
        // A row per agent (`name address …`), then a line per unusable agent (`name (address): why`).
        func line(_ prefix: String, in out: String) -> String { out.split(separator: "\n").first { $0.hasPrefix(prefix) }.map(String.init) ?? "" }
        #expect(line(good.name + " ", in: badOut).hasSuffix(" ok"), "\(badOut)")
        for (name, why) in [("unreachable", "connection refused"), ("wrong-user", "authentication as fanout-no-such-user@"),
                            ("no-swift", "no Swift toolchain found")] {
            #expect(line(name + " ", in: badOut).hasSuffix("UNUSABLE"), "\(name): \(badOut)")
            #expect(line(name + " (", in: badOut).contains(why), "\(name) says why: \(badOut)")
        }

        // A host whose key is not in known_hosts is refused (strict by default), with the line to add.
        try "".write(toFile: dir.file("known_hosts"), atomically: true, encoding: .utf8)
        try ("known_hosts: \(dir.file("known_hosts"))\nagents:\n" + agent(good.name)).write(toFile: dir.file("strict.yml"), atomically: true, encoding: .utf8)
        let (strict, strictOut, strictErr) = try await runCLI(["agents", "check", "--config", dir.file("strict.yml")])
        #expect(strict == 3, "\(strictOut)\(strictErr)")
        #expect(line(good.name + " ", in: strictOut).hasSuffix("UNUSABLE"), "\(strictOut)")
        #expect(line(good.name + " (", in: strictOut).contains("is unknown"), "\(strictOut)")
        #expect(line(good.name + " (", in: strictOut).contains("SHA256:"), "the refusal gives the fingerprint: \(strictOut)")
        #expect(strictOut.contains("\n[\(good.host)]:\(good.port ?? 22) ssh-ed25519 "), "and the known_hosts line to add: \(strictOut)")
    }

    /// "--keep-remote: leave each run's folder on the agents (its processes are stopped anyway)"; without it the
    /// folder goes.
    @Test func keepRemoteLeavesTheRunsFolderOnTheAgentsButNoProcess() async throws {
        let settings = try await Self.fleet.settings()
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        func run(_ name: String, _ flags: [String]) async throws -> (id: String, agents: Set<String>) {
            let (code, out, err) = try await runCLI(["run", "--config", Self.fleet.directory + "/fleet.yml", "--bundle", bundle,
                                                     "--filter", "^DemoKitTests\\.(GCD|Prime|Arithmetic)Tests$", "--no-record",
                                                     "--history", dir.file("h.sqlite"), "--report-dir", dir.file(name)] + flags)
            #expect(code == 0, "\(out)\(err)")
            let report = try jsonReport(dir.file(name + "/report.json"))
            let units = (report["units"] as? [[String: Any]]) ?? []
            return (report["runID"] as? String ?? "", Set(units.compactMap { $0["agent"] as? String }))
        }
        func folderExists(_ runID: String, on spec: SSHAgentSpec) async throws -> Bool {
            let folder = ShellQuote.quote(spec.workdir + "/runs/" + runID)
            return try await IntegrationFleet.shell(on: spec, settings: settings.ssh, "test -d \(folder) && echo yes || echo no")
                .hasPrefix("yes")
        }
        let kept = try await run("kept", ["--keep-remote"])
        let plain = try await run("plain", [])
        #expect(!kept.id.isEmpty && !kept.agents.isEmpty && !plain.agents.isEmpty)
        for spec in settings.agents {
            if kept.agents.contains(spec.name) {
                #expect(try await folderExists(kept.id, on: spec), "\(spec.name) keeps runs/\(kept.id)")
            }
            #expect(!(try await folderExists(plain.id, on: spec)), "\(spec.name): runs/\(plain.id) removed without --keep-remote")
            let left = try await IntegrationFleet.processesOnAgent(spec, settings: settings.ssh)
            #expect(left.isEmpty, "nothing of either run still runs on \(spec.name): \(left)")
        }
    }
}
