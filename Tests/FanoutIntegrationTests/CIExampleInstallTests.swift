import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing
import Yams

/// The install steps of the CI examples, run as written on this machine: GitHub Actions' `install-fanout` step and
/// GitLab's `before_script` (CIExampleTests runs the rest of each pipeline with the fanout under test on PATH).
/// Each clones a fresh repository holding HEAD (standing for `FANOUT_GIT`, checked out at `FANOUT_REF`), runs apt-get
/// as written (Debian's packages are reachable here; already installed, it changes nothing), builds and installs
/// fanout, and the installed `fanout --version` must answer from where the next step finds it.
///
/// The liberties, each as small as it can be: `install.sh` gets `--debug` (as in InstallAsUserTests: a release build
/// takes far longer here); GitHub's runner has `sudo`, this machine runs the tests as root without it, so `sudo` is a
/// shim that runs its command; GitLab's job runs in a container, so its script runs in a mount namespace whose /tmp
/// and /usr/local are folders of the test (it writes both).
@Suite(.serialized, .timeLimit(.minutes(40)))
struct CIExampleInstallTests {
    static let rootOnly = "needs root: apt-get as written, and a mount namespace for GitLab's /tmp and /usr/local"

    func example(_ name: String) throws -> [String: Any] {
        let text = try String(contentsOfFile: repositoryRoot.appendingPathComponent("config/ci/" + name).path, encoding: .utf8)
        return try Yams.load(yaml: text) as? [String: Any] ?? [:]
    }

    /// A fresh repository holding HEAD's files in one commit, standing for the Fanout repository a pipeline clones
    /// (CI's own clone of this one may be shallow). Its path and commit.
    func source(in dir: TempDir) async throws -> (String, String) {
        let src = dir.file("fanout-source")
        let (code, out, err) = await sh("""
            set -e
            mkdir -p \(ShellQuote.quote(src))
            git -C \(ShellQuote.quote(repositoryRoot.path)) archive --format=tar HEAD | tar -xf - -C \(ShellQuote.quote(src))
            cd \(ShellQuote.quote(src))
            git init -q
            git add -A
            git -c user.name=test -c user.email=test@localhost commit -q -m HEAD
            git rev-parse HEAD
            """)
        try #require(code == 0, "a repository of HEAD: \(out)\(err)")
        return (src, out.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// `text` with `--debug` given to install.sh: the one liberty with the build.
    func withDebugBuild(_ text: String) throws -> String {
        let debug = text.replacingOccurrences(of: "/scripts/install.sh\" ", with: "/scripts/install.sh\" --debug ")
            .replacingOccurrences(of: "/scripts/install.sh ", with: "/scripts/install.sh --debug ")
        try #require(debug != text, "the install line names scripts/install.sh: \(text)")
        return debug
    }

    /// Runs `installed --version`; what it printed.
    func version(of installed: String, path: String = "/usr/bin:/bin") async -> String {
        let (_, out, err) = await sh("PATH=\(ShellQuote.quote(path)) \(installed) --version")
        return (out + err).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(.enabled(if: getuid() == 0, Comment(rawValue: rootOnly)))
    func gitHubActionsInstallStepInstallsAFanoutTheNextStepFinds() async throws {
        let workflow = try example("github-actions.yml")
        let jobs = try #require(workflow["jobs"] as? [String: Any])
        // Both jobs install Fanout with the same step: running it once covers both.
        let steps = try ["shard", "merge"].map { name -> String in
            let job = try #require(jobs[name] as? [String: Any])
            let step = (job["steps"] as? [[String: Any]] ?? []).first { $0["id"] as? String == "install-fanout" }
            return try #require(step?["run"] as? String, "\(name) has an install-fanout step")
        }
        #expect(steps[0] == steps[1], "the shard and merge jobs install Fanout alike")

        let dir = try TempDir()
        let (src, ref) = try await source(in: dir)
        var runner = try WorkflowRunner(file: repositoryRoot.appendingPathComponent("config/ci/github-actions.yml").path,
                                        repository: dir.path, root: dir.file("gh"), provisioningSteps: [], binPath: "")
        runner.variables = ["FANOUT_GIT": src, "FANOUT_REF": ref]
        let script = try withDebugBuild(try runner.expand(steps[0], context: [:]))
        let home = dir.file("home"), temp = dir.file("runner-temp"), shims = dir.file("shims")
        let githubPath = dir.file("github-path")
        for d in [home, temp, shims] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        try Data().write(to: URL(fileURLWithPath: githubPath))
        try "#!/bin/sh\n# GitHub's runners have sudo; this machine runs the tests as root.\nexec \"$@\"\n"
            .write(toFile: shims + "/sudo", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: shims + "/sudo")
        try script.write(toFile: dir.file("install-fanout.sh"), atomically: true, encoding: .utf8)

        let env = "env -i HOME=\(ShellQuote.quote(home)) RUNNER_TEMP=\(ShellQuote.quote(temp)) "
            + "GITHUB_PATH=\(ShellQuote.quote(githubPath)) LANG=C.UTF-8 "
            + "PATH=\(ShellQuote.quote(shims)):/opt/swift/usr/bin:/usr/local/bin:/usr/bin:/bin"
        let (code, out, err) = await sh("cd \(ShellQuote.quote(dir.path)) && \(env) bash --noprofile --norc -eo pipefail install-fanout.sh",
                                        timeout: 30 * 60)
        #expect(code == 0, "the install step: exit \(code)\n\((out + err).suffix(4000))")

        // The next step's PATH: what the step appended to $GITHUB_PATH, then the runner's.
        let added = try String(contentsOfFile: githubPath, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(added == [home + "/.local/bin"], "the step put $HOME/.local/bin on the next steps' PATH: \(added)")
        let nextPath = (added + ["/usr/bin", "/bin"]).joined(separator: ":")
        let (_, found, _) = await sh("PATH=\(ShellQuote.quote(nextPath)) command -v fanout")
        #expect(found.trimmingCharacters(in: .whitespacesAndNewlines) == home + "/.local/bin/fanout")
        #expect(await version(of: "fanout", path: nextPath) == Coordinator.version)
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/man/man1/fanout.1"), "the man page too")
    }

    @Test(.enabled(if: getuid() == 0, Comment(rawValue: rootOnly)))
    func gitLabBeforeScriptInstallsFanoutIntoUsrLocal() async throws {
        let pipeline = try example("gitlab-ci.yml")
        let base = try #require(pipeline[".fanout"] as? [String: Any])
        let lines = try #require(base["before_script"] as? [String])
        for job in ["tests", "merge"] {
            let extends = (pipeline[job] as? [String: Any])?["extends"] as? String
            #expect(extends == ".fanout", "\(job) runs the install lines (extends .fanout)")
        }
        let variables = (pipeline["variables"] as? [String: Any] ?? [:]).mapValues { "\($0)" }

        let dir = try TempDir()
        let (src, ref) = try await source(in: dir)
        let tmp = dir.file("container-tmp"), usrLocal = dir.file("container-usr-local")
        for d in [tmp, usrLocal] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        // The repository is reached from inside the namespace, where /tmp is another folder: give it a path there.
        let (moved, mo, me) = await sh("mv \(ShellQuote.quote(src)) \(ShellQuote.quote(tmp + "/fanout-source"))")
        try #require(moved == 0, "\(mo)\(me)")
        let script = try withDebugBuild(lines.joined(separator: "\n"))
        var env = variables
        env["FANOUT_GIT"] = "/tmp/fanout-source"
        env["FANOUT_REF"] = ref
        env["HOME"] = "/tmp/root"
        env["LANG"] = "C.UTF-8"
        env["PATH"] = "/opt/swift/usr/bin:/usr/local/bin:/usr/bin:/bin"
        let assignments = env.sorted { $0.key < $1.key }.map { "\($0.key)=\(ShellQuote.quote($0.value))" }.joined(separator: " ")
        // /usr/local first: the test's folders are under /tmp, which the second mount covers.
        let container = """
            set -e
            mount --bind \(ShellQuote.quote(usrLocal)) /usr/local
            mount --bind \(ShellQuote.quote(tmp)) /tmp
            mkdir -p /tmp/root
            cd /tmp
            exec env -i \(assignments) bash --noprofile --norc -eo pipefail -c \(ShellQuote.quote(script))
            """
        let (code, out, err) = await sh("unshare --mount --propagation private sh -c \(ShellQuote.quote(container))", timeout: 30 * 60)
        #expect(code == 0, "GitLab's before_script: exit \(code)\n\((out + err).suffix(4000))")
        // What the container's /usr/local/bin/fanout is, seen from outside it; the job's scripts call `fanout` by name.
        #expect(await version(of: ShellQuote.quote(usrLocal + "/bin/fanout")) == Coordinator.version)
        #expect(FileManager.default.fileExists(atPath: tmp + "/fanout/.git"), "it cloned into /tmp/fanout as written")
        let (_, head, _) = await sh("git -C \(ShellQuote.quote(tmp + "/fanout")) rev-parse HEAD")
        #expect(head.trimmingCharacters(in: .whitespacesAndNewlines) == ref, "checked out at FANOUT_REF")
    }
}
