import Foundation

/// True once the process no longer exists or is a zombie waiting to be reaped (waits up to `seconds`).
func processIsGone(_ pid: pid_t, within seconds: Double = 3) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if kill(pid, 0) != 0 { return true }
        if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
           let close = stat.lastIndex(of: ")"), stat[stat.index(close, offsetBy: 2)] == "Z" { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return false
}

/// Runs `line` in a shell started as sshd starts every non-pty session: leading its own process group (its pid is
/// its group) and with no descriptors but 0, 1 and 2 (sshd closes the rest). Returns how it ended (exit status or
/// signal) and its standard output. setsid(), closing and exec happen in one process (perl; setsid fails harmlessly
/// when Foundation already made the child lead a group): `/usr/bin/setsid` forks when its caller leads a group, and
/// then the status seen here was its own 0, not the line's.
func runAsSessionLeader(_ line: String) async throws -> (status: Int32, signaled: Bool, stdout: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/perl")
    let script = #"""
        use POSIX (); POSIX::setsid();
        opendir(my $d, "/proc/self/fd"); my @fds = grep { /^\d+$/ && $_ > 2 } readdir($d); closedir($d);
        POSIX::close($_) for @fds;
        exec { $ARGV[0] } @ARGV or die "exec: $!";
        """#
    p.arguments = ["-e", script, "/bin/sh", "-c", line]
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    let data: Data = await withCheckedContinuation { c in
        DispatchQueue.global().async { c.resume(returning: out.fileHandleForReading.readDataToEndOfFile()) }
    }
    await withCheckedContinuation { c in DispatchQueue.global().async { p.waitUntilExit(); c.resume() } }
    return (p.terminationStatus, p.terminationReason == .uncaughtSignal, String(decoding: data, as: UTF8.self))
}
