import CLibSSH2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How other threads wake a connection's I/O thread out of poll(): an eventfd on Linux, a non-blocking pipe on
/// Darwin (the difference lives in the C shim). Its owner (`LoopMailbox`) signals only while it is open and closes
/// it once, so no write ever reaches a closed (or reused) descriptor.
struct WakeUpSignal: Sendable {
    /// Polled for POLLIN by the I/O thread; -1 when it could not be opened.
    let pollFD: Int32
    private let signalFD: Int32
    /// errno of the failed open, else 0.
    let openError: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        let rc = fanout_wakeup_open(&fds)
        openError = rc == 0 ? 0 : errno
        pollFD = fds[0]
        signalFD = fds[1]
    }

    var isOpen: Bool { pollFD >= 0 }

    func signal() {
        if signalFD >= 0 { fanout_wakeup_signal(signalFD) }
    }

    /// Consumes pending wake-ups (I/O thread only).
    func drain() {
        if pollFD >= 0 { fanout_wakeup_drain(pollFD) }
    }

    /// Called once, by the owner, after the last `signal()`.
    func close() {
        var fds: [Int32] = [pollFD, signalFD]
        fanout_wakeup_close(&fds)
    }
}
