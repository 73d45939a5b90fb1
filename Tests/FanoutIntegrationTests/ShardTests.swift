import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// `fanout run --shard I/N` as N CI jobs run it: the same split in every job, every test in exactly one shard.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ShardTests {
    /// Which shard a job runs: the flag, then FANOUT_SHARD, GitLab's and Buildkite's variables; an empty variable is
    /// unset, whichever it is; a malformed one is an error naming it.
    @Test func theShardComesFromTheFlagOrTheCISystemsVariablesAndAnEmptyOneIsUnset() throws {
        func shard(_ env: [String: String], flag: String? = nil) throws -> Shard? {
            try ShardSelection.resolve(flag: flag, environment: env)
        }
        #expect(try shard(["FANOUT_SHARD": "1/4"], flag: "2/4") == Shard(parsing: "2/4"))
        #expect(try shard(["FANOUT_SHARD": "3/4", "CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "4"]) == Shard(parsing: "3/4"))
        #expect(try shard(["CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3"]) == Shard(parsing: "2/3"))
        #expect(try shard(["BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "2"]) == Shard(parsing: "1/2"))
        #expect(try shard([:]) == nil)
        #expect(try shard(["FANOUT_SHARD": ""]) == nil)
        #expect(try shard(["CI_NODE_INDEX": "", "CI_NODE_TOTAL": "4"]) == nil, "as FANOUT_SHARD= is")
        #expect(try shard(["CI_NODE_INDEX": "2", "CI_NODE_TOTAL": ""]) == nil)
        #expect(try shard(["FANOUT_SHARD": "", "CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "2"]) == Shard(parsing: "2/2"))
        #expect(try shard(["BUILDKITE_PARALLEL_JOB": "", "BUILDKITE_PARALLEL_JOB_COUNT": "2"]) == nil)
        #expect(throws: FanoutError.self) { try shard(["CI_NODE_INDEX": "5", "CI_NODE_TOTAL": "4"]) }
        #expect(throws: FanoutError.self) { try shard(["BUILDKITE_PARALLEL_JOB": "x", "BUILDKITE_PARALLEL_JOB_COUNT": "2"]) }
        do {
            _ = try shard(["FANOUT_SHARD": "0/4"])
            Issue.record("0/4 is no shard")
        } catch let error as FanoutError {
            #expect(error.description.contains("FANOUT_SHARD must be I/N"), "\(error)")
        }
    }

    @Test func threeShardsRunEveryTestOfTheUnshardedRunExactlyOnce() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let config = dir.file("fanout.yml")
        try "destination:\n  name: local\n  environment: { DEMO_LATENCY_SCALE: \"0.05\" }\n".write(toFile: config, atomically: true, encoding: .utf8)
        // Every job plans from the same history (here: none yet) and the same slots.
        let common = ["--config", config, "--bundle", bundle, "--skip", "Performance|SessionTimeout|Straggler|Flaky",
                      "--history", dir.file("h.sqlite"), "--slots", "2"]
        let (code, out, err) = try await runCLI(["run", "--no-record"] + common + ["--report-dir", dir.file("all")], cwd: dir.path)
        #expect(code == 0, "\(out)\(err)")
        let all = testIDs(try jsonReport(dir.file("all/report.json")))
        #expect(all.count > 20)

        var seen: [String] = []
        for i in 1...3 {
            let (c, o, e) = try await runCLI(["run", "--no-record"] + common + ["--shard", "\(i)/3", "--report-dir", dir.file("s\(i)")],
                                             cwd: dir.path)
            #expect(c == 0, "shard \(i): \(o)\(e)")
            let mine = testIDs(try jsonReport(dir.file("s\(i)/report.json")))
            #expect(!mine.isEmpty, "shard \(i) ran something")
            let shard = try jsonReport(dir.file("s\(i)/report.json"))["shard"] as? [String: Int]
            #expect(shard == ["index": i, "count": 3], "the report says which shard it is")
            seen += mine
        }
        #expect(seen.count == all.count, "no test in two shards")
        #expect(Set(seen) == Set(all), "every test of the unsharded run in some shard")

        // The merge job: one report of the whole run from the shards' folders.
        let (mc, mo, me) = try await runCLI(["report", "merge", dir.file("s1"), dir.file("s2"), dir.file("s3/report.json"),
                                             "--out", dir.file("merged")])
        #expect(mc == 0, "\(mo)\(me)")
        let merged = testIDs(try jsonReport(dir.file("merged/report.json")))
        #expect(merged.sorted() == all.sorted(), "the merged report holds the unsharded run's tests, each once")
        for file in ["junit.xml", "summary.md", "report.html"] {
            #expect(FileManager.default.fileExists(atPath: dir.file("merged/" + file)), "\(file)")
        }
        // A shard that never reported: never green.
        let (xc, _, xe) = try await runCLI(["report", "merge", dir.file("s1"), dir.file("s3"), "--out", dir.file("partial")])
        #expect(xc == 3)
        #expect(xe.contains("shard 2/3 missing"), "\(xe)")
        // A report it cannot read (cut short, as an upload that died would leave it): exit 2, naming the file.
        let cut = dir.file("cut/report.json")
        try FileManager.default.createDirectory(atPath: dir.file("cut"), withIntermediateDirectories: true)
        let whole = try Data(contentsOf: URL(fileURLWithPath: dir.file("s2/report.json")))
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: cut))
        let (uc, _, ue) = try await runCLI(["report", "merge", dir.file("s1"), dir.file("cut"), dir.file("s3"), "--out", dir.file("unread")])
        #expect(uc == 2, "\(ue)")
        #expect(ue.contains(cut), "names the file it cannot read: \(ue)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("unread/report.json")), "nothing merged from a partial read")

        let (pc, plan, perr) = try await runCLI(["plan"] + common + ["--shards", "3"], cwd: dir.path)
        #expect(pc == 0, "\(perr)")
        for i in 1...3 { #expect(plan.contains("\(i)/3"), "\(plan)") }
    }

    @Test func jobsWithDifferentSlotsCutTheSameShards() async throws {
        // CI jobs on machines of different sizes (slots default to twice the cores): every test still in exactly one
        // shard. Seen failing when each job split classes for its own slots: tests in two shards, others in none.
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let config = dir.file("fanout.yml")
        try "destination:\n  name: local\n  environment: { DEMO_LATENCY_SCALE: \"0.2\" }\n".write(toFile: config, atomically: true, encoding: .utf8)
        let common = ["--config", config, "--bundle", bundle, "--skip", "Performance|SessionTimeout|Straggler|Flaky",
                      "--history", dir.file("h.sqlite")]
        // A history, so that long classes are split by methods.
        let (code, out, err) = try await runCLI(["run"] + common + ["--slots", "8", "--report-dir", dir.file("all")], cwd: dir.path)
        #expect(code == 0, "\(out)\(err)")
        let all = testIDs(try jsonReport(dir.file("all/report.json")))
        var seen: [String] = []
        var split = false
        for (i, slots) in [(1, "1"), (2, "3"), (3, "8")] {
            let (c, o, e) = try await runCLI(["run", "--no-record"] + common + ["--slots", slots, "--shard", "\(i)/3",
                                                                                "--report-dir", dir.file("s\(i)")], cwd: dir.path)
            #expect(c == 0, "shard \(i): \(o)\(e)")
            let report = try jsonReport(dir.file("s\(i)/report.json"))
            seen += testIDs(report)
            split = split || ((report["classes"] as? [[String: Any]]) ?? []).contains { ($0["estimateSource"] as? String)?.contains("split") == true }
        }
        #expect(split, "some class was split by methods (else the check proves nothing)")
        #expect(seen.count == all.count, "no test in two shards: \(seen.count) of \(all.count)")
        #expect(Set(seen) == Set(all), "every test in some shard: missing \(Set(all).subtracting(seen).sorted().prefix(5))")
    }

    @Test func aShardOutOfRangeOrWithNothingToRunIsAnError() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let (code, _, err) = try await runCLI(["run", "--bundle", bundle, "--shard", "4/3", "--history", dir.file("h.sqlite")], cwd: dir.path)
        #expect(code == 2)
        #expect(err.contains("--shard must be I/N with 1 ≤ I ≤ N (got '4/3')"), "\(err)")
        // One class cut into at most a few pieces cannot fill 50 shards: the empty ones say so instead of passing.
        let (c2, _, e2) = try await runCLI(["run", "--bundle", bundle, "--filter", "ArithmeticTests$", "--shard", "50/50",
                                            "--history", dir.file("h.sqlite"), "--no-record"], cwd: dir.path)
        #expect(c2 == 2)
        #expect(e2.contains("shard 50/50 has nothing to run"), "\(e2)")
    }
}
