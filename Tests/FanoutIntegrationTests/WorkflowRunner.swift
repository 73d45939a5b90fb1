import FanoutAgents
import FanoutCore
import Foundation
import Yams

/// A small local stand-in for GitHub Actions, enough to run config/ci/github-actions.yml on one machine: its jobs in
/// `needs` order, every matrix combination in sequence, each `run:` step with bash exactly as written (after the
/// `${{ … }}` expressions are filled in), `if: always()`, and the four actions the example uses (checkout,
/// cache restore/save, upload/download-artifact) done with local folders.
///
/// It refuses what it does not know (another action, an unknown expression, a `run:` step it was not told to skip),
/// so the example cannot grow a step the tests do not run.
/// Sendable as checked by hand: nothing of it changes once made (the parsed workflow is only read), so the jobs of a
/// matrix may run at once.
struct WorkflowRunner: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { var description: String }

    /// One step as it ran.
    struct StepRun {
        var job: String
        var id: String
        var code: Int32
        var output: String
    }

    struct JobRun {
        var name: String
        var passed: Bool
        var workspace: String
        var steps: [StepRun]
    }

    let workflow: [String: Any]
    /// A folder copied into each job's fresh workspace by `actions/checkout`.
    let repository: String
    /// Where artifacts, caches and workspaces live.
    let root: String
    /// `run:` steps (by id) not run here because they provision the machine (apt, installing fanout): the test puts
    /// the fanout under test on PATH instead. CIExampleInstallTests runs those steps, as written, on their own.
    let provisioningSteps: Set<String>
    /// `${{ vars.NAME }}`, `${{ secrets.NAME }}`, `${{ github.run_id }}`, `${{ github.ref_name }}`.
    var variables: [String: String] = [:]
    var secrets: [String: String] = [:]
    /// The jobs of a matrix run at once (as on GitHub, each in its own workspace), not one after the other.
    var concurrentMatrix = false
    var runID = "1"
    var refName = "main"
    /// Prepended to PATH in every step.
    var binPath: String

    init(file: String, repository: String, root: String, provisioningSteps: Set<String>, binPath: String) throws {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        guard let parsed = try Yams.load(yaml: text) as? [String: Any] else { throw Failure(description: "\(file) is not a mapping") }
        workflow = parsed
        self.repository = repository
        self.root = root
        self.provisioningSteps = provisioningSteps
        self.binPath = binPath
    }

    /// Runs every job; returns them in the order they ran.
    func run() async throws -> [JobRun] {
        guard let jobs = workflow["jobs"] as? [String: Any] else { throw Failure(description: "no jobs") }
        let topEnv = try stringMap(workflow["env"], context: [:])
        var done: [String: Bool] = [:]
        var runs: [JobRun] = []
        while done.count < jobs.count {
            guard let (name, job) = jobs.sorted(by: { $0.key < $1.key }).first(where: { name, job in
                done[name] == nil && needs(job).allSatisfy { done[$0] != nil }
            }).map({ ($0.key, $0.value as? [String: Any] ?? [:]) }) else {
                throw Failure(description: "jobs whose needs never finish")
            }
            let needed = needs(job)
            let upstreamPassed = needed.allSatisfy { done[$0] == true }
            let condition = job["if"] as? String
            guard upstreamPassed || condition == "always()" else {
                done[name] = false
                continue
            }
            var passed = true
            let combinations = try combinations(job)
            if concurrentMatrix {
                nonisolated(unsafe) let job = job // read only, like the workflow it comes from
                let results = try await withThrowingTaskGroup(of: (Int, JobRun).self) { group in
                    for (n, matrix) in combinations.enumerated() {
                        group.addTask { (n, try await self.runJob(name, job, matrix: matrix, topEnv: topEnv)) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }.sorted { $0.0 < $1.0 }.map(\.1)
                }
                for result in results {
                    passed = passed && result.passed
                    runs.append(result)
                }
            } else {
                for matrix in combinations {
                    let result = try await runJob(name, job, matrix: matrix, topEnv: topEnv)
                    passed = passed && result.passed
                    runs.append(result)
                }
            }
            done[name] = passed
        }
        return runs
    }

    private func needs(_ job: Any) -> [String] {
        let value = (job as? [String: Any])?["needs"]
        if let one = value as? String { return [one] }
        return value as? [String] ?? []
    }

    private func combinations(_ job: [String: Any]) throws -> [[String: String]] {
        guard let strategy = job["strategy"] as? [String: Any], let matrix = strategy["matrix"] as? [String: Any] else {
            return [[:]]
        }
        guard matrix.count == 1, let (key, values) = matrix.first, let list = values as? [Any] else {
            throw Failure(description: "only a one-dimensional matrix is supported here")
        }
        return list.map { [key: "\($0)"] }
    }

    private func runJob(_ name: String, _ job: [String: Any], matrix: [String: String], topEnv: [String: String])
        async throws -> JobRun
    {
        let label = matrix.isEmpty ? name : "\(name) (\(matrix.values.sorted().joined(separator: ",")))"
        let workspace = root + "/work/" + label.replacingOccurrences(of: " ", with: "_")
        let temp = workspace + ".tmp"
        try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: true)
        let summary = workspace + ".summary.md"
        try Data().write(to: URL(fileURLWithPath: summary))
        var context = matrix.reduce(into: [String: String]()) { $0["matrix.\($1.key)"] = $1.value }
        for (k, v) in topEnv { context["env.\(k)"] = v }
        var jobEnv = topEnv
        for (k, v) in try stringMap(job["env"], context: context) { jobEnv[k] = v; context["env.\(k)"] = v }

        var passed = true
        var steps: [StepRun] = []
        for case let step as [String: Any] in job["steps"] as? [Any] ?? [] {
            let id = step["id"] as? String ?? "?"
            let always = (step["if"] as? String) == "always()"
            guard passed || always else { continue }
            var code: Int32 = 0
            var output = ""
            if let uses = step["uses"] as? String {
                let with = try stringMap(step["with"], context: context)
                code = try act(uses, with: with, workspace: workspace) ? 0 : 1
            } else if let script = step["run"] as? String {
                if provisioningSteps.contains(id) { continue }
                var env = jobEnv
                for (k, v) in try stringMap(step["env"], context: context) { env[k] = v }
                env["PATH"] = binPath + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
                env["GITHUB_ACTIONS"] = "true"
                env["GITHUB_RUN_ID"] = runID
                env["GITHUB_REPOSITORY"] = "example/app"
                env["GITHUB_WORKSPACE"] = workspace
                env["GITHUB_STEP_SUMMARY"] = summary
                env["RUNNER_TEMP"] = temp
                (code, output) = try await runBash(try expand(script, context: context), in: workspace,
                                                   environment: env, scriptFile: temp + "/step-\(id).sh")
            } else {
                throw Failure(description: "step \(id) of \(name) has neither run nor uses")
            }
            steps.append(StepRun(job: label, id: id, code: code, output: output))
            if code != 0 { passed = false }
        }
        return JobRun(name: label, passed: passed, workspace: workspace, steps: steps)
    }

    /// The actions the example uses, on local folders.
    private func act(_ uses: String, with: [String: String], workspace: String) throws -> Bool {
        let fm = FileManager.default
        switch uses {
        case "actions/checkout@v4":
            try? fm.removeItem(atPath: workspace)
            try fm.copyItem(atPath: repository, toPath: workspace)
        case "actions/cache/restore@v4":
            let caches = root + "/cache"
            let keys = [with["key"] ?? ""] + (with["restore-keys"] ?? "").split(separator: "\n").map(String.init)
            let stored = ((try? fm.contentsOfDirectory(atPath: caches)) ?? []).sorted()
            // An exact key first, then the newest entry starting with each restore key in turn (as GitHub does).
            for (n, key) in keys.enumerated() where !key.isEmpty {
                let hit = n == 0 ? stored.first { $0 == key } : stored.last { $0.hasPrefix(key) }
                if let hit, let path = with["path"] {
                    try copyReplacing(caches + "/" + hit + "/" + path, workspace + "/" + path)
                    return true
                }
            }
        case "actions/cache/save@v4":
            guard let key = with["key"], let path = with["path"] else { throw Failure(description: "cache/save needs key and path") }
            let entry = root + "/cache/" + key
            // GitHub never overwrites a key, and a missing path is a warning, not a failure.
            guard !fm.fileExists(atPath: entry), fm.fileExists(atPath: workspace + "/" + path) else { return true }
            try fm.createDirectory(atPath: entry, withIntermediateDirectories: true)
            try copyReplacing(workspace + "/" + path, entry + "/" + path)
        case "actions/upload-artifact@v4":
            guard let name = with["name"], let path = with["path"] else { throw Failure(description: "upload-artifact needs name and path") }
            guard fm.fileExists(atPath: workspace + "/" + path) else { return true } // if-no-files-found: warn
            try copyReplacing(workspace + "/" + path, root + "/artifacts/" + name)
        case "actions/download-artifact@v4":
            guard let pattern = with["pattern"], let path = with["path"] else { throw Failure(description: "download-artifact needs pattern and path") }
            let prefix = pattern.hasSuffix("*") ? String(pattern.dropLast()) : pattern
            for name in ((try? fm.contentsOfDirectory(atPath: root + "/artifacts")) ?? []) where name.hasPrefix(prefix) {
                try copyReplacing(root + "/artifacts/" + name, workspace + "/" + path + "/" + name)
            }
        default:
            throw Failure(description: "the local runner does not know the action \(uses)")
        }
        return true
    }

    private func copyReplacing(_ from: String, _ to: String) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: (to as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try? fm.removeItem(atPath: to)
        try fm.copyItem(atPath: from, toPath: to)
    }

    private func stringMap(_ value: Any?, context: [String: String]) throws -> [String: String] {
        guard let map = value as? [String: Any] else { return [:] }
        var out: [String: String] = [:]
        for (k, v) in map { out[k] = try expand("\(v)", context: context) }
        return out
    }

    /// Fills in `${{ name }}`; an expression it does not know is an error (the example must stay runnable here).
    func expand(_ text: String, context: [String: String]) throws -> String {
        var out = ""
        var rest = Substring(text)
        while let open = rest.range(of: "${{") {
            out += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else { throw Failure(description: "unclosed ${{ in \(text)") }
            let name = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            var known = context
            known["github.run_id"] = runID
            known["github.ref_name"] = refName
            for (k, v) in variables { known["vars.\(k)"] = v }
            for (k, v) in secrets { known["secrets.\(k)"] = v }
            guard let value = known[name] else { throw Failure(description: "the local runner cannot fill in ${{ \(name) }}") }
            out += value
            rest = rest[close.upperBound...]
        }
        return out + rest
    }
}

/// Runs a script with bash as CI systems do (`bash --noprofile --norc -eo pipefail FILE`: the first failing command
/// ends it), in `folder`, with `environment` added; at most 300 s.
func runBash(_ script: String, in folder: String, environment: [String: String], scriptFile: String) async throws
    -> (code: Int32, output: String)
{
    try script.write(toFile: scriptFile, atomically: true, encoding: .utf8)
    let command = Command(executable: "/bin/sh", arguments: [
        "-c", "cd \(ShellQuote.quote(folder)) && exec bash --noprofile --norc -eo pipefail \(ShellQuote.quote(scriptFile))",
    ], environment: environment)
    let (ending, out, err) = await LocalTransport(slots: 1).capture(command, timeout: 300)
    let code: Int32 = if case .exited(let c) = ending { c } else { -1 }
    return (code, String(decoding: out + err, as: UTF8.self))
}
