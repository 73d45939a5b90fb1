import FanoutCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Process groups of this coordinator that are still running.
private let liveGroups = Mutex<Set<pid_t>>([])

/// Held from creating a unit's pipes until its child is spawned (see `LocalProcess.start`).
private let spawnLock = Mutex<Void>(())

// glibc declares posix_spawn_file_actions_t and posix_spawnattr_t as structs; Darwin as opaque pointers that
// posix_spawn_*_init allocates (so a variable of them starts out nil).
#if canImport(Darwin)
private typealias SpawnFileActions = posix_spawn_file_actions_t?
private typealias SpawnAttributes = posix_spawnattr_t?
private func newSpawnFileActions() -> SpawnFileActions { nil }
private func newSpawnAttributes() -> SpawnAttributes { nil }
#else
private typealias SpawnFileActions = posix_spawn_file_actions_t
private typealias SpawnAttributes = posix_spawnattr_t
private func newSpawnFileActions() -> SpawnFileActions { posix_spawn_file_actions_t() }
private func newSpawnAttributes() -> SpawnAttributes { posix_spawnattr_t() }
#endif

#if canImport(Glibc)
/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module does not export.
/// (Darwin closes what is not inherited with the POSIX_SPAWN_CLOEXEC_DEFAULT flag instead: `closeOtherDescriptors`.)
private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
private let addCloseFrom: AddCloseFrom? = {
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
    return unsafeBitCast(symbol, to: AddCloseFrom.self)
}()
#endif

/// Makes the child start with only descriptors 0, 1 and 2 (those the file actions set up): whatever else this
/// process has open (sockets, databases, other units' pipes) stays here. Returns the spawn flags to add.
/// `fallback`: descriptors to close when the platform cannot close everything (glibc before 2.34).
private func closeOtherDescriptors(_ actions: inout SpawnFileActions, fallback: [Int32]) -> Int32 {
    #if canImport(Darwin)
    // Darwin's closefrom for posix_spawn: every descriptor the file actions did not set up is closed in the child.
    return Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
    #else
    if let closeFrom = addCloseFrom {
        _ = closeFrom(&actions, 3)
    } else {
        for fd in fallback { posix_spawn_file_actions_addclose(&actions, fd) }
    }
    return 0
    #endif
}

/// A close-on-exec stream socket pair (glibc sets the flag atomically; Darwin has no SOCK_CLOEXEC, and its spawns
/// use POSIX_SPAWN_CLOEXEC_DEFAULT anyway). Writes to fds[0] never raise SIGPIPE (see `sendWithoutSIGPIPE`).
private func closeOnExecSocketPair(_ fds: inout [Int32]) -> Bool {
    #if canImport(Glibc)
    return socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0
    #else
    guard socketpair(AF_UNIX, SOCK_STREAM, 0, &fds) == 0 else { return false }
    var one: Int32 = 1
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    _ = setsockopt(fds[0], SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
    return true
    #endif
}

/// send() that returns EPIPE instead of raising SIGPIPE: MSG_NOSIGNAL on Linux, SO_NOSIGPIPE (set on the socket by
/// `closeOnExecSocketPair`) on Darwin.
private func sendWithoutSIGPIPE(_ fd: Int32, _ text: String) {
    #if canImport(Glibc)
    let flags = Int32(MSG_NOSIGNAL)
    #else
    let flags: Int32 = 0
    #endif
    _ = text.withCString { send(fd, $0, strlen($0), flags) }
}

/// Kills this process's test process groups when it dies without doing so itself (SIGKILL, the OOM killer, a
/// crash): a child `/bin/sh`, in a process group of its own, reads `+ group` / `- group` lines from a socket this
/// process holds open. When this process is gone, however it went, the kernel closes that socket, the shell reads
/// end of file and kills every group still listed. Started with the first unit, under the spawn lock.
private enum Guardian {
    static let script = """
        live=' '
        while read -r op g; do
          case $op in
            +) live="$live$g " ;;
            -) case "$live" in *" $g "*) live="${live%% $g *} ${live#* $g }" ;; esac ;;
          esac
        done
        for g in $live; do kill -KILL -"$g" 2>/dev/null; done
        """

    /// Our end of the socket, or nil when the guardian could not be started (then nothing changes but this).
    nonisolated(unsafe) static var socket: Int32?
    nonisolated(unsafe) static var started = false

    /// Call with the spawn lock held.
    static func startIfNeeded() {
        guard !started else { return }
        started = true
        var fds: [Int32] = [-1, -1]
        guard closeOnExecSocketPair(&fds) else { return }
        var actions = newSpawnFileActions()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attr = newSpawnAttributes()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        // Its own group: a Ctrl-C at the terminal reaches the coordinator, never the guardian.
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attr, 0)
        let args: [String] = ["/bin/sh", "-c", script]
        let argv = args.map { strdup($0) } + [nil]
        // The script uses shell builtins only: a fixed environment (Darwin does not export `environ` to Swift).
        let envp: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=/usr/bin:/bin"), nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, envp)
        close(fds[1])
        guard rc == 0 else { close(fds[0]); return }
        socket = fds[0]
    }

    static func tell(_ line: String) {
        guard let fd = spawnLock.withLock({ _ in socket }) else { return }
        // A guardian that was killed must not take this process down with SIGPIPE.
        sendWithoutSIGPIPE(fd, line)
    }
}

/// A child process in its own process group, with its output read on a dedicated thread (blocking reads must not
/// occupy Swift's cooperative pool, which has only as many threads as cores).
///
/// The same thread measures what the group consumes: every ``ProcessEvent/usageInterval`` seconds while the leader
/// runs it reports a `.usage` sample of the whole group read from /proc (Linux only: on Darwin there is no /proc
/// and no periodic sample), and when the leader is reaped, one final `.usage` right before `.ended`: the larger of
/// the last sample and what `wait4` reports (the leader and every child it waited for). See ``ProcessGroupUsage``.
public final class LocalProcess: Sendable {
    public let pid: pid_t
    private let state: Mutex<State>

    private struct State {
        var cancelled = false
        var finished = false
    }

    /// Starts the command; `events` receives the output and exactly one ending.
    public static func start(_ command: Command, timeout: Double?,
                             events: AsyncStream<ProcessEvent>.Continuation) -> LocalProcess? {
        // Units start concurrently. A pipe created on one thread must never be inherited by a child spawned on
        // another: a unit whose write end lives on in some other test process sees no end of file until that
        // process exits too (measured: a 5 s class reported as 7 s, its slot idle meanwhile). So the pipes are
        // close-on-exec, made so under the lock every spawn takes, and the child closes every descriptor above 2.
        let process = spawnLock.withLock { _ in
            Guardian.startIfNeeded()
            return spawn(command, timeout: timeout, events: events)
        }
        if let process { Guardian.tell("+ \(process.pid)\n") }
        return process
    }

    private static func spawn(_ command: Command, timeout: Double?,
                              events: AsyncStream<ProcessEvent>.Continuation) -> LocalProcess? {
        var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
        guard pipe(&outPipe) == 0 else {
            events.yield(.ended(.failedToStart("pipe: \(String(cString: strerror(errno)))")))
            events.finish()
            return nil
        }
        guard pipe(&errPipe) == 0 else {
            close(outPipe[0]); close(outPipe[1])
            events.yield(.ended(.failedToStart("pipe: \(String(cString: strerror(errno)))")))
            events.finish()
            return nil
        }
        for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }

        var actions = newSpawnFileActions()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        let closeFlags = closeOtherDescriptors(&actions, fallback: outPipe + errPipe)

        var attr = newSpawnAttributes()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        // Own process group (so we can kill the whole tree), default signal handling, nothing blocked.
        let flags = Int32(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK) | closeFlags
        posix_spawnattr_setflags(&attr, Int16(flags))
        posix_spawnattr_setpgroup(&attr, 0)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attr, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        sigdelset(&allSignals, SIGKILL)
        sigdelset(&allSignals, SIGSTOP)
        posix_spawnattr_setsigdefault(&attr, &allSignals)

        var environment = ProcessInfo.processInfo.environment
        for (k, v) in command.environment { environment[k] = v }
        let argv = ([command.executable] + command.arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }

        var pid: pid_t = 0
        let rc = posix_spawn(&pid, command.executable, &actions, &attr, argv, envp)
        close(outPipe[1])
        close(errPipe[1])
        guard rc == 0 else {
            close(outPipe[0]); close(errPipe[0])
            events.yield(.ended(.failedToStart("\(command.executable): \(String(cString: strerror(rc)))")))
            events.finish()
            return nil
        }

        let process = LocalProcess(pid: pid)
        liveGroups.withLock { _ = $0.insert(pid) }
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        let (outRead, errRead) = (outPipe[0], errPipe[0])
        let thread = Thread {
            process.pump(out: outRead, err: errRead, deadline: deadline, timeout: timeout, events: events)
        }
        thread.name = "fanout-process-\(pid)"
        thread.start()
        return process
    }

    private init(pid: pid_t) {
        self.pid = pid
        state = Mutex(State())
    }

    /// Kills the process group (the test and everything it started). Safe to call more than once.
    public func cancel() {
        let alreadyDone = state.withLock { s -> Bool in
            if !s.finished { s.cancelled = true }
            return s.finished
        }
        if !alreadyDone { kill(-pid, SIGKILL) }
    }

    private func pump(out: Int32, err: Int32, deadline: Date?, timeout: Double?,
                      events: AsyncStream<ProcessEvent>.Continuation) {
        var fds = [pollfd(fd: out, events: Int16(POLLIN), revents: 0), pollfd(fd: err, events: Int16(POLLIN), revents: 0)]
        var open = 2
        var timedOut = false
        var exited: (status: Int32, usage: rusage)?
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var drainUntil: Date?
        var usage: ResourceUsage?
        var nextSample = Date().addingTimeInterval(ProcessEvent.usageInterval)

        while open > 0 {
            let now = Date()
            if let deadline, !timedOut, now >= deadline {
                timedOut = true
                kill(-pid, SIGKILL)
            }
            if exited == nil, now >= nextSample {
                nextSample = now.addingTimeInterval(ProcessEvent.usageInterval)
                if let sample = ProcessGroupUsage.sample(group: pid, among: liveGroups.withLock({ $0 })) {
                    let merged = sample.atLeast(usage)
                    usage = merged
                    events.yield(.usage(merged))
                }
            }
            if exited == nil, let reaped = reap(blocking: false) {
                exited = reaped
                // The leader is gone: whatever it left in its group must not keep the pipes open forever.
                kill(-pid, SIGKILL)
                drainUntil = now.addingTimeInterval(2)
            }
            if let drainUntil, now >= drainUntil { break }
            let ready = poll(&fds, nfds_t(fds.count), 100)
            if ready < 0, errno == EINTR { continue }
            if ready <= 0 { continue }
            for i in fds.indices where fds[i].fd >= 0 && fds[i].revents != 0 {
                let n = read(fds[i].fd, &buffer, buffer.count)
                if n > 0 {
                    events.yield(.output(i == 0 ? .stdout : .stderr, Array(buffer[0..<n])))
                } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(fds[i].fd)
                    fds[i].fd = -1
                    open -= 1
                }
            }
        }
        for f in fds where f.fd >= 0 { close(f.fd) }
        let reaped = exited ?? reap(blocking: true)
        let status = reaped?.status ?? 0
        kill(-pid, SIGKILL) // the group's stragglers, if any
        liveGroups.withLock { _ = $0.remove(pid) }
        Guardian.tell("- \(pid)\n")
        let cancelled = state.withLock { s -> Bool in
            s.finished = true
            return s.cancelled
        }
        let ending: UnitEnding
        if cancelled { ending = .cancelled }
        else if timedOut { ending = .timedOut(limit: timeout ?? 0) }
        else if Self.wasSignaled(status) { ending = .signaled(Self.termSignal(status)) }
        else { ending = .exited(Self.exitStatus(status)) }
        if let total = reaped.map({ ProcessGroupUsage.final($0.usage).atLeast(usage) }) ?? usage {
            events.yield(.usage(total))
        }
        events.yield(.ended(ending))
        events.finish()
    }

    /// Reaps the leader: its wait status and resource usage (its own and that of the children it waited for).
    private func reap(blocking: Bool) -> (status: Int32, usage: rusage)? {
        var status: Int32 = 0
        var usage = rusage()
        while true {
            let r = wait4(pid, &status, blocking ? 0 : WNOHANG, &usage)
            if r == pid { return (status, usage) }
            if r == -1, errno == EINTR { continue }
            return nil
        }
    }

    /// Kills every process group still running (a second Ctrl-C: exit at once, but leave nothing behind).
    public static func killAll() {
        for group in liveGroups.withLock({ $0 }) { kill(-group, SIGKILL) }
    }

    static func wasSignaled(_ status: Int32) -> Bool { (status & 0x7f) != 0 && (status & 0x7f) != 0x7f }
    static func termSignal(_ status: Int32) -> Int32 { status & 0x7f }
    static func exitStatus(_ status: Int32) -> Int32 { (status >> 8) & 0xff }
}
