import FanoutCore

/// The lease: nothing outlives a coordinator that died. The coordinator touches the run's lease; the agent's
/// watchdog reaps the run (its units' groups, its simulators, its folder) once it lapses.
extension RemoteLayout {
    // MARK: - The lease: nothing outlives a coordinator that died

    /// The file the coordinator touches while the run lives (its mtime, by the agent's own clock, is the lease).
    public var lease: String { runDir + "/lease" }
    public var watchdogPID: String { runDir + "/watchdog" }

    /// Kills every unit group recorded under `pidsDir` (a shell variable or quoted path), deletes the simulators the
    /// run recorded (`simulators.sh`, one `simctl delete` line each), and removes `dir`.
    static func reap(pids pidsDir: String, dir: String) -> String {
        "for f in \(pidsDir)/*; do [ -f \"$f\" ] && kill -KILL -\"$(cat \"$f\")\" 2>/dev/null; done; "
            + "[ -f \(dir)/\(simulatorsScript) ] && sh \(dir)/\(simulatorsScript) >/dev/null 2>&1; rm -rf \(dir)"
    }

    /// The file in a run's folder that lists, as shell lines, how to delete each simulator the run created: the
    /// watchdog runs it when the coordinator is gone, since nobody else would delete them.
    static let simulatorsScript = "simulators.sh"

    /// Appends `command` to the run's ``simulatorsScript``, for the watchdog to run if the coordinator is gone.
    public func runIfCoordinatorGone(_ command: Command) -> String {
        "printf '%s\\n' \(q(command.shellLine())) >> \(q(runDir + "/" + Self.simulatorsScript))"
    }

    /// Seconds since a file was last touched, by the agent's clock (GNU stat, else BSD stat); huge when it is gone.
    static func age(_ file: String) -> String {
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

    /// What a run needs on the agent before its product, in one command: its folders made and checked
    /// (``prepareRun``: nothing else runs when they cannot be trusted), what this run left running there stopped
    /// (``killAll``, on re-admission), other runs whose lease lapsed reaped (``reapStale(seconds:)``, whose lines it
    /// prints), and the lease taken (``takeLease(seconds:)``).
    public func readyRun(leaseSeconds seconds: Int) -> String {
        [prepareRun, killAll, reapStale(seconds: seconds), takeLease(seconds: seconds)].joined(separator: "\n")
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
}
