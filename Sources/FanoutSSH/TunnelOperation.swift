import CLibSSH2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One ProxyJump hop through this connection: a direct-tcpip channel to `host:port` (opened by the server, as
/// `ssh -J` does), pumped both ways to one end of a local socket pair whose other end is the socket of the session
/// behind. Confined to the connection's I/O thread; `step` moves bytes as far as it can without blocking.
///
/// Flow control is each side's own: nothing more is read from the socket while bytes wait for the channel's window,
/// and nothing more is read from the channel while bytes wait for the socket, so neither buffer grows past one read.
/// When this connection ends, the socket is closed: the session behind sees its server close the connection.
///
/// Why in-process rather than a ProxyCommand pipe (`ssh -W host:port bastion`): one bastion connection serves every
/// agent behind it (a ProxyCommand is one ssh process and one bastion login per agent), the bastion's host key is
/// checked by the same code and policy as the agents', nothing depends on an OpenSSH client, and losing the bastion
/// ends every session behind it at once instead of after each one's dead-peer timeout.
final class TunnelOperation {
    let id: UInt64
    let host: String
    let port: Int
    /// Our end of the socket pair; -1 once closed.
    private(set) var fd: Int32
    let deadline: Deadline
    private let timeout: Double
    private var reply: CheckedContinuation<Result<Void, SSHError>, Never>?
    /// Open, close, free; while open, bytes are forwarded both ways.
    private var life = ChannelLifecycle()

    private var toChannel: [UInt8] = []
    private var toChannelStart = 0
    private var toSocket: [UInt8] = []
    private var toSocketStart = 0
    private var socketEOF = false
    private var channelEOF = false
    private var eofSent = false
    private var socketShutDown = false

    init(id: UInt64, host: String, port: Int, fd: Int32, timeout: Double,
         reply: CheckedContinuation<Result<Void, SSHError>, Never>) {
        self.id = id
        self.host = host
        self.port = port
        self.fd = fd
        self.timeout = timeout
        deadline = Deadline(after: timeout)
        self.reply = reply
    }

    var isFinished: Bool { life.isFinished }

    /// Still waiting for the server to open the channel.
    var isOpening: Bool { reply != nil }

    var channel: OpaquePointer? { life.channel }

    /// What poll() should wait for on our end of the pair (0: nothing, or the pair is closed).
    var pollEvents: Int16 {
        guard fd >= 0, case .open = life.phase else { return 0 }
        var events: Int16 = 0
        if toChannelStart == toChannel.count && !socketEOF { events |= Int16(POLLIN) }
        if toSocketStart < toSocket.count { events |= Int16(POLLOUT) }
        return events
    }

    private func answer(_ result: Result<Void, SSHError>) {
        reply?.resume(returning: result)
        reply = nil
    }

    private func closeSocket() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }

    /// The open did not complete in time (the bastion cannot reach the target and its TCP connect hangs).
    func expire(_ context: SessionContext) {
        guard reply != nil else { return }
        answer(.failure(.tunnelFailed(via: context.endpoint, target: "\(host):\(port)",
                                      reason: "the bastion did not open the connection within "
                                          + "\(formatSeconds(timeout)) (is the target up and reachable from it?)")))
        closeSocket()
        if case .queued = life.phase { life.forget() }
    }

    /// Teardown of this connection: the session behind loses its server.
    func detach(with error: SSHError) {
        answer(.failure(error))
        closeSocket()
        life.forget()
    }

    /// Advances as far as possible. Returns true when anything happened.
    func step(_ context: SessionContext) -> Bool {
        guard let session = context.session else { return false }
        return life.step(context, session: session, id: id, make: { fanout_channel_direct_tcpip(session, host, Int32(port)) },
                         refused: { reason in
                             answer(.failure(.tunnelFailed(via: context.endpoint, target: "\(host):\(port)", reason: reason)))
                             closeSocket()
                         },
                         opened: {
                             // Expired while the open was in flight: closed at once.
                             if reply == nil && fd < 0 { return false }
                             answer(.success(()))
                             return true
                         },
                         work: { ch in forward(ch, context) },
                         windingDown: { closeSocket() })
    }

    /// On the open channel: bytes both ways. The session behind closed its socket: the channel goes. The target
    /// closed and everything reached the socket: the session behind reads the end, then closes its socket.
    private func forward(_ ch: OpaquePointer, _ context: SessionContext) -> ChannelLifecycle.Work {
        let (moved, error) = pump(ch, context)
        if let error {
            return context.noteIfConnectionError(error) ? .connectionLost : .close
        }
        if socketEOF && toChannelStart == toChannel.count { return .close }
        if channelEOF && toSocketStart == toSocket.count { shutdownSocket() }
        return .wait(progressed: moved)
    }

    private func shutdownSocket() {
        guard !socketShutDown, fd >= 0 else { return }
        socketShutDown = true
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Moves bytes both ways until neither side takes or gives more. Returns a libssh2 error code on a channel error.
    /// Reads go through the session's scratch buffer and are copied out at once.
    private func pump(_ ch: OpaquePointer, _ context: SessionContext) -> (progressed: Bool, error: Int32?) {
        var progressed = false
        let scratch = context.scratch, size = context.scratchSize
        while true {
            var moved = false
            // Socket → channel.
            if toChannelStart == toChannel.count && !socketEOF && fd >= 0 {
                let n = recv(fd, scratch, size, 0)
                if n > 0 {
                    toChannel = Array(UnsafeRawBufferPointer(start: scratch, count: n))
                    toChannelStart = 0
                    moved = true
                } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                    socketEOF = true
                    moved = true
                }
            }
            while toChannelStart < toChannel.count {
                let n = toChannel.withUnsafeBytes {
                    fanout_channel_write(ch, $0.baseAddress! + toChannelStart, $0.count - toChannelStart)
                }
                if n > 0 {
                    toChannelStart += n
                    moved = true
                    continue
                }
                if n == Int(LIBSSH2_ERROR_EAGAIN) { break }
                return (progressed || moved, Int32(truncatingIfNeeded: n))
            }
            if socketEOF && toChannelStart == toChannel.count && !eofSent {
                let rc = libssh2_channel_send_eof(ch)
                if rc == 0 { eofSent = true; moved = true }
            }
            // Channel → socket.
            if toSocketStart == toSocket.count && !channelEOF {
                let n = fanout_channel_read(ch, 0, scratch, size)
                if n > 0 {
                    toSocket = Array(UnsafeRawBufferPointer(start: scratch, count: n))
                    toSocketStart = 0
                    moved = true
                } else if n == 0 || n == Int(LIBSSH2_ERROR_EAGAIN) {
                    if libssh2_channel_eof(ch) != 0 { channelEOF = true; moved = true }
                } else {
                    return (progressed || moved, Int32(truncatingIfNeeded: n))
                }
            }
            while toSocketStart < toSocket.count && fd >= 0 {
                let n = toSocket.withUnsafeBytes {
                    fanout_send(fd, $0.baseAddress! + toSocketStart, $0.count - toSocketStart, 0)
                }
                if n > 0 {
                    toSocketStart += n
                    moved = true
                    continue
                }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { break }
                // The session behind is gone: nothing it sent is worth more.
                socketEOF = true
                toSocketStart = toSocket.count
                toChannelStart = toChannel.count
                closeSocket()
                moved = true
            }
            if !moved { return (progressed, nil) }
            progressed = true
        }
    }
}
