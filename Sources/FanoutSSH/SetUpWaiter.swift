import CLibSSH2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Drives non-blocking libssh2 calls in blocking style during set-up (handshake, authentication, the first channel),
/// all under one deadline. libssh2's own blocking mode would wait with no deadline and could not notice that the
/// connecting task was cancelled; polling ourselves gives both.
struct SetUpWaiter {
    let context: SessionContext
    let mailbox: LoopMailbox
    let deadline: Deadline
    /// The budget the deadline came from, for the error message.
    let timeout: Double

    /// Repeats a libssh2 call while it returns EAGAIN, waiting on the socket in between.
    func retry(_ phase: String, _ call: () -> Int32) throws(SSHError) -> Int32 {
        while true {
            let rc = call()
            if rc != LIBSSH2_ERROR_EAGAIN { return rc }
            try waitForSocket(phase)
        }
    }

    /// `retry` for calls that report EAGAIN as a nil pointer plus the session's last errno.
    func retryPointer(_ phase: String, _ call: () -> OpaquePointer?) throws(SSHError) -> OpaquePointer? {
        while true {
            if let pointer = call() { return pointer }
            guard let session = context.session, libssh2_session_last_errno(session) == LIBSSH2_ERROR_EAGAIN else {
                return nil
            }
            try waitForSocket(phase)
        }
    }

    /// Also wakes on the mailbox's wake-up signal, so that cancelling the connecting task is noticed within the wait.
    private func waitForSocket(_ phase: String) throws(SSHError) {
        if mailbox.connectCancelled { throw .cancelled }
        context.io?.flush()
        let now = monotonicNanos()
        guard !deadline.hasPassed(now: now) else {
            throw .connectTimedOut(context.endpoint, phase: phase, seconds: timeout)
        }
        let wantsWrite = context.io?.hasPendingOutput == true
        var fds = [
            pollfd(fd: context.fd, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0),
            pollfd(fd: mailbox.wakeUp.pollFD, events: Int16(POLLIN), revents: 0),
        ]
        _ = poll(&fds, 2, deadline.pollMilliseconds(now: now, atMost: 1000))
        if fds[1].revents != 0 { mailbox.drainWake() }
    }
}
