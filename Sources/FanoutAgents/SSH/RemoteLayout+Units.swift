import FanoutCore

/// The shell lines that run a unit on an agent and stop it: the unit's wrapper, its process group, and the kills.
extension RemoteLayout {
    /// Runs a unit and records its process group so another channel can kill it (libssh2 1.10 cannot send signals
    /// over a channel). sshd starts every non-pty session with setsid(), so the remote shell already leads a
    /// session and process group of its own: `$$` is the group. (`setsid(1)` would fork here, since the shell is
    /// already a group leader, and lose the test's exit status and signal.) The environment is set by the shell
    /// (`NAME=value exec …`), not by `env`, which would take an executable whose path contains `=` for one more
    /// assignment.
    ///
    /// The shell `exec`s ``unitWrapper`` (a `/bin/sh` of known behaviour, whatever the agent user's login shell;
    /// same pid, so the group leader is unchanged), which runs the test as its child, writes the CPU time of the
    /// test and everything it waited for to ``usageFile(_:)``, and ends as the test ended: same exit status, or
    /// the same signal, re-raised on itself, so the channel reports the exit signal exactly as before.
    ///
    /// With a `limit`, the agent enforces it too, so a unit whose coordinator can no longer reach it still ends (the
    /// coordinator's own timer should fire first; this is the backstop): `timeout -s KILL` where there is one (GNU
    /// coreutils), `exec`ed in the shell's place with the wrapper as its child. (GNU timeout moves itself into a
    /// process group of its own unless it leads a session: run as a child, it would take the test out of the
    /// unit's group, out of reach of ``killUnit(_:)``; `exec`ed, it has the shell's pid, so that group is `$$`
    /// whichever it does. At the limit it kills its whole group, itself included; otherwise it passes its child's
    /// exit status and signal on.) Without `timeout` (macOS), a detached watcher (``killGroup(after:)``) SIGKILLs
    /// the group at the limit while the wrapper is `exec`ed as before.
    public func unitCommand(_ command: Command, unit: Int, workingDirectory: String, limit: Double? = nil) -> String {
        let start = "cd \(q(workingDirectory)) && echo $$ > \(q(pidFile(unit)))"
        let wrapped = ["/bin/sh", "-c", Self.unitWrapper, "sh", usageFile(unit), command.executable] + command.arguments
        let run = Command(executable: wrapped[0], arguments: Array(wrapped.dropFirst()), environment: command.environment)
        guard let limit else { return start + " && " + run.shellLine(exec: true) }
        let seconds = Int(max(1, limit).rounded(.up))
        let timeout = Command(executable: "timeout", arguments: ["-s", "KILL", String(seconds)] + wrapped,
                              environment: command.environment)
        return start + " && if command -v timeout >/dev/null 2>&1; then \(timeout.shellLine(exec: true)); "
            + "else \(Self.killGroup(after: seconds)); \(run.shellLine(exec: true)); fi"
    }

    /// The shell between the unit's group and its test: `sh -c WRAPPER sh USAGE-FILE EXECUTABLE ARGS…`.
    ///
    /// It stays as the test's parent, so that `times` (second line: the user and system CPU time of the children
    /// it waited for, the test and all it waited for) can be written once the test ended; `command` keeps a
    /// failed redirection from ending the shell. A status above 128 is a death by signal (`kill -l STATUS` names
    /// it): the shell resets that signal's disposition, turns core dumps off (the test already dumped its own) and
    /// sends the signal to itself, so that sshd reports the same exit signal; stop signals are never re-raised (a
    /// test that exits 147 must not stop its shell), and if the signal does not end the shell, it exits with the
    /// status. (A test that calls exit(134) by itself is reported as killed by SIGABRT: a shell cannot tell them
    /// apart.) Only builtins: the test's PATH does not matter here.
    public static let unitWrapper = """
        f=$1; shift
        "$@"
        s=$?
        command times 2>/dev/null >"$f"
        if [ "$s" -gt 128 ] && n=$(kill -l "$s" 2>/dev/null); then
          case $n in
            STOP|TSTP|TTIN|TTOU) ;;
            *) ulimit -c 0 2>/dev/null; command trap - "$n" 2>/dev/null; kill -s "$n" $$ ;;
          esac
        fi
        exit "$s"
        """

    /// The portable time-limit backstop: a watcher that SIGKILLs the shell's process group (`$$`, the unit's group;
    /// the wrapper is `exec`ed as `$$`, the test its child) once `seconds` passed by the agent's clock, and exits as
    /// soon as `$$` is gone. Started in a subshell that exits at once, so the watcher is nobody's child in the unit
    /// (the wrapper waits for its test only; a test reaping children never sees it); its standard streams are /dev/null and sshd hands a session no other descriptors, so it never
    /// holds the channel's output open (which would delay the unit's end of output, and with it its exit, to the limit).
    static func killGroup(after seconds: Int) -> String {
        "( ( e=$(( $(date +%s) + \(seconds) )); while [ \"$(date +%s)\" -lt \"$e\" ]; do sleep 1; "
            + "kill -0 $$ 2>/dev/null || exit 0; done; kill -KILL -$$ ) </dev/null >/dev/null 2>&1 & )"
    }

    public func pidFile(_ unit: Int) -> String { pids + "/" + String(unit) }
    public func usageFile(_ unit: Int) -> String { usage + "/" + String(unit) }

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

    var stopWatchdog: String {
        "[ -f \(q(watchdogPID)) ] && kill \"$(cat \(q(watchdogPID)))\" 2>/dev/null; rm -f \(q(watchdogPID)); true"
    }
}
