import CLibSSH2
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The owner of one libssh2 session: a dedicated thread that sets the connection up (`SessionHandshake`) and then
/// runs a poll() loop over the non-blocking session and the mailbox's wake-up signal, stepping the exec channels, the
/// SFTP subsystem and the internal channel. Every libssh2 call for this session happens on this thread (libssh2
/// sessions are not thread-safe), and no blocking call ever runs on Swift's cooperative pool. Results leave through
/// continuations and AsyncStream continuations (both Sendable).
final class SessionLoop {
    private let context: SessionContext
    private let authentication: SSHAuthentication
    private let options: SSHOptions
    private let mailbox: LoopMailbox

    private var endpoint: SSHEndpoint { context.endpoint }

    /// Exists once set-up has opened the session's first channel.
    private var internalChannel: InternalChannel?
    private var execs: [ExecOperation] = []
    private var tunnels: [TunnelOperation] = []
    private let sftp = SFTPSubsystem()

    private var closeReplies: [CheckedContinuation<Void, Never>] = []
    private var closeRequested = false
    private var nextKeepalive = Deadline(nanos: 0)
    private var hangupSeen = false

    /// A connected socket to use instead of a TCP connect (the session runs through a bastion's tunnel).
    private let socket: Int32?

    private init(endpoint: SSHEndpoint, authentication: SSHAuthentication, options: SSHOptions, mailbox: LoopMailbox,
                 socket: Int32?) {
        context = SessionContext(endpoint: endpoint)
        self.socket = socket
        self.authentication = authentication
        var options = options
        // Keepalives must come often enough that a live server is never silent for deadPeerTimeout: libssh2 sends
        // them on whole-second boundaries, so the gap between two can reach interval + 1 s.
        if options.keepaliveInterval > 0 {
            options.deadPeerTimeout = max(options.deadPeerTimeout, 3)
            if Double(options.keepaliveInterval) * 3 > options.deadPeerTimeout {
                options.keepaliveInterval = max(1, Int(options.deadPeerTimeout / 3))
            }
        }
        self.options = options
        self.mailbox = mailbox
    }

    /// Starts the I/O thread; `reply` is resumed once the connection is ready or has failed.
    static func start(
        endpoint: SSHEndpoint, authentication: SSHAuthentication, options: SSHOptions, mailbox: LoopMailbox,
        socket: Int32? = nil, reply: CheckedContinuation<Result<ConnectInfo, SSHError>, Never>
    ) {
        let thread = Thread {
            let loop = SessionLoop(endpoint: endpoint, authentication: authentication, options: options, mailbox: mailbox,
                                   socket: socket)
            loop.run(reply: reply)
        }
        thread.name = "fanout-ssh \(endpoint)"
        thread.start()
    }

    private func run(reply: CheckedContinuation<Result<ConnectInfo, SSHError>, Never>) {
        let info: ConnectInfo
        do {
            let handshake = SessionHandshake(context: context, authentication: authentication, options: options,
                                             mailbox: mailbox, socket: socket)
            let established = try handshake.run()
            internalChannel = InternalChannel(open: established.internalChannel)
            info = established.info
        } catch {
            tearDown(failure: error)
            reply.resume(returning: .failure(error))
            return
        }
        mailbox.setAlive(true)
        reply.resume(returning: .success(info))
        let failure = eventLoop()
        tearDown(failure: failure)
    }

    // MARK: - Event loop

    /// Runs until the connection is closed (returns nil) or lost (returns the error for everything still running).
    private func eventLoop() -> SSHError? {
        guard let io = context.io, let session = context.session else {
            return .connectionLost(endpoint, reason: "no session")
        }
        nextKeepalive = Deadline(after: 0)
        var fds = [
            pollfd(fd: context.fd, events: 0, revents: 0),
            pollfd(fd: mailbox.wakeUp.pollFD, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            for request in mailbox.takeAll() { accept(request) }
            if closeRequested { return nil }

            // Step until nothing moves: a transport read done for one channel may queue packets for another one
            // that was already stepped, so a pass that received bytes is followed by another pass.
            let (receivedBefore, sentBefore) = (io.bytesReceived, io.bytesSent)
            var passes = 0
            while true {
                let received = io.bytesReceived
                let progressed = stepAll()
                if let failure = context.brokenConnection() { return failure }
                passes += 1
                if (!progressed && io.bytesReceived == received) || passes >= 64 { break }
            }
            if hangupSeen {
                return .connectionLost(endpoint, reason: SessionContext.serverClosedReason)
            }
            // Behind a bastion, our server's socket leads to the bastion's sshd, which ACKs late (delayed ACK) while
            // our server holds its next small packet until that ACK (Nagle: sshd sets no TCP_NODELAY on a
            // non-interactive session): 40 ms on every reply of two packets (measured: 44 ms per command through
            // two bastions, against 4 ms through one). Sending anything at all carries the ACK back at once.
            if socket != nil, io.bytesReceived != receivedBefore, io.bytesSent == sentBefore {
                _ = internalChannel?.nudge()
            }

            var now = monotonicNanos()
            if options.keepaliveInterval > 0 && nextKeepalive.hasPassed(now: now) {
                var seconds: Int32 = 0
                let rc = libssh2_keepalive_send(session, &seconds)
                if rc != 0 && rc != LIBSSH2_ERROR_EAGAIN {
                    return .connectionLost(
                        endpoint, reason: "cannot send keepalive (\(context.lastErrorMessage(fallback: "?")))")
                }
                nextKeepalive = Deadline(after: Double(max(1, seconds)), now: now)
            }
            io.flush()
            if let failure = context.brokenConnection() { return failure }

            now = monotonicNanos()
            if let failure = deadPeer(io, now: now) { return failure }
            expireCommands(now)

            let timeoutMs = passes >= 64 ? 0 : pollTimeoutMilliseconds(io, now: now)
            fds[0].events = Int16(POLLIN) | FANOUT_POLLRDHUP | (io.hasPendingOutput ? Int16(POLLOUT) : 0)
            fds[0].revents = 0
            fds[1].revents = 0
            fds.removeSubrange(2...)
            for tunnel in tunnels where tunnel.pollEvents != 0 {
                fds.append(pollfd(fd: tunnel.fd, events: tunnel.pollEvents, revents: 0))
            }
            _ = poll(&fds, nfds_t(fds.count), timeoutMs)
            if fds[1].revents != 0 { mailbox.drainWake() }
            if fds[0].revents & (Int16(POLLHUP) | Int16(POLLERR)) != 0 {
                // Let one more pass read what the server sent before it went away (exit statuses), then give up.
                hangupSeen = true
            }
        }
    }

    /// We are owed a reply (keepalives go out every interval, and a live sshd answers each), yet nothing at all
    /// arrived for deadPeerTimeout. Counted from the last byte received, not from the first unanswered send, which
    /// trails the last reply by up to a keepalive interval.
    private func deadPeer(_ io: SocketIO, now: UInt64) -> SSHError? {
        guard let silence = silenceLimit(io), silence.hasPassed(now: now) else { return nil }
        return .connectionLost(endpoint, reason: "no data at all from the server for "
            + "\(formatSeconds(secondsElapsed(from: io.lastReceive, to: now))) although keepalive requests were sent "
            + "(dead-peer timeout \(formatSeconds(options.deadPeerTimeout))): the agent or its sshd is "
            + "frozen, or the network path is gone")
    }

    /// How long poll() may sleep: until the next thing the loop must do by itself (a keepalive, the dead-peer
    /// verdict, a command's timeout, shutting an idle SFTP subsystem down), and at most 1 s.
    private func pollTimeoutMilliseconds(_ io: SocketIO, now: UInt64) -> Int32 {
        var due: [Deadline] = []
        if options.keepaliveInterval > 0 { due.append(nextKeepalive) }
        if let silence = silenceLimit(io) { due.append(silence) }
        for op in execs where !op.sinkFinished {
            if let deadline = op.deadline { due.append(deadline) }
        }
        for tunnel in tunnels where tunnel.isOpening { due.append(tunnel.deadline) }
        if let idle = sftp.idleShutdownDue { due.append(idle) }
        return due.min()?.pollMilliseconds(now: now, atMost: 1000) ?? 1000
    }

    /// While we are owed a reply (and keepalives are on): when the server's silence since its last byte becomes a
    /// dead peer.
    private func silenceLimit(_ io: SocketIO) -> Deadline? {
        guard options.keepaliveInterval > 0, io.awaitingReplySince != nil else { return nil }
        return Deadline(after: options.deadPeerTimeout, now: io.lastReceive)
    }

    private func accept(_ request: LoopRequest) {
        switch request {
        case let .exec(id, command, timeout, sink):
            execs.append(ExecOperation(id: id, command: command, timeout: timeout, sink: sink))
        case let .tunnel(id, host, port, fd, timeout, reply):
            tunnels.append(TunnelOperation(id: id, host: host, port: port, fd: fd, timeout: timeout, reply: reply))
        case let .cancelExec(id):
            execs.first { $0.id == id }?.abandon(with: nil)
        case let .sftp(request, reply):
            sftp.enqueue(SFTPOperation(request: request, reply: reply))
        case let .close(reply):
            closeRequested = true
            if let reply { closeReplies.append(reply) }
        }
    }

    private func stepAll() -> Bool {
        var progressed = internalChannel?.step(context) ?? false
        for op in execs {
            if op.step(context) { progressed = true }
            if context.fatalReason != nil { return true }
        }
        execs.removeAll { $0.isFinished }
        for tunnel in tunnels {
            if tunnel.step(context) { progressed = true }
            if context.fatalReason != nil { return true }
        }
        tunnels.removeAll { $0.isFinished }
        if sftp.step(context) { progressed = true }
        return progressed
    }

    private func expireCommands(_ now: UInt64) {
        for op in execs where !op.sinkFinished {
            guard let deadline = op.deadline, deadline.hasPassed(now: now) else { continue }
            op.abandon(with: .failed(.commandTimedOut(endpoint, command: op.command, seconds: op.timeoutSeconds ?? 0)))
        }
        for tunnel in tunnels where tunnel.isOpening && tunnel.deadline.hasPassed(now: now) {
            tunnel.expire(context)
        }
    }

    // MARK: - Teardown

    /// Ends everything. `failure` nil: an orderly close. The socket is shut down BEFORE libssh2 frees channels:
    /// freeing an open channel otherwise waits for the server's CLOSE, i.e. for the remote command to end.
    private func tearDown(failure: SSHError?) {
        mailbox.setAlive(false)
        let reported = failure ?? .connectionClosed(endpoint)
        for op in execs { op.detach(with: .failed(reported)) }
        // Every session behind this one (ProxyJump) loses its server now.
        var tunnelChannels: [OpaquePointer] = []
        for tunnel in tunnels {
            if let channel = tunnel.channel { tunnelChannels.append(channel) }
            tunnel.detach(with: reported)
        }
        sftp.failAll(reported)

        let fd = context.fd
        if let session = context.session, failure == nil, let io = context.io {
            _ = fanout_session_disconnect(session, "fanout: connection closed")
            let deadline = Deadline(after: 0.2)
            while io.hasPendingOutput && io.flush() && !deadline.hasPassed() {
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&pfd, 1, 20)
            }
        }
        if fd >= 0 {
            shutdown(fd, Int32(SHUT_RDWR))
            context.io?.markBroken(EPIPE)
        }
        if let session = context.session {
            sftp.release()
            for op in execs {
                if let channel = op.channel { repeatWhileAgain { libssh2_channel_free(channel) } }
            }
            for channel in tunnelChannels { repeatWhileAgain { libssh2_channel_free(channel) } }
            internalChannel?.release()
            repeatWhileAgain { libssh2_session_free(session) }
        }
        execs.removeAll()
        tunnels.removeAll()
        internalChannel = nil
        context.session = nil
        if fd >= 0 {
            close(fd)
            context.fd = -1
        }
        for request in mailbox.shutDown(reason: reported) {
            switch request {
            case let .exec(_, _, _, sink):
                sink.yield(.failed(reported))
                sink.finish()
            case .cancelExec:
                break
            case let .tunnel(_, _, _, fd, _, reply):
                close(fd)
                reply.resume(returning: .failure(reported))
            case let .sftp(_, reply):
                reply.resume(returning: .failure(reported))
            case let .close(reply):
                reply?.resume()
            }
        }
        for reply in closeReplies { reply.resume() }
        closeReplies.removeAll()
    }
}

/// With the socket shut down nothing can wait on the server any more; the bound only guards against a libssh2
/// surprise turning teardown into a hang.
func repeatWhileAgain(_ call: () -> Int32) {
    var attempts = 0
    while call() == LIBSSH2_ERROR_EAGAIN && attempts < 100 {
        attempts += 1
    }
}
