import CLibSSH2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the parts of one connection share: the libssh2 session and its socket, and the few session-wide rules the
/// step machines (exec channels, SFTP requests, the internal channel) must follow together. They get this, not the
/// loop, so none of them can reach the mailbox, the thread or each other.
///
/// Confined to the connection's I/O thread, like everything libssh2 touches.
final class SessionContext {
    let endpoint: SSHEndpoint
    /// The TCP socket, -1 until connected. Owned here so teardown can shut it down whatever stage set-up reached.
    var fd: Int32 = -1
    var io: SocketIO?
    var session: OpaquePointer?

    /// One read buffer for every channel read: reads copy out at once, so the channels never hold on to it.
    let scratchSize = 64 * 1024
    let scratch: UnsafeMutableRawPointer

    /// libssh2 keeps channel-open state in the session: one channel open (exec, internal channel, SFTP init) at a
    /// time. Exec operations use their request id (from 1 up), the others the reserved ids below.
    private var opener: UInt64?
    static let internalChannelOpenerID: UInt64 = 0
    static let sftpOpenerID: UInt64 = .max

    /// A connection-level failure noticed inside a step machine; the loop fails everything with it.
    private(set) var fatalReason: String?

    init(endpoint: SSHEndpoint) {
        self.endpoint = endpoint
        scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchSize, alignment: 16)
    }

    deinit {
        scratch.deallocate()
    }

    func acquireOpener(_ id: UInt64) -> Bool {
        if opener == nil { opener = id }
        return opener == id
    }

    func holdsOpener(_ id: UInt64) -> Bool { opener == id }

    func releaseOpener(_ id: UInt64) {
        if opener == id { opener = nil }
    }

    enum OpenStep {
        case opened(OpaquePointer)
        /// libssh2 returned EAGAIN: call again when the socket moved; the slot stays taken.
        case pending
        /// The open failed with this libssh2 error code.
        case failed(Int32)
    }

    /// One attempt of a libssh2 open (a channel, the SFTP subsystem) made by the holder `id` of the channel-open
    /// slot. The slot is given back as soon as the open completed, either way: a holder that forgot to would block
    /// every later open on this connection.
    func open(_ session: OpaquePointer, as id: UInt64, _ call: () -> OpaquePointer?) -> OpenStep {
        if let opened = call() {
            releaseOpener(id)
            return .opened(opened)
        }
        let code = libssh2_session_last_errno(session)
        if code == LIBSSH2_ERROR_EAGAIN { return .pending }
        releaseOpener(id)
        return .failed(code)
    }

    enum ChannelOpenStep {
        /// Waiting for the channel-open slot, or for the server.
        case pending
        case opened(OpaquePointer)
        /// The server refused (the reason as libssh2 has it).
        case refused(String)
        /// The connection itself failed (noted: the loop fails everything).
        case connectionLost
    }

    /// One step of a channel's open by the exec or tunnel `id`: takes the session's channel-open slot when it is
    /// free, then calls `call` until the open completes.
    func advanceOpen(_ session: OpaquePointer, as id: UInt64, _ call: () -> OpaquePointer?) -> ChannelOpenStep {
        guard acquireOpener(id) else { return .pending }
        switch open(session, as: id, call) {
        case .pending: return .pending
        case .opened(let channel): return .opened(channel)
        case .failed(let code):
            return noteIfConnectionError(code) ? .connectionLost
                : .refused(lastErrorMessage(fallback: "channel open failed"))
        }
    }

    enum ChannelEndStep {
        case pending
        case done
        case connectionLost
    }

    /// One step of closing a channel: EAGAIN until the server's CLOSE arrives (sshd sends it once what ran on the
    /// channel has ended).
    func advanceClose(_ channel: OpaquePointer) -> ChannelEndStep {
        let rc = libssh2_channel_close(channel)
        if rc == LIBSSH2_ERROR_EAGAIN { return .pending }
        if rc != 0, noteIfConnectionError(rc) { return .connectionLost }
        return .done
    }

    /// One step of freeing a closed channel; true once freed.
    func advanceFree(_ channel: OpaquePointer) -> Bool {
        libssh2_channel_free(channel) != LIBSSH2_ERROR_EAGAIN
    }

    func lastErrorMessage(fallback: String) -> String {
        guard let session else { return fallback }
        var message: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        libssh2_session_last_error(session, &message, &length, 0)
        guard let message, length > 0 else { return fallback }
        return String(cString: message)
    }

    /// Errors that mean the whole connection is unusable, with a reason; nil for channel-level errors.
    func connectionErrorReason(_ code: Int32) -> String? {
        if let io, io.sawEOF {
            return "the server closed the connection"
        }
        if let io, io.socketError != 0 {
            return "socket error: \(LocalFiles.errorText(io.socketError))"
        }
        switch code {
        case LIBSSH2_ERROR_SOCKET_DISCONNECT, LIBSSH2_ERROR_SOCKET_RECV, LIBSSH2_ERROR_SOCKET_SEND,
             LIBSSH2_ERROR_SOCKET_TIMEOUT, LIBSSH2_ERROR_TIMEOUT, LIBSSH2_ERROR_DECRYPT, LIBSSH2_ERROR_INVALID_MAC,
             LIBSSH2_ERROR_KEX_FAILURE, LIBSSH2_ERROR_KEY_EXCHANGE_FAILURE, LIBSSH2_ERROR_PROTO,
             LIBSSH2_ERROR_BAD_USE, LIBSSH2_ERROR_ENCRYPT, LIBSSH2_ERROR_BAD_SOCKET, LIBSSH2_ERROR_SOCKET_NONE:
            return "libssh2 error \(code) (\(lastErrorMessage(fallback: "?")))"
        default:
            return nil
        }
    }

    /// If `code` means the connection is gone, remembers why (the loop then fails everything) and returns true.
    func noteIfConnectionError(_ code: Int32) -> Bool {
        guard let reason = connectionErrorReason(code) else { return false }
        if fatalReason == nil { fatalReason = reason }
        return true
    }

    /// Sets the connection-level failure directly, for failures that carry no libssh2 error code of that kind.
    func noteFatal(_ reason: String) {
        if fatalReason == nil { fatalReason = reason }
    }

    /// Why the connection is unusable, if it is: the socket's own verdict first (it is what really happened), then
    /// what a step machine noticed.
    func brokenConnection() -> SSHError? {
        if let io {
            if io.sawEOF {
                return .connectionLost(endpoint, reason: Self.serverClosedReason)
            }
            if io.socketError != 0 {
                return .connectionLost(endpoint, reason: "socket error: \(LocalFiles.errorText(io.socketError))")
            }
        }
        if let fatalReason { return .connectionLost(endpoint, reason: fatalReason) }
        return nil
    }

    static let serverClosedReason = "the server closed the connection (agent's sshd killed or restarted, or the host "
        + "went down)"
}
