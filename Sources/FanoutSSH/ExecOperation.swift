import CLibSSH2

/// One remote command on its own channel: open → exec → stream stdout/stderr → close → exit status and signal → free.
/// Confined to the connection's I/O thread; `step` advances it as far as it can without blocking.
final class ExecOperation {
    enum State {
        /// Waiting for the session's channel-open slot (libssh2 keeps channel-open state per session).
        case queued
        case opening
        case starting(OpaquePointer)
        case streaming(OpaquePointer)
        /// Our CLOSE is sent (or about to be); libssh2_channel_close returns EAGAIN until the server's CLOSE
        /// arrives, which sshd sends only once the remote command has ended.
        case closing(OpaquePointer)
        case freeing(OpaquePointer)
        case finished
    }

    let id: UInt64
    let command: String
    let deadline: Deadline?
    let timeoutSeconds: Double?
    private let sink: AsyncStream<SSHExecEvent>.Continuation
    private(set) var state: State = .queued
    /// The consumer has its final event (or is gone): nothing more is yielded; the channel is only cleaned up.
    private(set) var sinkFinished = false

    init(id: UInt64, command: String, timeout: Double?, sink: AsyncStream<SSHExecEvent>.Continuation) {
        self.id = id
        self.command = command
        self.sink = sink
        timeoutSeconds = timeout
        deadline = timeout.map { Deadline(after: $0) }
    }

    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// The channel this operation still owns, if any (for teardown).
    var channel: OpaquePointer? {
        switch state {
        case .queued, .opening, .finished: return nil
        case let .starting(ch), let .streaming(ch), let .closing(ch), let .freeing(ch): return ch
        }
    }

    /// Ends the stream now with `event` (nil: the consumer went away) and closes the channel in the background.
    func abandon(with event: SSHExecEvent?) {
        finishSink(with: event)
        switch state {
        case .queued:
            state = .finished
        case .opening:
            break // the open must complete (its state lives in the session); step() closes it afterwards
        case let .starting(ch), let .streaming(ch):
            state = .closing(ch)
        case .closing, .freeing, .finished:
            break
        }
    }

    /// Teardown of a broken connection: report and forget the channel (the session frees it).
    func detach(with event: SSHExecEvent) {
        finishSink(with: event)
        state = .finished
    }

    private func finishSink(with event: SSHExecEvent?) {
        guard !sinkFinished else { return }
        sinkFinished = true
        if let event { sink.yield(event) }
        sink.finish()
    }

    /// Advances as far as possible. Returns true when anything happened (data delivered, state changed).
    func step(_ context: SessionContext) -> Bool {
        guard let session = context.session else { return false }
        var progressed = false
        while true {
            switch state {
            case .queued, .opening:
                switch context.advanceOpen(session, as: id, { fanout_channel_open_session(session) }) {
                case .pending:
                    if case .queued = state, context.holdsOpener(id) { state = .opening }
                    return progressed
                case .connectionLost:
                    return true
                case .refused(let reason):
                    finishSink(with: .failed(.channelFailed(context.endpoint, command: command, reason: reason)))
                    state = .finished
                    return true
                case .opened(let ch):
                    progressed = true
                    state = sinkFinished ? .closing(ch) : .starting(ch)
                }

            case let .starting(ch):
                let rc = fanout_channel_exec(ch, command)
                if rc == LIBSSH2_ERROR_EAGAIN { return progressed }
                progressed = true
                if rc != 0 {
                    if context.noteIfConnectionError(rc) { return true }
                    finishSink(with: .failed(.channelFailed(
                        context.endpoint, command: command,
                        reason: context.lastErrorMessage(fallback: "exec request refused"))))
                    state = .closing(ch)
                    continue
                }
                state = .streaming(ch)

            case let .streaming(ch):
                let (moved, error) = drain(ch, context)
                progressed = progressed || moved
                if let error {
                    if context.noteIfConnectionError(error) { return true }
                    finishSink(with: .failed(.libssh2(
                        context.endpoint, operation: "reading the output of `\(abbreviate(command))`", code: error,
                        message: context.lastErrorMessage(fallback: "read failed"))))
                    state = .closing(ch)
                    continue
                }
                guard libssh2_channel_eof(ch) != 0 else { return progressed }
                progressed = true
                state = .closing(ch)

            case let .closing(ch):
                switch context.advanceClose(ch) {
                case .pending: return progressed
                case .connectionLost: return true
                case .done: break
                }
                progressed = true
                if !sinkFinished {
                    let status = libssh2_channel_get_exit_status(ch)
                    finishSink(with: .exited(status: status, signal: exitSignal(ch, session)))
                }
                state = .freeing(ch)

            case let .freeing(ch):
                guard context.advanceFree(ch) else { return progressed }
                state = .finished
                return true

            case .finished:
                return progressed
            }
        }
    }

    /// Reads stdout and stderr until libssh2 has nothing more buffered (both streams: an unread stderr would
    /// hold the channel window shut and stall stdout too).
    private func drain(_ ch: OpaquePointer, _ context: SessionContext) -> (progressed: Bool, error: Int32?) {
        var progressed = false
        for stream in [Int32(0), Int32(SSH_EXTENDED_DATA_STDERR)] {
            while true {
                let n = fanout_channel_read(ch, stream, context.scratch, context.scratchSize)
                if n > 0 {
                    progressed = true
                    let bytes = Array(UnsafeRawBufferPointer(start: context.scratch, count: n))
                    if !sinkFinished { sink.yield(stream == 0 ? .stdout(bytes) : .stderr(bytes)) }
                    continue
                }
                if n == 0 || n == Int(LIBSSH2_ERROR_EAGAIN) { break }
                return (progressed, Int32(truncatingIfNeeded: n))
            }
        }
        return (progressed, nil)
    }

    /// libssh2_channel_get_exit_signal: the signal name without "SIG" (a command killed by a signal reports exit
    /// status 0, so the status alone would call it a success).
    private func exitSignal(_ ch: OpaquePointer, _ session: OpaquePointer) -> String? {
        var name: UnsafeMutablePointer<CChar>?
        var length = 0
        guard libssh2_channel_get_exit_signal(ch, &name, &length, nil, nil, nil, nil) == 0, let name else {
            return nil
        }
        defer { libssh2_free(session, name) }
        let signal = String(decoding: UnsafeRawBufferPointer(start: name, count: length), as: UTF8.self)
        return signal.isEmpty ? nil : signal
    }
}
