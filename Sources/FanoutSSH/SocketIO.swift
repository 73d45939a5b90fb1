import CLibSSH2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// libssh2_init exactly once per process (it is not thread-safe); Swift runs global initialisers once, under a lock.
/// OpenSSL first, without its atexit clean-up: the process may exit (a finished command, Ctrl-C) while I/O threads
/// still free their sessions, and those must not find libcrypto already torn down.
private let libssh2InitResult: Int32 = {
    _ = fanout_crypto_init_without_atexit()
    return libssh2_init(0)
}()

func ensureLibSSH2Initialized() -> Bool { libssh2InitResult == 0 }

/// The socket under one libssh2 session, seen through libssh2's send/recv callbacks.
///
/// Why callbacks: (1) a receive clock. libssh2's keepalive never notices a dead server, so we record when bytes last
/// arrived and when we started waiting for a reply; the session loop declares the peer dead when it waited too long.
/// (2) Sends never block: bytes the kernel will not take right now are queued here and flushed when the socket is
/// writable. libssh2 then never sees EAGAIN on a send, so no partially sent packet can make an unrelated call fail
/// with LIBSSH2_ERROR_BAD_USE (a sent-but-EAGAIN packet must otherwise be retried by the same caller first), and
/// libssh2_keepalive_send (whose packet buffer lives on its stack) can never leave half a packet behind.
/// (3) TCP_QUICKACK after every read. sshd leaves Nagle on for non-interactive sessions; right after
/// authentication it sends small packets we do not answer (hostkeys-00@openssh.com), so the reply to our first
/// channel open waited for our delayed ACK: +40 ms on the first channel of every connection (the "first exec is
/// slower" effect). Measured on loopback: first channel 45 ms → 2 ms. (Linux only: Darwin has no per-socket
/// switch for delayed ACKs, so there the first channel may still pay that delay.)
///
/// Confined to the connection's I/O thread: libssh2 calls the callbacks only from calls made on that thread.
final class SocketIO {
    let fd: Int32
    private var pending: [UInt8] = []
    private var pendingStart = 0

    /// Total payload bytes received / handed to the kernel.
    private(set) var bytesReceived: UInt64 = 0
    private(set) var bytesSent: UInt64 = 0
    private(set) var lastReceive: UInt64
    /// When we first sent something after the last byte arrived: the server owes us a reply since then.
    private(set) var awaitingReplySince: UInt64?
    /// The peer closed the connection (recv returned 0).
    private(set) var sawEOF = false
    /// errno of a failed send or recv, if any.
    private(set) var socketError: Int32 = 0

    init(fd: Int32) {
        self.fd = fd
        lastReceive = monotonicNanos()
    }

    var hasPendingOutput: Bool { pendingStart < pending.count }
    var pendingOutputCount: Int { pending.count - pendingStart }

    fileprivate func receive(_ buffer: UnsafeMutableRawPointer?, _ length: Int, _ flags: Int32) -> Int {
        while true {
            let n = recv(fd, buffer, length, flags)
            if n > 0 {
                fanout_quickack(fd)
                bytesReceived &+= UInt64(n)
                lastReceive = monotonicNanos()
                awaitingReplySince = nil
                return n
            }
            if n == 0 {
                sawEOF = true
                return 0
            }
            let err = errno
            if err == EINTR { continue }
            if err != EAGAIN && err != EWOULDBLOCK { socketError = err }
            return -Int(err)
        }
    }

    fileprivate func send(_ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32) -> Int {
        if socketError != 0 { return -Int(socketError) }
        guard length > 0, let buffer else { return 0 }
        noteSent()
        var offset = 0
        // Behind queued bytes, new ones must queue too, or they would overtake them on the wire.
        if !hasPendingOutput {
            guard let sent = sendNow(buffer, length, flags: flags) else { return -Int(socketError) }
            offset = sent
        }
        if offset < length {
            let rest = UnsafeRawBufferPointer(start: buffer + offset, count: length - offset)
            pending.append(contentsOf: rest)
        }
        return length
    }

    private func noteSent() {
        if awaitingReplySince == nil { awaitingReplySince = monotonicNanos() }
    }

    /// Writes queued bytes the kernel will take now. Returns false when the socket failed.
    @discardableResult
    func flush() -> Bool {
        if socketError != 0 { return false }
        if hasPendingOutput {
            let sent = pending.withUnsafeBytes { raw -> Int? in
                guard let base = raw.baseAddress else { return 0 }
                return sendNow(base + pendingStart, pending.count - pendingStart, flags: 0)
            }
            guard let sent else { return false }
            pendingStart += sent
        }
        if pendingStart == pending.count {
            pending.removeAll(keepingCapacity: pending.capacity <= 1 << 20)
            pendingStart = 0
        } else if pendingStart > 1 << 20 {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        return true
    }

    /// Hands the kernel what it takes now without blocking. Returns how much it took, or nil after a socket error
    /// (kept in `socketError`).
    private func sendNow(_ base: UnsafeRawPointer, _ count: Int, flags: Int32) -> Int? {
        var offset = 0
        while offset < count {
            let n = fanout_send(fd, base + offset, count - offset, flags)
            if n > 0 {
                offset += n
                bytesSent &+= UInt64(n)
                continue
            }
            let err = errno
            if n < 0 && err == EINTR { continue }
            if n < 0 && (err == EAGAIN || err == EWOULDBLOCK) { break }
            socketError = n < 0 ? err : EPIPE
            return nil
        }
        return offset
    }

    /// Marks the socket broken (after shutdown) so no further send is attempted.
    func markBroken(_ err: Int32) {
        if socketError == 0 { socketError = err }
    }

    /// The abstract pointer handed to libssh2_session_init_ex; the callbacks turn it back into this object.
    /// The session loop keeps `self` alive for as long as the session exists.
    var abstractPointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    fileprivate static func from(_ abstract: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> SocketIO? {
        guard let raw = abstract?.pointee else { return nil }
        return Unmanaged<SocketIO>.fromOpaque(raw).takeUnretainedValue()
    }
}

// C callbacks: plain functions without captures, in this library file (callbacks in main.swift crashed).

private func fanoutRecvCallback(
    _ socket: libssh2_socket_t, _ buffer: UnsafeMutableRawPointer?, _ length: Int, _ flags: Int32,
    _ abstract: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> Int {
    guard let io = SocketIO.from(abstract), socket == io.fd else { return plainRecv(socket, buffer, length, flags) }
    return io.receive(buffer, length, flags)
}

private func fanoutSendCallback(
    _ socket: libssh2_socket_t, _ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32,
    _ abstract: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> Int {
    guard let io = SocketIO.from(abstract), socket == io.fd else { return plainSend(socket, buffer, length, flags) }
    return io.send(buffer, length, flags)
}

// libssh2 also sends and receives through these callbacks on other descriptors: the ssh-agent socket. Those get
// libssh2's default behaviour (plain recv/send, -errno on failure).

private func plainRecv(_ socket: Int32, _ buffer: UnsafeMutableRawPointer?, _ length: Int, _ flags: Int32) -> Int {
    while true {
        let n = recv(socket, buffer, length, flags)
        if n >= 0 { return n }
        if errno != EINTR { return -Int(errno) }
    }
}

private func plainSend(_ socket: Int32, _ buffer: UnsafeRawPointer?, _ length: Int, _ flags: Int32) -> Int {
    // libssh2 opened this socket, so nobody set SO_NOSIGPIPE on it (needed on Darwin; a no-op on Linux).
    _ = fanout_forbid_sigpipe(socket)
    while true {
        let n = fanout_send(socket, buffer, length, flags)
        if n >= 0 { return n }
        if errno != EINTR { return -Int(errno) }
    }
}

func installIOCallbacks(on session: OpaquePointer) {
    fanout_session_set_io_callbacks(session, fanoutRecvCallback, fanoutSendCallback)
}
