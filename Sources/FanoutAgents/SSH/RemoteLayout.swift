import FanoutCore

/// Where Fanout keeps things on an agent, and the shell lines that manage them. Every value that reaches the remote
/// shell goes through `ShellQuote`; every path stays inside the agent's work directory.
///
/// ```
/// <workdir>/bundles/<sha256>/            an installed product (complete once `.complete` exists)
/// <workdir>/bundles/.incoming/            uploads in progress (never used until renamed into place)
/// <workdir>/runs/<run-id>/pids/<unit>     the process group of each running unit
/// <workdir>/runs/<run-id>/usage/<unit>    the CPU time of a unit's test, written by its shell as the test ends
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
    public var usage: String { runDir + "/usage" }

    public func bundle(_ sha: String) -> String { bundles + "/" + sha }

    /// Creates the run's folders (private to the agent user) and refuses to go on unless the work directory can be
    /// trusted: see ``trustedWorkdir``. Nothing in the work directory is read or run before this passes.
    public var prepareRun: String {
        "umask 077 && mkdir -p \(q(pids)) \(q(usage)) \(q(incoming)) && \(trustedWorkdir)"
    }

    /// Exit status of the agent-side checks when something in the work directory cannot be trusted.
    public static let untrustedStatus: Int32 = 77

    /// Checks, like sshd's StrictModes, that nobody but the agent user can change what Fanout will run: every folder
    /// above the work directory (after resolving symbolic links) belongs to root or the agent user and is writable
    /// by nobody else unless it is sticky (/tmp); the work directory, the bundle cache and this run's folders belong
    /// to the agent user and are not writable by group or others. Prints why on stderr and exits 77 otherwise.
    public var trustedWorkdir: String {
        trustCheck([bundles, incoming, workdir + "/runs", runDir, pids, usage], onlyExisting: false)
    }

    /// The same checks on what exists of the work directory and its cache, without a run: `fanout agents check`.
    public var trustedCache: String {
        trustCheck([bundles, incoming, workdir + "/runs"], onlyExisting: true)
    }

    private func trustCheck(_ paths: [String], onlyExisting: Bool) -> String {
        [
            Self.shellHelpers,
            "d=$(cd \(q(workdir)) && pwd -P) || fanout_refuse \(q("cannot enter the work directory " + workdir))",
            "p=$d",
            "while [ \"$p\" != / ]; do p=$(dirname \"$p\"); fanout_above \"$p\"; done",
            "fanout_owned \"$d\"",
            "for p in \(paths.map(q).joined(separator: " ")); do \(onlyExisting ? "[ ! -e \"$p\" ] || " : "")fanout_owned \"$p\"; done",
        ].joined(separator: "\n")
    }

    /// Shell functions of the checks. `fanout_refuse` ends the script with status 77 and a message saying what to fix.
    /// `fanout_stat` sets `u` (owner uid) and `m` (permission bits, octal with a leading 0) with GNU stat (Linux) or
    /// BSD stat (macOS), whose `%p` is the whole mode in octal, file type included: masked off with 07777.
    static let shellHelpers = #"""
        me=$(id -u)
        fanout_refuse() { echo "fanout: $*" >&2; exit 77; }
        if stat -c %u / >/dev/null 2>&1; then fanout_mode() { stat -c '%u %a' "$1"; }; else fanout_mode() { stat -f '%u %p' "$1"; }; fi
        fanout_stat() { s=$(fanout_mode "$1") || fanout_refuse "cannot inspect $1"; u=${s% *}; m=0$(printf %o $((0${s#* } & 07777))); }
        fanout_above() {
          fanout_stat "$1"
          [ "$u" = 0 ] || [ "$u" = "$me" ] || fanout_refuse "$1 (above the work directory) belongs to uid $u, not to root or the agent user (uid $me): another user could replace what Fanout runs. Choose a work directory whose parents belong to root or to the agent user"
          [ $((m & 022)) = 0 ] || [ $((m & 01000)) != 0 ] || fanout_refuse "$1 (above the work directory) is writable by group or others (mode ${m#0}) and not sticky: another user could replace what Fanout runs. Run chmod go-w '$1', or choose another work directory"
        }
        fanout_owned() {
          fanout_stat "$1"
          [ "$u" = "$me" ] || fanout_refuse "$1 belongs to uid $u, not to the agent user (uid $me): Fanout runs only what the agent user wrote. Check who created it, then remove it or give it to the agent user (chown -R $me '$1')"
          [ $((m & 022)) = 0 ] || fanout_refuse "$1 is writable by group or others (mode ${m#0}): another user could change what Fanout runs. Run chmod go-w '$1'"
        }
        """#

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

    // MARK: - What units consume

    /// Prints and removes what a unit's wrapper wrote as its test ended (``unitWrapper``; read it with
    /// ``parseTimes(_:)``). Prints nothing when the group was killed before that (time-out, cancel).
    public func takeUsage(_ unit: Int) -> String {
        "f=\(q(usageFile(unit))); cat \"$f\" 2>/dev/null; rm -f \"$f\"; true"
    }

    /// The CPU seconds in the output of the shell builtin `times`: the sum of its second line (the children's user
    /// and system time). Reads `0m1.230000s` (dash), `0m1.230s` (bash, also with a decimal comma), `1.23s` (zsh),
    /// `1h2m3.5s`. Nil when the output is not that.
    public static func parseTimes(_ output: String) -> Double? {
        let lines = output.split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }
        guard lines.count >= 2 else { return nil }
        let words = lines[1].split(whereSeparator: \.isWhitespace)
        guard words.count == 2, let user = duration(words[0]), let system = duration(words[1]) else { return nil }
        return user + system
    }

    private static func duration(_ word: Substring) -> Double? {
        var total = 0.0
        var number = ""
        for c in word {
            switch c {
            case "0"..."9", ".": number.append(c)
            case ",": number.append(".")
            case "h", "m", "s":
                guard let value = Double(number) else { return nil }
                total += value * (c == "h" ? 3600 : c == "m" ? 60 : 1)
                number = ""
            default: return nil
            }
        }
        return number.isEmpty && word.last == "s" ? total : nil
    }

    /// One command that samples every running unit of this run at once: for each pid file, a line
    /// `<unit> <cpu-seconds> <peak-resident-KiB>` summed over the live processes of that group (groups with no
    /// live process print nothing; two pid files naming one group, a pid reused, both print). Read it with
    /// ``parseUsageSample(_:)``.
    ///
    /// Linux: one awk reads /proc/<pid>/stat of every process (fields counted after the last `)`, since the name may
    /// hold spaces and parentheses): utime + stime + cutime + cstime in ticks of `getconf CLK_TCK`, and VmHWM from
    /// /proc/<pid>/status of the group's members, then `W <unit> <ns> <ready>` lines: each member's run-queue wait
    /// and threads ready to run (``ResourceUsage/cpuWaitSeconds``, ``ResourceUsage/readyThreads``). A file that
    /// vanished meanwhile is skipped (awk's getline, unlike a file operand, does not abort on it). Elsewhere (macOS has no /proc): `ps`'s cumulative CPU time and current
    /// resident set (the transport keeps the largest seen). Everything runs in the C locale (decimal points).
    public var usageSample: String {
        let groups: String = #"g=; for f in "# + q(pids) + #"/*; do [ -f "$f" ] && read -r p < "$f" && g="$g ${f##*/}:$p"; done"#
        let proc: String = #"awk -v g="$g" -v hz="$(getconf CLK_TCK 2>/dev/null)" "# + q(Self.procSampler) + " /proc/[0-9]*/stat"
            + " | " + Self.runQueueWaits
        let ps: String = #"ps -A -o pgid= -o time= -o rss= | awk -v g="$g" "# + q(Self.psSampler)
        return [
            "LC_ALL=C; export LC_ALL",
            groups,
            #"[ -n "$g" ] || exit 0"#,
            #"if [ "$(uname -s)" = Linux ]; then "# + proc + "; else " + ps + "; fi",
        ].joined(separator: "\n")
    }

    /// awk: `units[pgid]` from `g` (` unit:pgid` pairs), and the report of the groups seen.
    private static let samplerCommon = #"""
        function groups(   n, i, a, k, u, p) {
          n = split(g, a, " ")
          for (i = 1; i <= n; i++) {
            k = index(a[i], ":"); u = substr(a[i], 1, k - 1); p = substr(a[i], k + 1)
            if (p != "") units[p] = (p in units) ? units[p] " " u : u
          }
        }
        function report(   p, m, j, us) {
          for (p in seen) {
            m = split(units[p], us, " ")
            for (j = 1; j <= m; j++) printf "%s %.2f %d\n", us[j], cpu[p], peak[p]
          }
        }
        """#

    private static let procSampler = samplerCommon + #"""

        BEGIN {
          groups()
          if (hz + 0 <= 0) hz = 100
          for (i = 1; i < ARGC; i++) {
            f = ARGV[i]
            if ((getline s < f) > 0) {
              sub(/^.*\) /, "", s)
              split(s, x, " ")
              p = x[3]
              if (p in units) {
                seen[p] = 1
                m = split(units[p], us, " "); pid = f; gsub(/[^0-9]/, "", pid)
                for (j = 1; j <= m; j++) print "T", us[j], pid
                cpu[p] += (x[12] + x[13] + x[14] + x[15]) / hz
                st = f; sub(/stat$/, "status", st)
                while ((getline l < st) > 0) if (l ~ /^VmHWM:/) { split(l, y, " "); if (y[2] + 0 > peak[p] + 0) peak[p] = y[2] + 0 }
                close(st)
              }
            }
            close(f)
          }
          report()
          exit
        }
        """#

    /// Passes the sampler's report lines through, and turns each `T <unit> <pid>` (a member of the unit's group)
    /// into `W <unit> <ns> <ready>`: how long the threads of that process waited on a run queue, ready to run
    /// (second field of /proc/<pid>/task/*/schedstat, summed), and how many of them are ready right now (state `R`
    /// in /proc/<pid>/task/*/stat, the first word after the last `)`). Shell builtins only (`read`, parameter
    /// expansion, arithmetic): no process per member. No `W` line for a process that is gone or a kernel without
    /// schedstat.
    private static let runQueueWaits = #"""
        while read -r a b c; do if [ "$a" = T ]; then w=; r=0; for f in /proc/"$c"/task/*/schedstat; do read -r x y z 2>/dev/null < "$f" || continue; case $y in ''|*[!0-9]*) continue;; esac; w=$(( ${w:-0} + y )); read -r l 2>/dev/null < "${f%schedstat}stat" || continue; l=${l##*) }; [ "${l%% *}" = R ] && r=$((r + 1)); done; [ -z "$w" ] || echo "W $b $w $r"; else echo "$a $b $c"; fi; done
        """#

    /// `ps -o time` is `[[dd-]hh:]mm:ss[.cc]`; `rss` is in KiB.
    private static let psSampler = samplerCommon + #"""

        BEGIN { groups() }
        ($1 in units) {
          t = $2; d = 0
          k = index(t, "-"); if (k > 0) { d = substr(t, 1, k - 1); t = substr(t, k + 1) }
          m = split(t, c, ":"); s = 0
          for (i = 1; i <= m; i++) s = s * 60 + c[i]
          seen[$1] = 1
          cpu[$1] += d * 86400 + s
          if ($3 + 0 > peak[$1] + 0) peak[$1] = $3 + 0
        }
        END { report() }
        """#

    /// The lines of ``usageSample``: unit → what its group consumed so far (malformed lines are skipped).
    public static func parseUsageSample(_ output: String) -> [Int: ResourceUsage] {
        var samples: [Int: ResourceUsage] = [:]
        var waits: [Int: (ns: Int64, ready: Int)] = [:]
        for line in output.split(whereSeparator: \.isNewline) {
            let words = line.split(separator: " ")
            if words.count == 4, words[0] == "W", let unit = Int(words[1]), let ns = Int64(words[2]), ns >= 0,
               let ready = Int(words[3]), ready >= 0 {
                let sum = waits[unit] ?? (0, 0)
                waits[unit] = (sum.ns &+ ns, sum.ready + ready)
                continue
            }
            guard words.count == 3, let unit = Int(words[0]), let cpu = Double(words[1]), cpu >= 0, cpu.isFinite,
                  let kib = Int64(words[2]), kib >= 0, kib < Int64.max / 1024 else { continue }
            let usage = ResourceUsage(cpuSeconds: cpu, peakMemoryBytes: kib > 0 ? kib * 1024 : nil)
            samples[unit] = usage.atLeast(samples[unit])
        }
        for (unit, wait) in waits where samples[unit] != nil {
            samples[unit]?.cpuWaitSeconds = Double(wait.ns) / 1e9
            samples[unit]?.readyThreads = wait.ready
        }
        return samples
    }

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

    /// Kills every unit group recorded under `pidsDir` (a shell variable or quoted path), deletes the simulators the
    /// run recorded (`simulators.sh`, one `simctl delete` line each), and removes `dir`.
    private static func reap(pids pidsDir: String, dir: String) -> String {
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

    /// The file in this run's folder that says the run uses bundle `sha`: eviction leaves the bundle alone while the
    /// run is alive.
    public func usesMarker(_ sha: String) -> String { runDir + "/uses-" + sha }

    /// Prints `yes` when the bundle is installed and complete, `no` when it is not there. A bundle that is there but
    /// could have been written by someone other than the agent user (a `.complete` planted by another user, a file
    /// writable by group or others) is refused: exit 77 with the reason. Marks the bundle used by this run, and
    /// touches `.complete` so eviction sees it as recently used.
    public func bundleReady(_ sha: String) -> String {
        let b = bundle(sha)
        return [
            Self.shellHelpers,
            "umask 077",
            "b=\(q(b))",
            ": > \(q(usesMarker(sha)))",
            "if [ ! -e \"$b\" ]; then echo no; exit 0; fi",
            "fanout_owned \"$b\"",
            "if [ ! -f \"$b/.complete\" ]; then echo no; exit 0; fi",
            #"bad=$(find "$b" \( ! -user "$me" -o \( ! -type l \( -perm -020 -o -perm -002 \) \) \) -print | head -n 1)"#,
            #"[ -z "$bad" ] || fanout_refuse "the cached bundle $b holds $bad, which belongs to another user or is writable by group or others: something other than Fanout wrote into the cache. Check who did, then remove the bundle (rm -rf '$b') so that it is uploaded again""#,
            #"touch "$b/.complete""#,
            "echo yes",
        ].joined(separator: "\n")
    }

    /// Shell functions for what GNU and BSD userlands (Linux, macOS agents) spell differently:
    /// `fanout_rename FROM TO` is rename(2), which never moves a folder into an existing one: GNU `mv -T`, else (BSD
    /// mv has no -T) perl's rename, the same system call (perl ships with macOS). `fanout_sha256 FILE` prints the
    /// file's SHA-256 in hex: `sha256sum` (coreutils), else `shasum -a 256` (macOS).
    static let portableHelpers = #"""
        case $(LC_ALL=C mv -T 2>&1) in *option*) fanout_rename() { perl -e 'rename($ARGV[0], $ARGV[1]) or exit 1' -- "$1" "$2"; } ;; *) fanout_rename() { mv -T -- "$1" "$2"; } ;; esac
        fanout_sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1; }
        """#

    /// Verifies an uploaded archive, unpacks it into a folder of its own and renames that into place in one step
    /// (`fanout_rename`: rename(2), which never moves into an existing folder), so a half-finished upload is never used and two
    /// runs installing the same bundle at once never delete or nest each other's copy: the second rename fails, and
    /// the loser keeps the winner's identical bundle. A leftover without `.complete` (damaged by hand, or a pre-1.0
    /// eviction cut short) is renamed aside first; if what was renamed turns out complete (a racer's fresh install),
    /// it is put back.
    public func install(sha: String, archive: String) -> String {
        // `$$` (the remote shell's pid) keeps two installs of one run (the same agent listed twice) apart too.
        let staging = q(incoming + "/" + sha + "." + runID) + ".$$"
        let aside = q(incoming + "/stale-" + sha + "." + runID) + ".$$"
        return [
            Self.portableHelpers,
            "set -e",
            "umask 077",
            "s=\(staging) f=\(q(bundle(sha))) a=\(aside)",
            "actual=$(fanout_sha256 \(q(archive)))",
            "if [ \"$actual\" != \(q(sha)) ]; then echo \"checksum mismatch: got $actual\" >&2; rm -f \(q(archive)); exit 65; fi",
            #"rm -rf "$s" && mkdir -p "$s""#,
            #"tar -xf \#(q(archive)) -C "$s" --no-same-owner --no-same-permissions"#,
            #"touch "$s/.complete""#,
            "rm -f \(q(archive))",
            #"if [ -e "$f" ] && [ ! -f "$f/.complete" ] && fanout_rename "$f" "$a" 2>/dev/null; then"#,
            #"  if [ -f "$a/.complete" ]; then fanout_rename "$a" "$f" 2>/dev/null || rm -rf "$a"; else rm -rf "$a"; fi"#,
            "fi",
            #"if ! fanout_rename "$s" "$f" 2>/dev/null; then"#,
            #"  rm -rf "$s""#,
            #"  [ -f "$f/.complete" ] || { echo "cannot install $f: it exists and is incomplete; remove it (rm -rf '$f')" >&2; exit 73; }"#,
            "fi",
        ].joined(separator: "\n")
    }

    /// Keeps the `keep` most recently used bundles, `current`, and every bundle a live run uses; removes the others.
    ///
    /// "Live" is judged on the agent from the run folders: a run uses a bundle when its folder holds `uses-<sha>`
    /// (``bundleReady(_:)`` writes it). It is live while it holds a lease renewed within `leaseSeconds` (its
    /// coordinator is alive), while one of its recorded process groups is alive, or, for a folder with no lease (kept
    /// with `keep_remote`, or from a Fanout without leases), while it touched that marker or started a unit within the
    /// last `liveMinutes`. A bundle is renamed out of sight before it is deleted, so no run ever sees half of one.
    public func evict(keep: Int, current: String, leaseSeconds: Int = 30, liveMinutes: Int = 30) -> String {
        let runs = workdir + "/runs"
        return [
            Self.portableHelpers,
            "cd \(q(bundles)) || exit 0",
            "ls -1t -- */.complete 2>/dev/null | cut -d/ -f1 | tail -n +\(max(1, keep) + 1) | while read -r b; do",
            "  [ \"$b\" = \(q(current)) ] && continue",
            "  live=0",
            "  for u in \(q(runs))/*/uses-\"$b\"; do",
            "    [ -e \"$u\" ] || continue",
            "    r=${u%/uses-*}",
            "    if [ -f \"$r/lease\" ] && [ \(Self.age("\"$r/lease\"")) -le \(max(1, leaseSeconds)) ]; then live=1; break; fi",
            "    if [ -n \"$(find \"$u\" \"$r/pids\" -maxdepth 0 -mmin -\(max(1, liveMinutes)) 2>/dev/null)\" ]; then live=1; break; fi",
            "    for p in \"$r\"/pids/*; do [ -f \"$p\" ] && kill -0 -\"$(cat \"$p\")\" 2>/dev/null && live=1 && break; done",
            "    [ $live = 1 ] && break",
            "  done",
            "  [ $live = 1 ] && continue",
            "  t=.incoming/evicted-\"$b\".$$",
            "  fanout_rename \"$b\" \"$t\" 2>/dev/null && rm -rf -- \"$t\"",
            "done; true",
        ].joined(separator: "\n")
    }

    private func q(_ s: String) -> String { ShellQuote.quote(s) }
}
