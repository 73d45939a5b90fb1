import FanoutCore

/// The agent's cache of products: content-addressed bundles, checked, installed atomically, and evicted while no
/// live run uses them.
extension RemoteLayout {
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
}
