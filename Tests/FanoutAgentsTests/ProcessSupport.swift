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

/// Runs `line` in a shell started as sshd starts every non-pty session: leading a session and process group of its
/// own (its pid is its group) and with no descriptors but 0, 1 and 2 (sshd closes the rest). Returns how it ended
/// (exit status or signal) and its standard output. setsid(), closing and exec happen in one process (perl):
/// `/usr/bin/setsid` forks when its caller leads a group, and then the status seen here was its own 0, not the line's.
///
/// Spawned and waited for here, not with Foundation's Process: Process learns that a child ended when the child's
/// copy of an internal socket closes, and then waits for it with a blocking waitpid on the one thread that serves
/// every Process. This child closes that socket at once (like every descriptor above 2), so one unit that runs for
/// a minute held up the end of every other Process in the test run for that minute.
func runAsSessionLeader(_ line: String) async throws -> (status: Int32, signaled: Bool, stdout: String) {
    let script = #"""
        use POSIX (); POSIX::setsid() or die "setsid: $!";
        opendir(my $d, "/proc/self/fd"); my @fds = grep { /^\d+$/ && $_ > 2 } readdir($d); closedir($d);
        POSIX::close($_) for @fds;
        exec { $ARGV[0] } @ARGV or die "exec: $!";
        """#
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { throw SpawnFailure(what: "pipe", code: errno) }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    let words: [String] = ["/usr/bin/perl", "-e", script, "/bin/sh", "-c", line]
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, "/usr/bin/perl", &actions, nil, argv, environ)
    close(fds[1])
    guard rc == 0 else {
        close(fds[0])
        throw SpawnFailure(what: "posix_spawn perl", code: rc)
    }
    let (reader, child) = (fds[0], pid)
    let output: [UInt8] = await onOwnThread {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(reader, &buffer, buffer.count)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        close(reader)
        return bytes
    }
    let status: Int32 = await onOwnThread {
        var status: Int32 = 0
        while waitpid(child, &status, 0) == -1, errno == EINTR {}
        return status
    }
    let signaled = (status & 0x7f) != 0 && (status & 0x7f) != 0x7f
    return (signaled ? status & 0x7f : (status >> 8) & 0xff, signaled, String(decoding: output, as: UTF8.self))
}

struct SpawnFailure: Error, CustomStringConvertible {
    var what: String
    var code: Int32
    var description: String { "\(what): \(String(cString: strerror(code)))" }
}

/// Runs a blocking call on a thread of its own (not on Dispatch's global queue, whose pool has about as many threads
/// as cores here: a few units that run for a while would hold them all).
func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { c in Thread { c.resume(returning: work()) }.start() }
}
