import CLibSSH2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a successful connect hands back to the caller's task.
struct ConnectInfo: Sendable {
    var fingerprint: String
    var keyType: String
    var notes: [String]
    var timings: SSHConnectTimings
}

/// The owner of one libssh2 session: a dedicated thread that connects, verifies, authenticates and then runs a
/// poll() loop over the non-blocking session and the mailbox's eventfd. Every libssh2 call for this session
/// happens on this thread (libssh2 sessions are not thread-safe), and no blocking call ever runs on Swift's
/// cooperative pool. Results leave through continuations and AsyncStream continuations (both Sendable).
final class SessionLoop {
    let endpoint: SSHEndpoint
    private let authentication: SSHAuthentication
    private let options: SSHOptions
    private let mailbox: LoopMailbox

    private var fd: Int32 = -1
    private var io: SocketIO?
    private(set) var session: OpaquePointer?

    /// Read buffer for channel reads.
    let scratchSize = 64 * 1024
    let scratch: UnsafeMutableRawPointer

    /// libssh2 keeps channel-open state in the session: one channel open (exec, pump, SFTP init) at a time.
    private var opener: UInt64?
    private static let pumpOpenerID: UInt64 = 0
    private static let sftpOpenerID: UInt64 = .max

    /// A session channel on which no command ever runs. Reading it drives libssh2's transport when no command is
    /// running: without a reader, keepalive replies would sit unread in the socket (poll spinning on POLLIN) and a
    /// dead or closing server would go unnoticed. It occupies one of sshd's MaxSessions.
    private enum Pump {
        case none
        case opening
        case open(OpaquePointer)
    }
    private var pump: Pump = .none
    /// Channels of a pump the server closed (sshd ChannelTimeout), freed in the background.
    private var retiredPumps: [OpaquePointer] = []

    private var execs: [ExecOperation] = []

    private enum SFTPState {
        case none
        case initializing
        case ready(OpaquePointer)
        case shuttingDown(OpaquePointer)
    }
    private var sftpState: SFTPState = .none
    private var sftpQueue: [SFTPOperation] = []
    private var sftpIdleSince: UInt64 = 0
    /// The SFTP subsystem holds a MaxSessions slot too: give it back when no SFTP request came for this long.
    private let sftpIdleShutdownNanos: UInt64 = 3_000_000_000

    /// A connection-level failure noticed inside an operation's step (socket gone, protocol error).
    private var fatalReason: String?
    private var closeReplies: [CheckedContinuation<Void, Never>] = []
    private var closeRequested = false
    private var nextKeepalive: UInt64 = 0
    private var hangupSeen = false

    private init(endpoint: SSHEndpoint, authentication: SSHAuthentication, options: SSHOptions, mailbox: LoopMailbox) {
        self.endpoint = endpoint
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
        scratch = UnsafeMutableRawPointer.allocate(byteCount: scratchSize, alignment: 16)
    }

    deinit {
        scratch.deallocate()
    }

    /// Starts the I/O thread; `reply` is resumed once the connection is ready or has failed.
    static func start(
        endpoint: SSHEndpoint, authentication: SSHAuthentication, options: SSHOptions, mailbox: LoopMailbox,
        reply: CheckedContinuation<Result<ConnectInfo, SSHError>, Never>
    ) {
        let thread = Thread {
            let loop = SessionLoop(endpoint: endpoint, authentication: authentication, options: options, mailbox: mailbox)
            loop.run(reply: reply)
        }
        thread.name = "fanout-ssh \(endpoint)"
        thread.start()
    }

    private func run(reply: CheckedContinuation<Result<ConnectInfo, SSHError>, Never>) {
        let info: ConnectInfo
        do {
            info = try setUp()
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

    // MARK: - Set-up (blocking style, on this thread, with deadlines)

    private func setUp() throws(SSHError) -> ConnectInfo {
        guard ensureLibSSH2Initialized() else {
            throw .libssh2(endpoint, operation: "libssh2_init", code: -1, message: "libssh2 could not be initialised")
        }
        guard mailbox.wakeFD >= 0 else {
            throw .libssh2(endpoint, operation: "eventfd", code: errno, message: LocalFiles.errorText(errno))
        }
        let start = monotonicNanos()
        fd = try TCPConnector.connect(endpoint: endpoint, timeout: options.connectTimeout,
                                      userTimeout: options.deadPeerTimeout, cancelled: { [mailbox] in
            mailbox.connectCancelled
        })
        let connected = monotonicNanos()
        let io = SocketIO(fd: fd)
        self.io = io
        guard let session = fanout_session_init(io.abstractPointer) else {
            throw .libssh2(endpoint, operation: "libssh2_session_init", code: -6, message: "out of memory")
        }
        self.session = session
        installIOCallbacks(on: session)
        libssh2_session_set_blocking(session, 0)

        let deadline = connected &+ UInt64(options.connectTimeout * 1e9)
        var notes: [String] = []
        let knownHosts = try KnownHosts(path: options.knownHostsPath, session: session)
        if !knownHosts.skippedLines.isEmpty {
            notes.append("known_hosts \(options.knownHostsPath): skipped lines libssh2 cannot parse: "
                + knownHosts.skippedLines.map(String.init).joined(separator: ", "))
        }

        // Ask only for host key types known_hosts holds for this host (libssh2 would otherwise pick ECDSA on a
        // host that also has an ed25519 key, and an ed25519-only known_hosts would call it unknown).
        let knownTypes = knownHosts.knownKeyTypes(host: endpoint.host, port: endpoint.port)
        let preferred = knownTypes.isEmpty ? HostKeyType.preferenceForUnknownHosts : knownTypes
        if libssh2_session_method_pref(session, LIBSSH2_METHOD_HOSTKEY, preferred.map(\.name).joined(separator: ",")) != 0 {
            throw .hostKeyTypeNotOffered(endpoint, knownTypes: knownTypes.map(\.name),
                                         knownHostsPath: options.knownHostsPath,
                                         reason: "libssh2 1.10 supports none of these key types")
        }

        let rc = try retry("SSH handshake", deadline: deadline) { libssh2_session_handshake(session, fd) }
        if rc != 0 {
            let message = lastErrorMessage(fallback: "error \(rc)")
            if io.sawEOF {
                throw .handshakeFailed(endpoint, reason: "the server closed the connection during the handshake "
                    + "(sshd refusing connections: MaxStartups, or not an SSH server?) (\(message))")
            }
            if !knownTypes.isEmpty && (rc == LIBSSH2_ERROR_KEX_FAILURE || rc == LIBSSH2_ERROR_METHOD_NONE) {
                throw .hostKeyTypeNotOffered(endpoint, knownTypes: knownTypes.map(\.name),
                                             knownHostsPath: options.knownHostsPath, reason: message)
            }
            throw .handshakeFailed(endpoint, reason: message)
        }
        let handshaken = monotonicNanos()

        let hostKey = try verifyHostKey(session, knownHosts, notes: &notes)
        let verified = monotonicNanos()
        try authenticate(session, deadline: deadline)
        let authenticated = monotonicNanos()

        // Keepalive only now: sent before the handshake completes it travels in clear text and sshd hangs up.
        if options.keepaliveInterval > 0 {
            libssh2_keepalive_config(session, 1, UInt32(options.keepaliveInterval))
        }
        guard let channel = try retryPointer("opening the session's internal channel", deadline: deadline, {
            fanout_channel_open_session(session)
        }) else {
            throw .channelFailed(endpoint, command: "(internal keepalive channel)",
                                 reason: lastErrorMessage(fallback: "channel open failed"))
        }
        pump = .open(channel)
        let ready = monotonicNanos()
        let timings = SSHConnectTimings(
            tcpConnect: Double(connected - start) / 1e9,
            handshake: Double(handshaken - connected) / 1e9,
            hostKeyCheck: Double(verified - handshaken) / 1e9,
            authentication: Double(authenticated - verified) / 1e9,
            firstChannel: Double(ready - authenticated) / 1e9,
            total: Double(ready - start) / 1e9)
        return ConnectInfo(fingerprint: hostKey.fingerprint, keyType: hostKey.type, notes: notes, timings: timings)
    }

    private func verifyHostKey(
        _ session: OpaquePointer, _ knownHosts: KnownHosts, notes: inout [String]
    ) throws(SSHError) -> (fingerprint: String, type: String) {
        var length = 0
        var rawType: Int32 = 0
        guard let keyPointer = libssh2_session_hostkey(session, &length, &rawType),
              let type = HostKeyType(sessionHostKeyType: rawType) else {
            throw .handshakeFailed(endpoint, reason: "the server's host key is missing or of a type libssh2 1.10 "
                + "does not know")
        }
        let key = Array(UnsafeRawBufferPointer(start: keyPointer, count: length))
        guard let hash = libssh2_hostkey_hash(session, LIBSSH2_HOSTKEY_HASH_SHA256) else {
            throw .handshakeFailed(endpoint, reason: "libssh2 could not hash the host key")
        }
        let digest = Array(UnsafeRawBufferPointer(start: hash, count: 32))
        let fingerprint = "SHA256:" + Base64.encode(digest, padding: false)
        let path = options.knownHostsPath
        switch knownHosts.verify(host: endpoint.host, port: endpoint.port, key: key, type: type) {
        case .match:
            break
        case .revoked:
            throw .hostKeyRevoked(endpoint, fingerprint: fingerprint, knownHostsPath: path)
        case .mismatch(let line):
            throw .hostKeyChanged(endpoint, fingerprint: fingerprint, keyType: type.name, knownHostsPath: path,
                                  offendingLine: line)
        case .failure(let message):
            throw .knownHostsFailed(path: path, reason: message)
        case .notFound:
            let line = KnownHosts.line(for: endpoint, type: type, key: key)
            switch options.hostKeyPolicy {
            case .strict:
                throw .unknownHostKey(endpoint, fingerprint: fingerprint, keyType: type.name, knownHostsPath: path,
                                      lineToAdd: line)
            case .acceptNew:
                try knownHosts.append(line)
                notes.append("recorded the new \(type.name) host key \(fingerprint) of \(endpoint.knownHostsName) "
                    + "in \(path) (host key policy accept-new)")
            }
        }
        return (fingerprint, type.name)
    }

    private func authenticate(_ session: OpaquePointer, deadline: UInt64) throws(SSHError) {
        switch authentication {
        case let .keyFile(path, passphrase):
            try authenticateWithKeyFile(session, path: path, passphrase: passphrase, deadline: deadline)
        case let .agent(socketPath):
            try authenticateWithAgent(session, socketPath: socketPath, deadline: deadline)
        }
    }

    private func authenticateWithKeyFile(
        _ session: OpaquePointer, path: String, passphrase: String?, deadline: UInt64
    ) throws(SSHError) {
        let info: PrivateKeyInfo
        switch PrivateKeyInfo.inspect(path: path) {
        case .failure(.unreadable(let reason)):
            throw .keyFileUnusable(path: path, reason: "cannot read it: \(reason). Check the path and permissions.")
        case .success(let inspected):
            info = inspected
        }
        if info.isEncrypted == true && (passphrase ?? "").isEmpty {
            throw .keyFileUnusable(path: path, reason: "it is protected by a passphrase and none was given. Give "
                + "the passphrase, or load the key into ssh-agent and authenticate through the agent.")
        }
        let user = endpoint.user
        let rc = try retry("authentication", deadline: deadline) {
            libssh2_userauth_publickey_fromfile_ex(session, user, UInt32(user.utf8.count), nil, path, passphrase)
        }
        if rc == 0 { return }
        if let reason = connectionErrorReason(rc) {
            throw .connectionLost(endpoint, reason: "during authentication: \(reason)")
        }
        let message = lastErrorMessage(fallback: "error \(rc)")
        if rc == LIBSSH2_ERROR_FILE || rc == LIBSSH2_ERROR_KEYFILE_AUTH_FAILED {
            let reason = info.isEncrypted == true
                ? "wrong passphrase, or a key format libssh2 1.10 cannot read (\(message))."
                : "libssh2 1.10 cannot read it (\(message)). Use an OpenSSH-format ed25519 or ECDSA key "
                    + "(`ssh-keygen -t ed25519`)."
            throw .keyFileUnusable(path: path, reason: reason)
        }
        if info.isRSA {
            throw .rsaKeyRefused(endpoint, keyDescription: "\(path) (ssh-rsa)")
        }
        throw .authenticationFailed(endpoint, method: "public key \(path) (\(info.keyType ?? "unknown type"))",
                                    reason: "the server refused the key (\(message))")
    }

    private func authenticateWithAgent(
        _ session: OpaquePointer, socketPath: String?, deadline: UInt64
    ) throws(SSHError) {
        let path = socketPath ?? ProcessInfo.processInfo.environment["SSH_AUTH_SOCK"]
        guard let path, !path.isEmpty else {
            throw .agentUnavailable(socketPath: nil, reason: "SSH_AUTH_SOCK is not set")
        }
        guard let agent = libssh2_agent_init(session) else {
            throw .agentUnavailable(socketPath: path, reason: "libssh2_agent_init failed")
        }
        defer {
            libssh2_agent_disconnect(agent)
            libssh2_agent_free(agent)
        }
        libssh2_agent_set_identity_path(agent, path)
        if libssh2_agent_connect(agent) != 0 {
            throw .agentUnavailable(socketPath: path, reason: "cannot connect to it (\(lastErrorMessage(fallback: "?")))")
        }
        if libssh2_agent_list_identities(agent) != 0 {
            throw .agentUnavailable(socketPath: path, reason: "cannot list its keys (\(lastErrorMessage(fallback: "?")))")
        }
        var previous: UnsafeMutablePointer<libssh2_agent_publickey>?
        var tried: [String] = []
        var onlyRSA = true
        var lastMessage = ""
        while true {
            var identity: UnsafeMutablePointer<libssh2_agent_publickey>?
            let found = libssh2_agent_get_identity(agent, &identity, previous)
            if found == 1 { break }
            guard found == 0, let identity else {
                throw .agentUnavailable(socketPath: path, reason: "cannot read its keys (\(lastErrorMessage(fallback: "?")))")
            }
            previous = identity
            let blob = Array(UnsafeBufferPointer(start: identity.pointee.blob, count: Int(identity.pointee.blob_len)))
            let type = PrivateKeyInfo.keyType(ofPublicKeyBlob: blob) ?? "unknown"
            let comment = identity.pointee.comment.map { String(cString: $0) } ?? ""
            tried.append(comment.isEmpty ? type : "\(type) \(comment)")
            if type != "ssh-rsa" { onlyRSA = false }
            let user = endpoint.user
            let rc = try retry("authentication", deadline: deadline) { libssh2_agent_userauth(agent, user, identity) }
            if rc == 0 { return }
            if let reason = connectionErrorReason(rc) {
                let hint = tried.count > 1
                    ? " after \(tried.count) keys from the agent (sshd's MaxAuthTries, default 6, may have been hit: "
                        + "keep fewer keys in the agent, or use a key file)"
                    : ""
                throw .connectionLost(endpoint, reason: "during authentication\(hint): \(reason)")
            }
            lastMessage = lastErrorMessage(fallback: "error \(rc)")
        }
        if tried.isEmpty {
            throw .agentUnavailable(socketPath: path, reason: "the agent holds no keys")
        }
        if onlyRSA {
            throw .rsaKeyRefused(endpoint, keyDescription: "offered by ssh-agent (\(tried.joined(separator: "; ")))")
        }
        throw .authenticationFailed(endpoint, method: "ssh-agent at \(path)",
                                    reason: "the server refused all \(tried.count) key(s) "
                                        + "(\(tried.joined(separator: "; "))) (\(lastMessage))")
    }

    /// Repeats a libssh2 call while it returns EAGAIN, waiting on the socket in between.
    private func retry(_ phase: String, deadline: UInt64, _ call: () -> Int32) throws(SSHError) -> Int32 {
        while true {
            let rc = call()
            if rc != LIBSSH2_ERROR_EAGAIN { return rc }
            try waitForSocket(phase, deadline: deadline)
        }
    }

    private func retryPointer(
        _ phase: String, deadline: UInt64, _ call: () -> OpaquePointer?
    ) throws(SSHError) -> OpaquePointer? {
        while true {
            if let pointer = call() { return pointer }
            guard let session, libssh2_session_last_errno(session) == LIBSSH2_ERROR_EAGAIN else { return nil }
            try waitForSocket(phase, deadline: deadline)
        }
    }

    private func waitForSocket(_ phase: String, deadline: UInt64) throws(SSHError) {
        if mailbox.connectCancelled { throw .cancelled }
        io?.flush()
        let now = monotonicNanos()
        guard now < deadline else {
            throw .connectTimedOut(endpoint, phase: phase, seconds: options.connectTimeout)
        }
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN) | (io?.hasPendingOutput == true ? Int16(POLLOUT) : 0), revents: 0),
            pollfd(fd: mailbox.wakeFD, events: Int16(POLLIN), revents: 0),
        ]
        let timeout = Int32(min(1000, (deadline - now) / 1_000_000 + 1))
        _ = poll(&fds, 2, timeout)
        if fds[1].revents != 0 { mailbox.drainWake() }
    }

    // MARK: - Event loop

    /// Runs until the connection is closed (returns nil) or lost (returns the error for everything still running).
    private func eventLoop() -> SSHError? {
        guard let io, let session else { return .connectionLost(endpoint, reason: "no session") }
        nextKeepalive = monotonicNanos()
        var fds = [
            pollfd(fd: fd, events: 0, revents: 0),
            pollfd(fd: mailbox.wakeFD, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            for request in mailbox.takeAll() { accept(request) }
            if closeRequested { return nil }

            // Step until nothing moves: a transport read done for one channel may queue packets for another one
            // that was already stepped, so a pass that received bytes is followed by another pass.
            var passes = 0
            while true {
                let received = io.bytesReceived
                let progressed = stepAll()
                if let failure = brokenConnection() { return failure }
                passes += 1
                if (!progressed && io.bytesReceived == received) || passes >= 64 { break }
            }
            if hangupSeen {
                return .connectionLost(endpoint, reason: "the server closed the connection (agent's sshd killed or "
                    + "restarted, or the host went down)")
            }

            var now = monotonicNanos()
            if options.keepaliveInterval > 0 && now >= nextKeepalive {
                var seconds: Int32 = 0
                let rc = libssh2_keepalive_send(session, &seconds)
                if rc != 0 && rc != LIBSSH2_ERROR_EAGAIN {
                    return .connectionLost(endpoint, reason: "cannot send keepalive (\(lastErrorMessage(fallback: "?")))")
                }
                nextKeepalive = now &+ UInt64(max(1, seconds)) * 1_000_000_000
            }
            io.flush()
            if let failure = brokenConnection() { return failure }

            now = monotonicNanos()
            // Dead peer: we are owed a reply (keepalives go out every interval, and a live sshd answers each), yet
            // nothing at all arrived for deadPeerTimeout. Counted from the last byte received, not from the first
            // unanswered send, which trails the last reply by up to a keepalive interval.
            let deadPeerNanos = UInt64(options.deadPeerTimeout * 1e9)
            if options.keepaliveInterval > 0, io.awaitingReplySince != nil, now &- io.lastReceive > deadPeerNanos {
                return .connectionLost(endpoint, reason: "no data at all from the server for "
                    + "\(formatSeconds(Double(now &- io.lastReceive) / 1e9)) although keepalive requests were sent "
                    + "(dead-peer timeout \(formatSeconds(options.deadPeerTimeout))): the agent or its sshd is "
                    + "frozen, or the network path is gone")
            }
            expireCommands(now)

            var timeoutMs: UInt64 = 1000
            if options.keepaliveInterval > 0 {
                timeoutMs = min(timeoutMs, nextKeepalive > now ? (nextKeepalive - now) / 1_000_000 + 1 : 0)
                if io.awaitingReplySince != nil {
                    let due = io.lastReceive &+ deadPeerNanos
                    timeoutMs = min(timeoutMs, due > now ? (due - now) / 1_000_000 + 1 : 0)
                }
            }
            for op in execs {
                if let deadline = op.deadline, !op.sinkFinished {
                    timeoutMs = min(timeoutMs, deadline > now ? (deadline - now) / 1_000_000 + 1 : 0)
                }
            }
            if case .ready = sftpState, sftpQueue.isEmpty {
                let due = sftpIdleSince &+ sftpIdleShutdownNanos
                timeoutMs = min(timeoutMs, due > now ? (due - now) / 1_000_000 + 1 : 0)
            }
            if passes >= 64 { timeoutMs = 0 }

            fds[0].events = Int16(POLLIN) | FANOUT_POLLRDHUP | (io.hasPendingOutput ? Int16(POLLOUT) : 0)
            fds[0].revents = 0
            fds[1].revents = 0
            _ = poll(&fds, 2, Int32(timeoutMs))
            if fds[1].revents != 0 { mailbox.drainWake() }
            if fds[0].revents & (Int16(POLLHUP) | Int16(POLLERR)) != 0 {
                // Let one more pass read what the server sent before it went away (exit statuses), then give up.
                hangupSeen = true
            }
        }
    }

    private func accept(_ request: LoopRequest) {
        switch request {
        case let .exec(id, command, timeout, sink):
            execs.append(ExecOperation(id: id, command: command, timeout: timeout, sink: sink))
        case let .cancelExec(id):
            execs.first { $0.id == id }?.abandon(with: nil, loop: self)
        case let .sftp(request, reply):
            sftpQueue.append(SFTPOperation(request: request, reply: reply))
        case let .close(reply):
            closeRequested = true
            if let reply { closeReplies.append(reply) }
        }
    }

    private func stepAll() -> Bool {
        var progressed = stepPump()
        for op in execs {
            if op.step(self) { progressed = true }
            if fatalReason != nil { return true }
        }
        execs.removeAll { $0.isFinished }
        if stepSFTP() { progressed = true }
        return progressed
    }

    private func stepPump() -> Bool {
        guard let session else { return false }
        var progressed = false
        retiredPumps.removeAll { libssh2_channel_free($0) != LIBSSH2_ERROR_EAGAIN }
        switch pump {
        case .none:
            guard acquireOpener(Self.pumpOpenerID) else { return false }
            pump = .opening
            return stepPump()
        case .opening:
            guard let channel = fanout_channel_open_session(session) else {
                let code = libssh2_session_last_errno(session)
                if code == LIBSSH2_ERROR_EAGAIN { return false }
                releaseOpener(Self.pumpOpenerID)
                if !noteIfConnectionError(code) {
                    fatalReason = "cannot reopen the internal channel (\(lastErrorMessage(fallback: "?")))"
                }
                return true
            }
            releaseOpener(Self.pumpOpenerID)
            pump = .open(channel)
            return true
        case .open(let channel):
            while true {
                let n = fanout_channel_read(channel, 0, scratch, scratchSize)
                if n > 0 { progressed = true; continue } // nothing runs there; discard
                if n == Int(LIBSSH2_ERROR_EAGAIN) { break }
                if n < 0 {
                    if noteIfConnectionError(Int32(truncatingIfNeeded: n)) { return true }
                }
                break
            }
            if libssh2_channel_eof(channel) != 0 {
                // sshd closed our idle channel (e.g. ChannelTimeout): retire it and open another.
                retiredPumps.append(channel)
                pump = .none
                progressed = true
            }
        }
        return progressed
    }

    private func stepSFTP() -> Bool {
        guard let session else { return false }
        switch sftpState {
        case .none:
            guard !sftpQueue.isEmpty, acquireOpener(Self.sftpOpenerID) else { return false }
            sftpState = .initializing
            return stepSFTP()
        case .initializing:
            guard let sftp = libssh2_sftp_init(session) else {
                let code = libssh2_session_last_errno(session)
                if code == LIBSSH2_ERROR_EAGAIN { return false }
                releaseOpener(Self.sftpOpenerID)
                sftpState = .none
                if noteIfConnectionError(code) { return true }
                let failure = SSHError.sftpFailed(
                    endpoint, operation: "start", path: "(SFTP subsystem)",
                    reason: "the server refused the SFTP subsystem (\(lastErrorMessage(fallback: "?")))")
                for op in sftpQueue { op.finish(.failure(failure)) }
                sftpQueue.removeAll()
                return true
            }
            releaseOpener(Self.sftpOpenerID)
            sftpState = .ready(sftp)
            sftpIdleSince = monotonicNanos()
            return stepSFTP() || true
        case .ready(let sftp):
            var progressed = false
            while let head = sftpQueue.first {
                let outcome = head.step(sftp: sftp, loop: self)
                if fatalReason != nil { return true }
                switch outcome {
                case .blocked:
                    return progressed
                case .progressed:
                    return true
                case .done:
                    sftpQueue.removeFirst()
                    progressed = true
                    sftpIdleSince = monotonicNanos()
                }
            }
            if monotonicNanos() &- sftpIdleSince > sftpIdleShutdownNanos {
                sftpState = .shuttingDown(sftp)
                return stepSFTP() || true
            }
            return progressed
        case .shuttingDown(let sftp):
            let rc = libssh2_sftp_shutdown(sftp)
            if rc == LIBSSH2_ERROR_EAGAIN { return false }
            sftpState = .none
            return true
        }
    }

    private func expireCommands(_ now: UInt64) {
        for op in execs where !op.sinkFinished {
            guard let deadline = op.deadline, now >= deadline else { continue }
            op.abandon(with: .failed(.commandTimedOut(endpoint, command: op.command, seconds: op.timeoutSeconds ?? 0)),
                       loop: self)
        }
    }

    // MARK: - Helpers for operations

    func acquireOpener(_ id: UInt64) -> Bool {
        if opener == nil { opener = id }
        return opener == id
    }

    func releaseOpener(_ id: UInt64) {
        if opener == id { opener = nil }
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
    private func connectionErrorReason(_ code: Int32) -> String? {
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

    private func brokenConnection() -> SSHError? {
        if let io {
            if io.sawEOF {
                return .connectionLost(endpoint, reason: "the server closed the connection (agent's sshd killed or "
                    + "restarted, or the host went down)")
            }
            if io.socketError != 0 {
                return .connectionLost(endpoint, reason: "socket error: \(LocalFiles.errorText(io.socketError))")
            }
        }
        if let fatalReason { return .connectionLost(endpoint, reason: fatalReason) }
        return nil
    }

    // MARK: - Teardown

    /// Ends everything. `failure` nil: an orderly close. The socket is shut down BEFORE libssh2 frees channels:
    /// freeing an open channel otherwise waits for the server's CLOSE, i.e. for the remote command to end.
    private func tearDown(failure: SSHError?) {
        mailbox.setAlive(false)
        let reported = failure ?? .connectionClosed(endpoint)
        for op in execs { op.detach(with: .failed(reported)) }
        for op in sftpQueue { op.finish(.failure(reported)) }
        sftpQueue.removeAll()

        if let session, failure == nil, let io {
            _ = fanout_session_disconnect(session, "fanout: connection closed")
            let deadline = monotonicNanos() &+ 200_000_000
            while io.hasPendingOutput && io.flush() && monotonicNanos() < deadline {
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&pfd, 1, 20)
            }
        }
        if fd >= 0 {
            shutdown(fd, Int32(SHUT_RDWR))
            io?.markBroken(EPIPE)
        }
        if let session {
            switch sftpState {
            case .ready(let sftp), .shuttingDown(let sftp):
                repeatWhileAgain { libssh2_sftp_shutdown(sftp) }
            case .none, .initializing:
                break
            }
            for op in execs {
                if let channel = op.channel { repeatWhileAgain { libssh2_channel_free(channel) } }
            }
            for channel in retiredPumps { repeatWhileAgain { libssh2_channel_free(channel) } }
            if case .open(let channel) = pump { repeatWhileAgain { libssh2_channel_free(channel) } }
            repeatWhileAgain { libssh2_session_free(session) }
        }
        execs.removeAll()
        pump = .none
        retiredPumps.removeAll()
        session = nil
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        for request in mailbox.shutDown(reason: reported) {
            switch request {
            case let .exec(_, _, _, sink):
                sink.yield(.failed(reported))
                sink.finish()
            case .cancelExec:
                break
            case let .sftp(_, reply):
                reply.resume(returning: .failure(reported))
            case let .close(reply):
                reply?.resume()
            }
        }
        for reply in closeReplies { reply.resume() }
        closeReplies.removeAll()
    }

    /// With the socket shut down nothing can wait on the server any more; the bound only guards against a
    /// libssh2 surprise turning teardown into a hang.
    private func repeatWhileAgain(_ call: () -> Int32) {
        var attempts = 0
        while call() == LIBSSH2_ERROR_EAGAIN && attempts < 100 {
            attempts += 1
        }
    }
}
