import CLibSSH2

/// A session channel on which no command ever runs. Reading it drives libssh2's transport when no command is
/// running: without a reader, keepalive replies would sit unread in the socket (poll spinning on POLLIN) and a
/// dead or closing server would go unnoticed. It occupies one of sshd's MaxSessions.
///
/// Confined to the connection's I/O thread; `step` advances it without blocking.
final class InternalChannel {
    private enum State {
        case none
        case opening
        case open(OpaquePointer)
    }
    private var state: State
    /// Channels the server closed (sshd ChannelTimeout), freed in the background.
    private var retired: [OpaquePointer] = []

    /// Set-up opens the first channel (its time is part of the connect timings).
    init(open channel: OpaquePointer) {
        state = .open(channel)
    }

    /// Returns true when anything happened.
    func step(_ context: SessionContext) -> Bool {
        guard let session = context.session else { return false }
        var progressed = false
        retired.removeAll { libssh2_channel_free($0) != LIBSSH2_ERROR_EAGAIN }
        switch state {
        case .none:
            guard context.acquireOpener(SessionContext.internalChannelOpenerID) else { return false }
            state = .opening
            return step(context)
        case .opening:
            switch context.open(session, as: SessionContext.internalChannelOpenerID, {
                fanout_channel_open_session(session)
            }) {
            case .pending:
                return false
            case .failed(let code):
                if !context.noteIfConnectionError(code) {
                    context.noteFatal("cannot reopen the internal channel (\(context.lastErrorMessage(fallback: "?")))")
                }
                return true
            case .opened(let channel):
                state = .open(channel)
                return true
            }
        case .open(let channel):
            while true {
                let n = fanout_channel_read(channel, 0, context.scratch, context.scratchSize)
                if n > 0 { progressed = true; continue } // nothing runs there; discard
                if n == Int(LIBSSH2_ERROR_EAGAIN) { break }
                if n < 0 {
                    if context.noteIfConnectionError(Int32(truncatingIfNeeded: n)) { return true }
                }
                break
            }
            if libssh2_channel_eof(channel) != 0 {
                // sshd closed our idle channel (e.g. ChannelTimeout): retire it and open another.
                retired.append(channel)
                state = .none
                progressed = true
            }
        }
        return progressed
    }

    /// Sends one small packet the server reads and forgets: the window of this channel, on which nothing is ever
    /// sent, grows by 1 byte (libssh2 sends nothing for 0). Returns whether it went out. See `SessionLoop` for why a
    /// session behind a bastion sends it.
    func nudge() -> Bool {
        guard case .open(let channel) = state else { return false }
        return libssh2_channel_receive_window_adjust2(channel, 1, 1, nil) == 0
    }

    /// Teardown, with the socket already shut down: frees every channel this object still holds.
    func release() {
        for channel in retired { repeatWhileAgain { libssh2_channel_free(channel) } }
        if case .open(let channel) = state { repeatWhileAgain { libssh2_channel_free(channel) } }
        retired.removeAll()
        state = .none
    }
}
