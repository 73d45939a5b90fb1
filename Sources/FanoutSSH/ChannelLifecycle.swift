import CLibSSH2

/// The life every channel operation shares (exec, tunnel): wait for the session's channel-open slot, open, then,
/// after the operation's own work on the open channel, close (libssh2_channel_close returns EAGAIN until the server's
/// CLOSE arrives) and free. One value per operation, advanced on the connection's I/O thread without blocking; the
/// operation does what it does with the channel while it is `open`.
struct ChannelLifecycle {
    enum Phase {
        /// Waiting for the session's channel-open slot (libssh2 keeps channel-open state per session).
        case queued
        case opening
        case open(OpaquePointer)
        /// Our CLOSE is sent (or about to be); done once the server's CLOSE arrives.
        case closing(OpaquePointer)
        case freeing(OpaquePointer)
        case finished
    }

    private(set) var phase: Phase = .queued

    var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// The channel this operation still owns, if any (for teardown).
    var channel: OpaquePointer? {
        switch phase {
        case .queued, .opening, .finished: nil
        case let .open(ch), let .closing(ch), let .freeing(ch): ch
        }
    }

    /// One step of opening (from `queued` or `opening`): `make` asks libssh2 for the channel. Refused: finished.
    mutating func open(_ context: SessionContext, session: OpaquePointer, id: UInt64,
                       _ make: () -> OpaquePointer?) -> SessionContext.ChannelOpenStep {
        let step = context.advanceOpen(session, as: id, make)
        switch step {
        case .pending:
            if case .queued = phase, context.holdsOpener(id) { phase = .opening }
        case .connectionLost:
            break
        case .refused:
            phase = .finished
        case .opened(let ch):
            phase = .open(ch)
        }
        return step
    }

    /// The operation is done with its open channel (or the consumer went away): close it.
    mutating func close() {
        if case .open(let ch) = phase { phase = .closing(ch) }
    }

    /// Nothing was opened, or the connection is gone and the session frees the channel: nothing left to do.
    mutating func forget() { phase = .finished }

    /// What winding a channel down did.
    enum Winding {
        /// The server's CLOSE or the free is still to come; `progressed`: a step was taken.
        case pending(progressed: Bool)
        case connectionLost
        case done
    }

    /// Closes and frees the channel (from `closing` or `freeing`); `closed` runs once the server's CLOSE arrived,
    /// before the free (an exec reads its exit status there).
    mutating func windDown(_ context: SessionContext, closed: (OpaquePointer) -> Void) -> Winding {
        var progressed = false
        if case let .closing(ch) = phase {
            switch context.advanceClose(ch) {
            case .pending: return .pending(progressed: false)
            case .connectionLost: return .connectionLost
            case .done: break
            }
            progressed = true
            closed(ch)
            phase = .freeing(ch)
        }
        guard case let .freeing(ch) = phase else { return .pending(progressed: progressed) }
        guard context.advanceFree(ch) else { return .pending(progressed: progressed) }
        phase = .finished
        return .done
    }

    /// What an operation's work on its open channel came to.
    enum Work {
        /// Nothing more to do until the socket or the channel has more; `progressed`: something moved.
        case wait(progressed: Bool)
        /// Something changed: step again.
        case again
        /// Done with the channel (its end, an error reported to the consumer): close it.
        case close
        /// The connection is gone (noted on the context): the session tears everything down.
        case connectionLost
    }

    /// Advances the whole life as far as it goes without blocking; returns true when anything happened. The
    /// operation supplies what differs: how to open its channel (`make`), what a refusal means (`refused`), whether
    /// to keep the channel once open (`opened`: false closes it at once), its `work` while open, what to do as the
    /// channel winds down (`windingDown`, each step) and once the server's CLOSE arrived (`closed`, before the free).
    mutating func step(_ context: SessionContext, session: OpaquePointer, id: UInt64, make: () -> OpaquePointer?,
                       refused: (String) -> Void, opened: () -> Bool, work: (OpaquePointer) -> Work,
                       windingDown: () -> Void = {}, closed: (OpaquePointer) -> Void = { _ in }) -> Bool {
        var progressed = false
        while true {
            switch phase {
            case .queued, .opening:
                switch open(context, session: session, id: id, make) {
                case .pending:
                    return progressed
                case .connectionLost:
                    return true
                case .refused(let reason):
                    refused(reason)
                    return true
                case .opened:
                    progressed = true
                    if !opened() { close() }
                }

            case .open(let ch):
                switch work(ch) {
                case .wait(let moved): return progressed || moved
                case .again: progressed = true
                case .close:
                    progressed = true
                    close()
                case .connectionLost: return true
                }

            case .closing, .freeing:
                windingDown()
                switch windDown(context, closed: closed) {
                case .pending(let moved): return progressed || moved
                case .connectionLost, .done: return true
                }

            case .finished:
                return progressed
            }
        }
    }
}
