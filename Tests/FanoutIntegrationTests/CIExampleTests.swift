import FanoutCore
import Foundation
import Testing
import Yams

/// config/ci/github-actions.yml, run as GitHub would run it (WorkflowRunner: its `run:` steps as written, N shard jobs
/// in sequence on this machine, artifacts and the history cache in local folders), against the demo suite.
@Suite(.serialized, .timeLimit(.minutes(10))) struct CIExampleTests {
    /// "destination Module.Class/test outcome" for every result of a report.json.
    func outcomes(_ path: String) throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let report = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        return ((report["results"] as? [[String: Any]]) ?? []).compactMap { r in
            guard let id = r["id"] as? [String: Any], let suite = id["suite"] as? [String: Any],
                  let module = suite["module"] as? String, let name = suite["name"] as? String,
                  let test = id["name"] as? String, let destination = r["destination"] as? String,
                  let outcome = r["outcome"] as? String else { return nil }
            return "\(destination) \(module).\(name)/\(test) \(outcome)"
        }.sorted()
    }

    /// The estimate sources of a report's classes.
    func estimateSources(_ path: String) throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let report = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        return ((report["classes"] as? [[String: Any]]) ?? []).compactMap { $0["estimateSource"] as? String }
    }

    /// A repository whose fanout.yml uses the built demo suite (the example's `fanout run` then skips the build).
    func repository(in dir: TempDir, bundle: String, environment: String = "") throws -> String {
        let repo = dir.file("repo")
        try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        try """
        bundle: \(bundle)
        slots: 2
        skip: ["Performance", "SessionTimeout", "Straggler", "Flaky", "RetryableFetch"]
        destination:
          name: local
          environment: { DEMO_LATENCY_SCALE: "0.05"\(environment) }

        """.write(toFile: repo + "/fanout.yml", atomically: true, encoding: .utf8)
        return repo
    }

    func runner(_ dir: TempDir, repo: String) throws -> WorkflowRunner {
        try WorkflowRunner(file: repositoryRoot.appendingPathComponent("config/ci/github-actions.yml").path,
                           repository: repo, root: dir.file("gh"), provisioningSteps: ["install-fanout"],
                           binPath: URL(fileURLWithPath: try fanoutExecutable()).deletingLastPathComponent().path)
    }

    func log(_ jobs: [WorkflowRunner.JobRun]) -> String {
        jobs.flatMap(\.steps).map { "[\($0.job) · \($0.id) → \($0.code)]\n\($0.output)" }.joined(separator: "\n")
    }

    @Test func theGitHubActionsExampleSplitsRunsMergesAndCarriesTheHistoryToTheNextPipeline() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let repo = try repository(in: dir, bundle: bundle)
        // The reference: one unsharded run of the same repository.
        let (rc, ro, re) = try await runCLI(["run", "--no-record", "--history", dir.file("ref.sqlite"),
                                             "--report-dir", dir.file("ref")], cwd: repo)
        #expect(rc == 0, "\(ro)\(re)")
        let reference = try outcomes(dir.file("ref/report.json"))
        #expect(reference.count > 20)

        var gh = try runner(dir, repo: repo)
        gh.runID = "101"
        let first = try await gh.run()
        #expect(first.map(\.name) == ["shard (1)", "shard (2)", "shard (3)", "shard (4)", "merge"], "\(log(first))")
        #expect(first.allSatisfy { $0.passed }, "\(log(first))")
        let merge = try #require(first.last)
        let merged = try outcomes(merge.workspace + "/merged/report.json")
        #expect(merged == reference, "the merged report holds the unsharded run's tests, each once, with the same outcomes")
        for file in ["junit.xml", "summary.md", "report.html"] {
            #expect(FileManager.default.fileExists(atPath: merge.workspace + "/merged/" + file), "\(file)")
        }
        let summary = try String(contentsOfFile: merge.workspace + ".summary.md", encoding: .utf8)
        #expect(summary.contains("passed"), "the merged summary reached the job summary: \(summary)")
        // The first pipeline had no history: every shard planned from test counts.
        for shard in 1...4 {
            let sources = try estimateSources(dir.file("gh/artifacts/fanout-shard-\(shard)/report.json"))
            #expect(!sources.isEmpty && sources.allSatisfy { !$0.hasPrefix("history") }, "shard \(shard): \(sources)")
        }
        let saved = dir.file("gh/cache/fanout-history-main-101/fanout-history.json")
        #expect(FileManager.default.fileExists(atPath: saved), "the merge job saved the history for the next pipeline")

        // The next pipeline on the branch restores it: every shard plans from the same measured times.
        gh.runID = "102"
        gh.refName = "feature"
        let second = try await gh.run()
        #expect(second.allSatisfy { $0.passed }, "\(log(second))")
        let mergedAgain = try outcomes(try #require(second.last).workspace + "/merged/report.json")
        #expect(mergedAgain == reference)
        for shard in 1...4 {
            let sources = try estimateSources(dir.file("gh/artifacts/fanout-shard-\(shard)/report.json"))
            #expect(!sources.isEmpty && sources.allSatisfy { $0.hasPrefix("history") }, "shard \(shard): \(sources)")
        }
        // The saved history holds each shard run once: 4 of the first pipeline (imported by all four shards of the
        // second and exported again by each) and 4 of the second.
        let (ic, io, ie) = try await runCLI(["history", "import", dir.file("gh/cache/fanout-history-feature-102/fanout-history.json"),
                                             "--history", dir.file("check.sqlite")])
        #expect(ic == 0, "\(io)\(ie)")
        #expect(io.contains("imported 8 runs"), "\(io)")
    }

    @Test func aFailingTestFailsItsShardAndTheMergeButTheReportsAndHistoryStillTravel() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let repo = try repository(in: dir, bundle: bundle, environment: ", DEMO_ST_FAIL: \"1\"")
        var gh = try runner(dir, repo: repo)
        gh.runID = "7"
        let jobs = try await gh.run()
        let failedShards = jobs.filter { $0.name.hasPrefix("shard") && !$0.passed }
        #expect(failedShards.count == 1, "exactly the shard that ran the failing test fails: \(log(jobs))")
        for job in failedShards {
            #expect(job.steps.map(\.id) == ["checkout", "restore-history", "import-history", "test", "export-history", "upload"],
                    "after the failing step, only the `if: always()` steps ran")
            #expect(job.steps.first { $0.id == "test" }?.code == 1)
        }
        let merge = try #require(jobs.last)
        #expect(merge.name == "merge" && !merge.passed, "the merge job ran anyway and failed: \(log(jobs))")
        #expect(merge.steps.first { $0.id == "merge" }?.code == 1, "merged exit code 1: a test failed")
        let failed = try outcomes(merge.workspace + "/merged/report.json").filter { $0.hasSuffix(" failed") }
        #expect(failed.count == 1, "\(failed)")
        #expect(FileManager.default.fileExists(atPath: dir.file("gh/cache/fanout-history-main-7/fanout-history.json")),
                "the timings are saved even when a test failed")
    }

    // MARK: GitLab CI and Buildkite: their job scripts, as written, on this machine

    /// The unsharded reference run of `repo`.
    func reference(_ dir: TempDir, repo: String) async throws -> [String] {
        let (code, out, err) = try await runCLI(["run", "--no-record", "--history", dir.file("ref.sqlite"),
                                                 "--report-dir", dir.file("ref")], cwd: repo)
        #expect(code == 0, "\(out)\(err)")
        return try outcomes(dir.file("ref/report.json"))
    }

    func example(_ name: String) throws -> [String: Any] {
        let text = try String(contentsOfFile: repositoryRoot.appendingPathComponent("config/ci/" + name).path, encoding: .utf8)
        return try Yams.load(yaml: text) as? [String: Any] ?? [:]
    }

    func strings(_ value: Any?) -> [String: String] {
        (value as? [String: Any] ?? [:]).mapValues { "\($0)" }
    }

    /// Copies every file under `from` into `to`, keeping paths and what `to` already holds (as CI artifacts merge).
    func overlay(_ from: String, onto to: String) throws {
        let fm = FileManager.default
        guard let files = fm.enumerator(atPath: from) else { return }
        for case let file as String in files {
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: from + "/" + file, isDirectory: &isDir), !isDir.boolValue else { continue }
            let target = to + "/" + file
            try fm.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try? fm.removeItem(atPath: target)
            try fm.copyItem(atPath: from + "/" + file, toPath: target)
        }
    }

    func freshWorkspace(_ repo: String, _ path: String) throws -> String {
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: repo, toPath: path)
        return path
    }

    var pathWithFanout: String {
        get throws {
            URL(fileURLWithPath: try fanoutExecutable()).deletingLastPathComponent().path + ":"
                + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        }
    }

    @Test func theGitLabExampleRunsItsParallelJobsFromCINodeIndexAndMerges() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let repo = try repository(in: dir, bundle: bundle)
        let expected = try await reference(dir, repo: repo)
        let pipeline = try example("gitlab-ci.yml")
        let tests = try #require(pipeline["tests"] as? [String: Any])
        let merge = try #require(pipeline["merge"] as? [String: Any])
        let shards = try #require(tests["parallel"] as? Int)
        #expect(shards == 4)
        let lines = { (job: [String: Any], key: String) in ((job[key] as? [Any]) ?? []).map { "\($0)" }.joined(separator: "\n") }
        let cacheFile = try #require(((tests["cache"] as? [String: Any])?["paths"] as? [String])?.first)
        var variables = strings(pipeline["variables"])
        variables["PATH"] = try pathWithFanout
        variables["CI_COMMIT_REF_SLUG"] = "main"

        for run in 1...2 {
            let artifacts = dir.file("gl/artifacts-\(run)")
            for index in 1...shards {
                let ws = try freshWorkspace(repo, dir.file("gl/work-\(run)-\(index)"))
                // cache: pull (the key of the branch; the example's fallback is main's, the same here)
                let cached = dir.file("gl/cache/fanout-history-main/" + cacheFile)
                if FileManager.default.fileExists(atPath: cached) { try FileManager.default.copyItem(atPath: cached, toPath: ws + "/" + cacheFile) }
                var env = variables
                env["CI_NODE_INDEX"] = "\(index)"
                env["CI_NODE_TOTAL"] = "\(shards)"
                let script = try await runBash(lines(tests, "script"), in: ws, environment: env, scriptFile: ws + ".script.sh")
                #expect(script.code == 0, "pipeline \(run), job \(index)/\(shards): \(script.output)")
                let after = try await runBash(lines(tests, "after_script"), in: ws, environment: env, scriptFile: ws + ".after.sh")
                #expect(after.code == 0, "\(after.output)")
                try overlay(ws + "/reports", onto: artifacts + "/reports") // artifacts: paths [reports/], when: always
                let sources = try estimateSources(ws + "/reports/shard-\(index)/report.json")
                #expect(!sources.isEmpty && sources.allSatisfy { $0.hasPrefix("history") == (run == 2) },
                        "pipeline \(run) plans from \(run == 1 ? "test counts" : "the cached history"): \(sources)")
            }
            let ws = try freshWorkspace(repo, dir.file("gl/merge-\(run)"))
            try overlay(artifacts, onto: ws)
            let script = try await runBash(lines(merge, "script"), in: ws, environment: variables, scriptFile: ws + ".script.sh")
            #expect(script.code == 0, "\(script.output)")
            let after = try await runBash(lines(merge, "after_script"), in: ws, environment: variables, scriptFile: ws + ".after.sh")
            #expect(after.code == 0, "\(after.output)")
            let merged = try outcomes(ws + "/merged/report.json")
            #expect(merged == expected, "pipeline \(run): the merged report equals the unsharded run")
            // cache: push
            try FileManager.default.createDirectory(atPath: dir.file("gl/cache/fanout-history-main"), withIntermediateDirectories: true)
            try? FileManager.default.removeItem(atPath: dir.file("gl/cache/fanout-history-main/" + cacheFile))
            try FileManager.default.copyItem(atPath: ws + "/" + cacheFile, toPath: dir.file("gl/cache/fanout-history-main/" + cacheFile))
        }
    }

    @Test func theBuildkiteExampleRunsItsParallelJobsFromBuildkiteParallelJobAndMerges() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let repo = try repository(in: dir, bundle: bundle)
        let expected = try await reference(dir, repo: repo)
        let pipeline = try example("buildkite.yml")
        let steps = (pipeline["steps"] as? [Any] ?? []).compactMap { $0 as? [String: Any] }
        let tests = try #require(steps.first { $0["key"] as? String == "tests" })
        let merge = try #require(steps.first { $0["key"] as? String == "merge" })
        let shards = try #require(tests["parallelism"] as? Int)
        #expect(shards == 4)

        // Stand-ins for the two commands the example calls besides fanout: buildkite-agent (artifacts, annotate) and
        // `aws s3 cp` (where the history is kept), on local folders.
        let bin = dir.file("bk/bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try """
        #!/bin/sh
        set -e
        case "$1 $2" in
          "artifact upload") prefix=${3%%\\**}
            find "$prefix" -type f | while read -r f; do mkdir -p "$FAKE_BK/artifacts/$(dirname "$f")"; cp "$f" "$FAKE_BK/artifacts/$f"; done ;;
          "artifact download") prefix=${3%%\\**}
            (cd "$FAKE_BK/artifacts" && find "$prefix" -type f) | while read -r f; do mkdir -p "$4/$(dirname "$f")"; cp "$FAKE_BK/artifacts/$f" "$4/$f"; done ;;
          "annotate "*) cat >> "$FAKE_BK/annotations.md" ;;
          *) echo "buildkite-agent stand-in: unknown command: $*" >&2; exit 2 ;;
        esac
        """.write(toFile: bin + "/buildkite-agent", atomically: true, encoding: .utf8)
        try """
        #!/bin/sh
        set -e
        [ "$1 $2" = "s3 cp" ] || { echo "aws stand-in: unknown command: $*" >&2; exit 2; }
        map() { case "$1" in s3://*) echo "$FAKE_BK/s3/${1#s3://}" ;; *) echo "$1" ;; esac; }
        src=$(map "$3"); dst=$(map "$4")
        [ -f "$src" ] || { echo "aws stand-in: $3 does not exist" >&2; exit 1; }
        mkdir -p "$(dirname "$dst")"; cp "$src" "$dst"
        """.write(toFile: bin + "/aws", atomically: true, encoding: .utf8)
        for tool in ["buildkite-agent", "aws"] {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/" + tool)
        }
        var env = strings(pipeline["env"])
        env["PATH"] = bin + ":" + (try pathWithFanout)
        env["FAKE_BK"] = dir.file("bk")

        for build in 1...2 {
            try? FileManager.default.removeItem(atPath: dir.file("bk/artifacts"))
            for job in 0..<shards {
                let ws = try freshWorkspace(repo, dir.file("bk/work-\(build)-\(job)"))
                var jobEnv = env
                jobEnv["BUILDKITE_PARALLEL_JOB"] = "\(job)"
                jobEnv["BUILDKITE_PARALLEL_JOB_COUNT"] = "\(shards)"
                let run = try await runBash("\(tests["command"] ?? "")", in: ws, environment: jobEnv, scriptFile: ws + ".sh")
                #expect(run.code == 0, "build \(build), job \(job): \(run.output)")
                let report = dir.file("bk/artifacts/reports/shard-\(job)/report.json")
                let shard = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
                #expect(shard?["shard"] as? [String: Int] == ["index": job + 1, "count": shards], "BUILDKITE_PARALLEL_JOB \(job) is shard \(job + 1)")
                let sources = try estimateSources(report)
                #expect(!sources.isEmpty && sources.allSatisfy { $0.hasPrefix("history") == (build == 2) }, "build \(build): \(sources)")
            }
            let ws = try freshWorkspace(repo, dir.file("bk/merge-\(build)"))
            let run = try await runBash("\(merge["command"] ?? "")", in: ws, environment: env, scriptFile: ws + ".sh")
            #expect(run.code == 0, "\(run.output)")
            let merged = try outcomes(dir.file("bk/artifacts/merged/report.json"))
            #expect(merged == expected, "build \(build): the merged report equals the unsharded run")
        }
        let annotations = try String(contentsOfFile: dir.file("bk/annotations.md"), encoding: .utf8)
        #expect(annotations.contains("passed"), "\(annotations)")
    }

    /// The Jenkinsfile's `sh` steps, in the order they appear, with Groovy's `${i}` and `${shards}` filled in.
    func jenkinsSteps(_ text: String, shard: Int, of shards: Int) -> [String] {
        // sh '''…''', sh '…' and sh "…": the three ways the file writes a shell step.
        let pattern = #/\bsh\s+(?:'{3}(?<block>[\s\S]*?)'{3}|'(?<single>[^']*)'|"(?<double>[^"]*)")/#
        return text.matches(of: pattern).map { match in
            let body = String(match.output.block ?? match.output.single ?? match.output.double ?? "")
            return body.replacingOccurrences(of: "${i}", with: "\(shard)").replacingOccurrences(of: "${shards}", with: "\(shards)")
        }
    }

    @Test func theJenkinsfilesShellStepsRunTheShardsAndTheMerge() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let repo = try repository(in: dir, bundle: bundle)
        let expected = try await reference(dir, repo: repo)
        let text = try String(contentsOfFile: repositoryRoot.appendingPathComponent("config/ci/Jenkinsfile").path, encoding: .utf8)
        let shards = try #require(text.firstMatch(of: #/def shards = (\d+)/#).flatMap { Int($0.output.1) })
        #expect(shards == 4)
        let steps = jenkinsSteps(text, shard: 1, of: shards)
        // In the file's order: the shard closure's three steps, the merge stage's, the merge stage's post step.
        #expect(steps.count == 5, "\(steps)")
        guard steps.count == 5 else { return }
        let env = ["PATH": try pathWithFanout]
        var archived: String?
        for build in 1...2 {
            let merge = try freshWorkspace(repo, dir.file("jk/merge-\(build)"))
            for i in 1...shards {
                let ws = try freshWorkspace(repo, dir.file("jk/work-\(build)-\(i)"))
                if let archived { try FileManager.default.copyItem(atPath: archived, toPath: ws + "/fanout-history.json") } // copyArtifacts
                let own = jenkinsSteps(text, shard: i, of: shards)
                for (n, step) in own.prefix(3).enumerated() {
                    let run = try await runBash(step, in: ws, environment: env, scriptFile: ws + ".\(n).sh")
                    #expect(run.code == 0, "build \(build), shard \(i), step \(n): \(run.output)")
                }
                let sources = try estimateSources(ws + "/reports/shard-\(i)/report.json")
                #expect(!sources.isEmpty && sources.allSatisfy { $0.hasPrefix("history") == (build == 2) }, "build \(build): \(sources)")
                try overlay(ws + "/reports/shard-\(i)", onto: merge + "/reports/shard-\(i)") // stash / unstash
            }
            for (n, step) in steps.suffix(2).enumerated() {
                let run = try await runBash(step, in: merge, environment: env, scriptFile: merge + ".\(n).sh")
                #expect(run.code == 0, "build \(build), merge step \(n): \(run.output)")
            }
            let merged = try outcomes(merge + "/merged/report.json")
            #expect(merged == expected, "build \(build): the merged report equals the unsharded run")
            archived = merge + "/fanout-history.json" // archiveArtifacts, read by the next build's copyArtifacts
        }
    }
}
