import CLibSSH2
import Synchronization

/// What other threads ask of a connection's I/O thread. Only Sendable values: the thread owns everything else.
enum LoopRequest: Sendable {
    case exec(id: UInt64, command: String, timeout: Double?, sink: AsyncStream<SSHExecEvent>.Continuation)
    /// The consumer of an exec stream went away: close that channel.
    case cancelExec(id: UInt64)
    /// Open a direct-tcpip channel to host:port and pump it to `fd` (one end of a socket pair), for a connection
    /// through this one (ProxyJump). Answered once the channel is open or has failed.
    case tunnel(id: UInt64, host: String, port: Int, fd: Int32, timeout: Double,
                reply: CheckedContinuation<Result<Void, SSHError>, Never>)
    case sftp(SFTPRequest, reply: CheckedContinuation<Result<SFTPReply, SSHError>, Never>)
    /// Close the connection; resumed when the thread has let go of everything. nil: fire and forget.
    case close(reply: CheckedContinuation<Void, Never>?)
}

enum SFTPRequest: Sendable {
    case upload(localPath: String, remotePath: String, mode: Int32)
    case mkdir(path: String, mode: Int32)
    case rename(from: String, to: String)
    case remove(path: String)
    case stat(path: String)

    var operationName: String {
        switch self {
        case .upload: return "upload"
        case .mkdir: return "mkdir"
        case .rename: return "rename"
        case .remove: return "remove"
        case .stat: return "stat"
        }
    }

    var path: String {
        switch self {
        case let .upload(_, remotePath, _): return remotePath
        case let .mkdir(path, _), let .remove(path), let .stat(path): return path
        case let .rename(from, to): return "\(from) -> \(to)"
        }
    }
}

enum SFTPReply: Sendable {
    case done
    case bytes(Int)
    case attributes(SSHFileAttributes?)
}

/// The thread-safe side of one connection: a request queue, a wake-up signal for the I/O thread's poll(), and the
/// connection's liveness. The signal is raised only under the lock and only while the mailbox is open, so it is
/// never written after the I/O thread closed it.
final class LoopMailbox: Sendable {
    private struct State {
        var requests: [LoopRequest] = []
        var open = true
        var connectCancelled = false
        /// Why the connection ended (what later requests are answered with).
        var endError: SSHError?
    }

    private let state = Mutex(State())
    private let alive = Atomic<Bool>(false)
    private let ids = Atomic<UInt64>(0)
    let wakeUp = WakeUpSignal()

    var isAlive: Bool { alive.load(ordering: .acquiring) }

    func setAlive(_ value: Bool) { alive.store(value, ordering: .releasing) }

    func nextID() -> UInt64 { ids.add(1, ordering: .relaxed).newValue }

    /// Queues a request for the I/O thread. False when the connection is gone (the caller answers the request).
    func post(_ request: LoopRequest) -> Bool {
        state.withLock { state in
            guard state.open else { return false }
            state.requests.append(request)
            wake()
            return true
        }
    }

    func cancelConnect() {
        state.withLock { state in
            state.connectCancelled = true
            if state.open { wake() }
        }
    }

    var connectCancelled: Bool { state.withLock { $0.connectCancelled } }

    /// The error for requests made after the connection ended.
    func endError(default fallback: SSHError) -> SSHError {
        state.withLock { $0.endError } ?? fallback
    }

    func takeAll() -> [LoopRequest] {
        state.withLock { state in
            defer { state.requests.removeAll() }
            return state.requests
        }
    }

    /// Called once by the I/O thread when it ends: refuses further requests, closes the wake-up signal and returns the
    /// requests still queued.
    func shutDown(reason: SSHError) -> [LoopRequest] {
        setAlive(false)
        return state.withLock { state in
            state.open = false
            state.endError = reason
            wakeUp.close()
            defer { state.requests.removeAll() }
            return state.requests
        }
    }

    /// Consumes pending wake-ups (I/O thread only).
    func drainWake() {
        wakeUp.drain()
    }

    private func wake() {
        wakeUp.signal()
    }
}
