import FanoutCore

/// Where Fanout keeps things on an agent, and the shell lines that manage them. Every value that reaches the remote
/// shell goes through `ShellQuote`; every path stays inside the agent's work directory.
///
/// ```
/// <workdir>/bundles/<sha256>/            an installed product (complete once `.complete` exists)
/// <workdir>/bundles/.incoming/            uploads in progress (never used until renamed into place)
/// <workdir>/runs/<run-id>/pids/<unit>     the process group of each running unit
/// ```
public struct RemoteLayout: Sendable, Hashable {
    public let workdir: String
    public let runID: String

    /// Validates what the paths are made of: an absolute workdir without `..`, and a run id of safe characters.
    public init(workdir: String, runID: String) throws(AgentError) {
        var dir = workdir
        while dir.count > 1, dir.hasSuffix("/") { dir.removeLast() }
        guard dir.hasPrefix("/"), !dir.split(separator: "/").contains(".."), dir != "/" else {
            throw AgentError.invalidConfig("the agent workdir must be an absolute path without '..' and not / (got '\(workdir)')")
        }
        guard !runID.isEmpty, runID.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw AgentError.invalidConfig("invalid run id '\(runID)'")
        }
        self.workdir = dir
        self.runID = runID
    }

    public var bundles: String { workdir + "/bundles" }
    public var incoming: String { bundles + "/.incoming" }
    public var runDir: String { workdir + "/runs/" + runID }
    public var pids: String { runDir + "/pids" }

    public func bundle(_ sha: String) -> String { bundles + "/" + sha }

    /// Creates the run's folders.
    public var prepareRun: String {
        "mkdir -p \(q(pids)) \(q(incoming))"
    }

    /// Runs a unit and records its process group so another channel can kill it (libssh2 1.10 cannot send signals
    /// over a channel). sshd starts every non-pty session with setsid(), so the remote shell already leads a
    /// session and process group of its own: `$$` is the group, and `exec` keeps the test binary's exit status and
    /// signal. (`setsid(1)` would fork here, since the shell is already a group leader, and lose them.)
    public func unitCommand(_ command: Command, unit: Int, workingDirectory: String) -> String {
        let env = command.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let program = (env.isEmpty ? [] : ["env"] + env) + [command.executable] + command.arguments
        return "cd \(q(workingDirectory)) && echo $$ > \(q(pidFile(unit))) && exec \(ShellQuote.join(program))"
    }

    public func pidFile(_ unit: Int) -> String { pids + "/" + String(unit) }

    /// Kills the process group of one unit (time-out, cancel). `kill -KILL -PGID` without `--`: dash's builtin kill
    /// (the usual /bin/sh) rejects `--`.
    public func killUnit(_ unit: Int) -> String {
        "p=$(cat \(q(pidFile(unit))) 2>/dev/null) && kill -KILL -\"$p\" 2>/dev/null; rm -f \(q(pidFile(unit))); true"
    }

    /// Kills every unit group of this run that is still recorded.
    public var killAll: String {
        "for f in \(q(pids))/*; do [ -f \"$f\" ] && kill -KILL -\"$(cat \"$f\")\" 2>/dev/null; rm -f \"$f\"; done; true"
    }

    /// Kills what is left and removes the run's folder.
    public var cleanup: String {
        killAll + "; rm -rf \(q(runDir))"
    }

    /// Prints `yes` when the bundle is installed and complete (and marks it used, for eviction by age).
    public func bundleReady(_ sha: String) -> String {
        "if [ -f \(q(bundle(sha) + "/.complete")) ]; then touch \(q(bundle(sha) + "/.complete")); echo yes; else echo no; fi"
    }

    /// Verifies an uploaded archive, unpacks it beside its final place and renames it into place in one step, so a
    /// half-finished upload is never used. A concurrent install of the same bundle wins harmlessly.
    public func install(sha: String, archive: String) -> String {
        let staging = incoming + "/" + sha + ".\(runID)"
        let final = bundle(sha)
        return [
            "set -e",
            "actual=$(sha256sum \(q(archive)) | cut -d' ' -f1)",
            "if [ \"$actual\" != \(q(sha)) ]; then echo \"checksum mismatch: got $actual\" >&2; rm -f \(q(archive)); exit 65; fi",
            "rm -rf \(q(staging)) && mkdir -p \(q(staging))",
            "tar -xf \(q(archive)) -C \(q(staging))",
            "touch \(q(staging + "/.complete"))",
            "rm -f \(q(archive))",
            "if [ -f \(q(final + "/.complete")) ]; then rm -rf \(q(staging)); else rm -rf \(q(final)); mv \(q(staging)) \(q(final)); fi",
        ].joined(separator: "\n")
    }

    /// Keeps the `keep` most recently used bundles (and always `current`), removing the others.
    public func evict(keep: Int, current: String) -> String {
        "cd \(q(bundles)) && ls -1t */.complete 2>/dev/null | cut -d/ -f1 | tail -n +\(max(1, keep) + 1) | "
            + "while read -r b; do [ \"$b\" != \(q(current)) ] && rm -rf -- \"$b\"; done; true"
    }

    private func q(_ s: String) -> String { ShellQuote.quote(s) }
}

/// Problems with an agent, each saying what to fix.
public enum AgentError: Error, Sendable, CustomStringConvertible {
    case invalidConfig(String)
    case unusable(agent: String, reason: String)
    case deployFailed(agent: String, reason: String)

    public var description: String {
        switch self {
        case .invalidConfig(let why): why
        case .unusable(let agent, let reason): "agent \(agent) is not usable: \(reason)"
        case .deployFailed(let agent, let reason): "deploying the test product to \(agent) failed: \(reason)"
        }
    }
}
