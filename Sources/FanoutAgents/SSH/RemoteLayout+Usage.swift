import FanoutCore

/// What units consume, as the agent measures it: the lines that read a unit's CPU time and sample every running
/// unit's group (read back by ``RemoteUsage``).
extension RemoteLayout {
    /// Prints and removes what a unit's wrapper wrote as its test ended (``unitWrapper``; read it with
    /// ``RemoteUsage/parseTimes(_:)``). Prints nothing when the group was killed before that (time-out, cancel).
    public func takeUsage(_ unit: Int) -> String {
        "f=\(q(usageFile(unit))); cat \"$f\" 2>/dev/null; rm -f \"$f\"; true"
    }

    /// One command that samples every running unit of this run at once: for each pid file, a line
    /// `<unit> <cpu-seconds> <peak-resident-KiB>` summed over the live processes of that group (groups with no
    /// live process print nothing; two pid files naming one group, a pid reused, both print). Read it with
    /// ``RemoteUsage/parseUsageSample(_:)``.
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
}
