import FanoutCore

/// Where Fanout keeps things on an agent, and the shell lines that manage them. Every value that reaches the remote
/// shell goes through `ShellQuote`; every path stays inside the agent's work directory.
///
/// ```
/// <workdir>/bundles/<sha256>/            an installed product (complete once `.complete` exists)
/// <workdir>/bundles/.incoming/            uploads in progress (never used until renamed into place)
/// <workdir>/runs/<run-id>/pids/<unit>     the process group of each running unit
/// <workdir>/runs/<run-id>/lease           renewed (touched) by the coordinator while the run lives
/// <workdir>/runs/<run-id>/watchdog        the pid of the run's watchdog on this agent
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

    /// Kills what is left, stops the run's watchdog and removes the run's folder.
    public var cleanup: String {
        killAll + "; \(stopWatchdog); rm -rf \(q(runDir))"
    }

    private var stopWatchdog: String {
        "[ -f \(q(watchdogPID)) ] && kill \"$(cat \(q(watchdogPID)))\" 2>/dev/null; rm -f \(q(watchdogPID)); true"
    }

    // MARK: - The lease: nothing outlives a coordinator that died

    /// The file the coordinator touches while the run lives (its mtime, by the agent's own clock, is the lease).
    public var lease: String { runDir + "/lease" }
    public var watchdogPID: String { runDir + "/watchdog" }

    /// Kills every unit group recorded under `pidsDir` (a shell variable or quoted path) and removes `dir`.
    private static func reap(pids pidsDir: String, dir: String) -> String {
        "for f in \(pidsDir)/*; do [ -f \"$f\" ] && kill -KILL -\"$(cat \"$f\")\" 2>/dev/null; done; rm -rf \(dir)"
    }

    /// Seconds since a file was last touched, by the agent's clock (GNU stat, else BSD stat); huge when it is gone.
    private static func age(_ file: String) -> String {
        "$(( $(date +%s) - $(stat -c %Y \(file) 2>/dev/null || stat -f %m \(file) 2>/dev/null || echo 0) ))"
    }

    /// Takes the lease and starts the run's watchdog on the agent, unless one is already running (re-admission).
    /// The watchdog is detached from the SSH session (sshd kills nothing when a session drops). Every second it
    /// looks at the lease: once it is older than `seconds`, the coordinator is gone (killed, frozen, cut off), so
    /// it kills every unit's process group and removes the run's folder. It exits when the lease file is gone:
    /// the run ended normally and cleaned up, or released its folder (`keep_remote`).
    public func takeLease(seconds: Int) -> String {
        let l = q(lease)
        let script = [
            "while [ -f \(l) ]; do",
            "  if [ \(Self.age(l)) -gt \(max(1, seconds)) ]; then \(Self.reap(pids: q(pids), dir: q(runDir))); exit 0; fi",
            "  sleep 1",
            "done",
        ].joined(separator: "\n")
        let w = q(watchdogPID)
        return "touch \(l) && if [ -f \(w) ] && kill -0 \"$(cat \(w))\" 2>/dev/null; then :; else "
            + "nohup /bin/sh -c \(q(script)) </dev/null >/dev/null 2>&1 & echo $! > \(w); fi"
    }

    /// Renews the lease; fails when the run's folder is gone (its lease lapsed and the watchdog reaped it).
    public var renewLease: String { "touch -c \(q(lease)) && [ -f \(q(lease)) ]" }

    /// Gives the lease up without reaping: the watchdog exits and the folder stays (`keep_remote`).
    public var releaseLease: String { "rm -f \(q(lease)); \(stopWatchdog)" }

    /// Reaps other runs on this agent whose lease lapsed more than `seconds` ago: their units' process groups are
    /// killed and their folders removed. Their own watchdog normally did this already; this covers a watchdog that
    /// was killed, or an agent that was down when the lease lapsed. Prints
    /// one line per run reaped: its id and how many unit groups it still had recorded.
    public func reapStale(seconds: Int) -> String {
        let runs = q(workdir + "/runs")
        return "for d in \(runs)/*/; do d=${d%/}; [ -f \"$d/lease\" ] || continue; [ \"$d\" = \(q(runDir)) ] && continue; "
            + "[ \(Self.age("\"$d/lease\"")) -gt \(max(1, seconds)) ] || continue; "
            + "n=$(ls \"$d/pids\" 2>/dev/null | wc -l | tr -d ' '); "
            + Self.reap(pids: "\"$d/pids\"", dir: "\"$d\"") + "; echo \"${d##*/} $n\"; done; true"
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
