import CLibSSH2

/// The connection's SFTP subsystem and its queue of requests: started on the first request, run one request at a
/// time (libssh2 keeps per-SFTP-session state for open/mkdir/rename/...), shut down after a quiet spell.
///
/// Confined to the connection's I/O thread; `step` advances it without blocking.
final class SFTPSubsystem {
    private enum State {
        case none
        case initializing
        case ready(OpaquePointer)
        case shuttingDown(OpaquePointer)
    }
    private var state: State = .none
    private var queue: [SFTPOperation] = []
    /// The SFTP subsystem holds a MaxSessions slot too: give it back when no SFTP request came for this long.
    private static let idleShutdownSeconds = 3.0
    private var idleShutdown = Deadline(nanos: 0)

    func enqueue(_ operation: SFTPOperation) {
        queue.append(operation)
    }

    /// When the loop must wake up to shut an idle subsystem down, if it is idle and running.
    var idleShutdownDue: Deadline? {
        guard case .ready = state, queue.isEmpty else { return nil }
        return idleShutdown
    }

    /// Returns true when anything happened.
    func step(_ context: SessionContext) -> Bool {
        guard let session = context.session else { return false }
        switch state {
        case .none:
            guard !queue.isEmpty, context.acquireOpener(SessionContext.sftpOpenerID) else { return false }
            state = .initializing
            return step(context)
        case .initializing:
            switch context.open(session, as: SessionContext.sftpOpenerID, { libssh2_sftp_init(session) }) {
            case .pending:
                return false
            case .failed(let code):
                state = .none
                if context.noteIfConnectionError(code) { return true }
                let failure = SSHError.sftpFailed(
                    context.endpoint, operation: "start", path: "(SFTP subsystem)",
                    reason: "the server refused the SFTP subsystem (\(context.lastErrorMessage(fallback: "?")))")
                failAll(failure)
                return true
            case .opened(let sftp):
                state = .ready(sftp)
                idleShutdown = Deadline(after: Self.idleShutdownSeconds)
                return step(context) || true
            }
        case .ready(let sftp):
            var progressed = false
            while let head = queue.first {
                let outcome = head.step(sftp: sftp, context: context)
                if context.fatalReason != nil { return true }
                switch outcome {
                case .blocked:
                    return progressed
                case .progressed:
                    return true
                case .done:
                    queue.removeFirst()
                    progressed = true
                    idleShutdown = Deadline(after: Self.idleShutdownSeconds)
                }
            }
            if idleShutdown.hasPassed() {
                state = .shuttingDown(sftp)
                return step(context) || true
            }
            return progressed
        case .shuttingDown(let sftp):
            let rc = libssh2_sftp_shutdown(sftp)
            if rc == LIBSSH2_ERROR_EAGAIN { return false }
            state = .none
            return true
        }
    }

    /// Answers every queued request with `error`.
    func failAll(_ error: SSHError) {
        for operation in queue { operation.finish(.failure(error)) }
        queue.removeAll()
    }

    /// Teardown, with the socket already shut down: ends the SFTP session if one is open.
    func release() {
        switch state {
        case .ready(let sftp), .shuttingDown(let sftp):
            repeatWhileAgain { libssh2_sftp_shutdown(sftp) }
        case .none, .initializing:
            break
        }
        state = .none
    }
}
