import CLibSSH2

/// One remote command on its own channel: open → exec → stream stdout/stderr → close → exit status and signal → free.
/// Confined to the connection's I/O thread; `step` advances it as far as it can without blocking.
final class ExecOperation {
    let id: UInt64
    let command: String
    let deadline: Deadline?
    let timeoutSeconds: Double?
    private let sink: AsyncStream<SSHExecEvent>.Continuation
    /// Open, close, free (the server's CLOSE comes only once the remote command has ended).
    private var life = ChannelLifecycle()
    /// The exec request went out on the open channel: its output streams.
    private var started = false
    /// The consumer has its final event (or is gone): nothing more is yielded; the channel is only cleaned up.
    private(set) var sinkFinished = false

    init(id: UInt64, command: String, timeout: Double?, sink: AsyncStream<SSHExecEvent>.Continuation) {
        self.id = id
        self.command = command
        self.sink = sink
        timeoutSeconds = timeout
        deadline = timeout.map { Deadline(after: $0) }
    }

    var isFinished: Bool { life.isFinished }

    /// The channel this operation still owns, if any (for teardown).
    var channel: OpaquePointer? { life.channel }

    /// Ends the stream now with `event` (nil: the consumer went away) and closes the channel in the background.
    func abandon(with event: SSHExecEvent?) {
        finishSink(with: event)
        switch life.phase {
        case .queued:
            life.forget()
        case .opening:
            break // the open must complete (its state lives in the session); step() closes it afterwards
        case .open:
            life.close()
        case .closing, .freeing, .finished:
            break
        }
    }

    /// Teardown of a broken connection: report and forget the channel (the session frees it).
    func detach(with event: SSHExecEvent) {
        finishSink(with: event)
        life.forget()
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
        return life.step(context, session: session, id: id, make: { fanout_channel_open_session(session) },
                         refused: { reason in
                             finishSink(with: .failed(.channelFailed(context.endpoint, command: command, reason: reason)))
                         },
                         opened: { !sinkFinished },
                         work: { ch in work(on: ch, context) },
                         closed: { ch in
                             if !sinkFinished {
                                 let status = libssh2_channel_get_exit_status(ch)
                                 finishSink(with: .exited(status: status, signal: exitSignal(ch, session)))
                             }
                         })
    }

    /// On the open channel: send the exec request, then stream the output until the command's end of output.
    private func work(on ch: OpaquePointer, _ context: SessionContext) -> ChannelLifecycle.Work {
        if !started {
            let rc = fanout_channel_exec(ch, command)
            if rc == LIBSSH2_ERROR_EAGAIN { return .wait(progressed: false) }
            if rc != 0 {
                if context.noteIfConnectionError(rc) { return .connectionLost }
                finishSink(with: .failed(.channelFailed(
                    context.endpoint, command: command,
                    reason: context.lastErrorMessage(fallback: "exec request refused"))))
                return .close
            }
            started = true
            return .again
        }
        let (moved, error) = drain(ch, context)
        if let error {
            if context.noteIfConnectionError(error) { return .connectionLost }
            finishSink(with: .failed(.libssh2(
                context.endpoint, operation: "reading the output of `\(abbreviate(command))`", code: error,
                message: context.lastErrorMessage(fallback: "read failed"))))
            return .close
        }
        return libssh2_channel_eof(ch) != 0 ? .close : .wait(progressed: moved)
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
