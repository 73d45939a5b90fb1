import FanoutCore

/// Where Fanout keeps things on an agent, and the trust checks of those folders. The shell lines that manage them
/// are split by job: running and killing units (RemoteLayout+Units), what units consume (RemoteLayout+Usage, read
/// back by `RemoteUsage`), the lease and its watchdog (RemoteLayout+Lease), the product cache (RemoteLayout+Bundles).
/// Every value that reaches the remote shell goes through `ShellQuote`; every path stays inside the agent's work
/// directory.
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
    /// trusted: see ``trustedWorkdir``. Nothing in the work directory is read or run before this passes (nor after
    /// it in the same script: a folder that cannot be made ends it too).
    public var prepareRun: String {
        "umask 077\nmkdir -p \(q(pids)) \(q(usage)) \(q(incoming)) || exit 1\n\(trustedWorkdir)"
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

    /// One `stat` for every path (the folders above the work directory, which `${p%/*}` finds without a process
    /// each, then the work directory and `paths`), whose lines are checked in the shell: a handful of processes in
    /// all, where a `stat` and a `dirname` per path took a tenth of a second on a busy agent.
    private func trustCheck(_ paths: [String], onlyExisting: Bool) -> String {
        [
            Self.shellHelpers,
            "d=$(cd \(q(workdir)) && pwd -P) || fanout_refuse \(q("cannot enter the work directory " + workdir))",
            #"set --; p=$d; while [ "$p" != / ]; do p=${p%/*}; [ -n "$p" ] || p=/; set -- "$@" "$p"; done; n=$#"#,
            #"set -- "$@" "$d""#,
            "for p in \(paths.map(q).joined(separator: " ")); do \(onlyExisting ? "[ ! -e \"$p\" ] || " : "")set -- \"$@\" \"$p\"; done",
            #"modes=$(fanout_mode "$@") || fanout_refuse "cannot inspect $*""#,
            "i=0",
            #"while read -r line; do i=$((i + 1)); eval "p=\"\${$i}\""; fanout_um "$line"; if [ $i -le $n ]; then fanout_above_um "$p"; else fanout_owned_um "$p"; fi; done <<FANOUT_MODES"#,
            "$modes",
            "FANOUT_MODES",
        ].joined(separator: "\n")
    }

    /// Shell functions of the checks. `fanout_refuse` ends the script with status 77 and a message saying what to fix.
    /// `fanout_mode PATH...` prints a line `uid mode` per path with GNU stat (Linux) or BSD stat (macOS), whose `%p`
    /// is the whole mode in octal, file type included; `fanout_um LINE` sets `u` (owner uid) and `m` (permission
    /// bits: the mode masked with 07777) from one; `fanout_stat PATH` does both for one path.
    static let shellHelpers = #"""
        me=$(id -u)
        fanout_refuse() { echo "fanout: $*" >&2; exit 77; }
        if stat -c %u / >/dev/null 2>&1; then fanout_mode() { stat -c '%u %a' -- "$@"; }; else fanout_mode() { stat -f '%u %p' -- "$@"; }; fi
        fanout_um() { u=${1% *}; m=$((0${1#* } & 07777)); }
        fanout_stat() { s=$(fanout_mode "$1") || fanout_refuse "cannot inspect $1"; fanout_um "$s"; }
        fanout_above_um() {
          [ "$u" = 0 ] || [ "$u" = "$me" ] || fanout_refuse "$1 (above the work directory) belongs to uid $u, not to root or the agent user (uid $me): another user could replace what Fanout runs. Choose a work directory whose parents belong to root or to the agent user"
          [ $((m & 022)) = 0 ] || [ $((m & 01000)) != 0 ] || fanout_refuse "$1 (above the work directory) is writable by group or others (mode $(printf %o $m)) and not sticky: another user could replace what Fanout runs. Run chmod go-w '$1', or choose another work directory"
        }
        fanout_owned_um() {
          [ "$u" = "$me" ] || fanout_refuse "$1 belongs to uid $u, not to the agent user (uid $me): Fanout runs only what the agent user wrote. Check who created it, then remove it or give it to the agent user (chown -R $me '$1')"
          [ $((m & 022)) = 0 ] || fanout_refuse "$1 is writable by group or others (mode $(printf %o $m)): another user could change what Fanout runs. Run chmod go-w '$1'"
        }
        fanout_owned() { fanout_stat "$1"; fanout_owned_um "$1"; }
        """#


    /// Quoted for the remote shell (the one quoting function, `ShellQuote`).
    func q(_ s: String) -> String { ShellQuote.quote(s) }
}
