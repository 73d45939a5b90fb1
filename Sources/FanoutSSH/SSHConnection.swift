import CLibSSH2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One authenticated SSH connection to an agent, driven by its own I/O thread (see `SessionLoop`).
///
/// Every method may be called from any task; none blocks a thread of Swift's cooperative pool. Several commands can
/// run at once, each on its own channel (sshd's MaxSessions caps them; this connection keeps one internal channel
/// open, and the SFTP subsystem takes one while SFTP requests are in flight and for 3 s after).
///
/// ```swift
/// let connection = try await SSHConnection.connect(
///     to: SSHEndpoint(host: "127.0.1.1", port: 2422, user: "fanout-agent"),
///     authentication: .keyFile(path: "/tmp/fleet/id_ed25519", passphrase: nil),
///     options: SSHOptions(knownHostsPath: "/tmp/fleet/known_hosts"))
/// let result = try await connection.run("uname -a", timeout: 10)
/// await connection.close()
/// ```
public final class SSHConnection: Sendable {
    public let endpoint: SSHEndpoint
    /// The server's host key fingerprint as OpenSSH prints it ("SHA256:" + unpadded base64).
    public let hostKeyFingerprint: String
    /// The host key's type, e.g. "ssh-ed25519".
    public let hostKeyType: String
    /// Things worth telling the user about this connection (a host key recorded under accept-new, known_hosts
    /// lines that could not be parsed).
    public let notes: [String]
    public let connectTimings: SSHConnectTimings
    private let mailbox: LoopMailbox

    private init(endpoint: SSHEndpoint, info: ConnectInfo, mailbox: LoopMailbox) {
        self.endpoint = endpoint
        hostKeyFingerprint = info.fingerprint
        hostKeyType = info.keyType
        notes = info.notes
        connectTimings = info.timings
        self.mailbox = mailbox
    }

    deinit {
        _ = mailbox.post(.close(reply: nil))
    }

    /// Connects, checks the host key against known_hosts (see `HostKeyPolicy`) and authenticates.
    /// Cancelling the calling task aborts the attempt with `.cancelled`.
    public static func connect(
        to endpoint: SSHEndpoint, authentication: SSHAuthentication, options: SSHOptions
    ) async throws(SSHError) -> SSHConnection {
        let mailbox = LoopMailbox()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (reply: CheckedContinuation<Result<ConnectInfo, SSHError>, Never>) in
                SessionLoop.start(endpoint: endpoint, authentication: authentication, options: options,
                                  mailbox: mailbox, reply: reply)
            }
        } onCancel: {
            mailbox.cancelConnect()
        }
        return SSHConnection(endpoint: endpoint, info: try result.get(), mailbox: mailbox)
    }

    /// Connects to `endpoint` THROUGH `bastion` (one ProxyJump hop): the bastion's server opens a direct-tcpip
    /// channel to `endpoint.host:endpoint.port` (the host as the bastion resolves it), and this session runs over it.
    /// The host key of `endpoint` is checked exactly as for a direct connection. One bastion connection carries any
    /// number of sessions; when it ends, every session behind it is lost. Chains (`a,b`): connect to `b` through
    /// `a`, then to the target through `b`.
    public static func connect(
        to endpoint: SSHEndpoint, via bastion: SSHConnection, authentication: SSHAuthentication, options: SSHOptions
    ) async throws(SSHError) -> SSHConnection {
        let socket = try await bastion.openTunnel(to: endpoint.host, port: endpoint.port,
                                                  timeout: options.connectTimeout)
        let mailbox = LoopMailbox()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (reply: CheckedContinuation<Result<ConnectInfo, SSHError>, Never>) in
                SessionLoop.start(endpoint: endpoint, authentication: authentication, options: options,
                                  mailbox: mailbox, socket: socket, reply: reply)
            }
        } onCancel: {
            mailbox.cancelConnect()
        }
        return SSHConnection(endpoint: endpoint, info: try result.get(), mailbox: mailbox)
    }

    /// A socket connected, through this connection's server, to host:port. The caller owns it (a session's socket).
    func openTunnel(to host: String, port: Int, timeout: Double) async throws(SSHError) -> Int32 {
        var pair: [Int32] = [-1, -1]
        guard fanout_stream_socketpair(&pair) == 0 else {
            throw .libssh2(endpoint, operation: "socketpair for a tunnel", code: errno,
                           message: LocalFiles.errorText(errno))
        }
        let mailbox = self.mailbox
        let endpoint = self.endpoint
        let (ours, theirs) = (pair[0], pair[1])
        let result = await withCheckedContinuation { (reply: CheckedContinuation<Result<Void, SSHError>, Never>) in
            let request = LoopRequest.tunnel(id: mailbox.nextID(), host: host, port: port, fd: theirs,
                                             timeout: timeout, reply: reply)
            if !mailbox.post(request) {
                closeSocketDescriptor(theirs)
                reply.resume(returning: .failure(mailbox.endError(default: .connectionClosed(endpoint))))
            }
        }
        if case .failure(let error) = result {
            closeSocketDescriptor(ours)
            throw error
        }
        return ours
    }


    /// False once the connection was lost or closed.
    public var isAlive: Bool { mailbox.isAlive }

    /// Runs `command` (through the login shell of the remote user, as sshd does) on a new channel. The command is a
    /// finished shell line: this module quotes nothing, so every value in it must already be quoted by the caller
    /// (FanoutAgents uses FanoutCore's `ShellQuote`, the project's one quoting function).
    ///
    /// The stream yields `.stdout`/`.stderr` chunks as they arrive, then exactly one `.exited` or `.failed`.
    /// Ending the iteration early (or cancelling the consuming task) closes the channel; the remote process is not
    /// signalled (libssh2 1.10 cannot), so kill it by process group if it must stop.
    /// With `timeout`, the stream ends with `.failed(.commandTimedOut)` when the command has not exited in time.
    /// Output is buffered without bound if the consumer is slower than the command.
    public func execute(_ command: String, timeout: Double? = nil) -> AsyncStream<SSHExecEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SSHExecEvent.self, bufferingPolicy: .unbounded)
        let id = mailbox.nextID()
        let mailbox = self.mailbox
        continuation.onTermination = { termination in
            if case .cancelled = termination { _ = mailbox.post(.cancelExec(id: id)) }
        }
        if !mailbox.post(.exec(id: id, command: command, timeout: timeout, sink: continuation)) {
            continuation.yield(.failed(mailbox.endError(default: .connectionClosed(endpoint))))
            continuation.finish()
        }
        return stream
    }

    /// Runs `command` and collects its output. A non-zero exit status or a signal is a result, not an error.
    public func run(_ command: String, timeout: Double? = nil) async throws(SSHError) -> SSHCommandResult {
        let start = monotonicNanos()
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        for await event in execute(command, timeout: timeout) {
            switch event {
            case .stdout(let bytes):
                stdout += bytes
            case .stderr(let bytes):
                stderr += bytes
            case let .exited(status, signal):
                return SSHCommandResult(stdout: stdout, stderr: stderr, status: status, signal: signal,
                                        duration: secondsElapsed(from: start))
            case .failed(let error):
                throw error
            }
        }
        throw .cancelled
    }

    // MARK: - SFTP

    /// Uploads a local file over SFTP (256 KiB writes), creating or truncating `remotePath`, and sets its
    /// permissions to `mode`. Returns the number of bytes sent. Not atomic: upload to a temporary name, then rename.
    @discardableResult
    public func upload(_ localPath: String, to remotePath: String, mode: Int32 = 0o644) async throws(SSHError) -> Int {
        switch try await sftp(.upload(localPath: localPath, remotePath: remotePath, mode: mode)) {
        case .bytes(let count): return count
        case .done, .attributes: return 0
        }
    }

    /// Creates a directory. With `intermediate`, creates missing parents and accepts existing directories.
    public func mkdir(_ path: String, mode: Int32 = 0o755, intermediate: Bool = false) async throws(SSHError) {
        guard intermediate else {
            _ = try await sftp(.mkdir(path: path, mode: mode))
            return
        }
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if let attributes = try await stat(prefix) {
                if attributes.isDirectory { continue }
                throw .sftpFailed(endpoint, operation: "mkdir", path: prefix, reason: "it exists and is not a directory")
            }
            do {
                _ = try await sftp(.mkdir(path: prefix, mode: mode))
            } catch {
                // Someone else may have created it in between.
                guard let attributes = try await stat(prefix), attributes.isDirectory else { throw error }
            }
        }
    }

    /// Renames over SFTP. OpenSSH's SFTP (v3) refuses when `to` exists.
    public func rename(_ from: String, to: String) async throws(SSHError) {
        _ = try await sftp(.rename(from: from, to: to))
    }

    public func remove(_ path: String) async throws(SSHError) {
        _ = try await sftp(.remove(path: path))
    }

    /// Attributes of a remote path, or nil when it does not exist.
    public func stat(_ path: String) async throws(SSHError) -> SSHFileAttributes? {
        if case .attributes(let attributes) = try await sftp(.stat(path: path)) { return attributes }
        return nil
    }

    private func sftp(_ request: SFTPRequest) async throws(SSHError) -> SFTPReply {
        let mailbox = self.mailbox
        let endpoint = self.endpoint
        let result = await withCheckedContinuation { (reply: CheckedContinuation<Result<SFTPReply, SSHError>, Never>) in
            if !mailbox.post(.sftp(request, reply: reply)) {
                reply.resume(returning: .failure(mailbox.endError(default: .connectionClosed(endpoint))))
            }
        }
        return try result.get()
    }

    // MARK: - Closing

    /// Closes the connection: running commands end with `.failed(.connectionClosed)` (their remote processes are
    /// not signalled), pending SFTP requests fail. Returns when the I/O thread has released everything.
    public func close() async {
        let mailbox = self.mailbox
        await withCheckedContinuation { (reply: CheckedContinuation<Void, Never>) in
            if !mailbox.post(.close(reply: reply)) { reply.resume() }
        }
    }
}

/// close(2), out of reach of `SSHConnection.close()`'s name.
func closeSocketDescriptor(_ fd: Int32) {
    _ = close(fd)
}
