import CLibSSH2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Non-blocking TCP connect with a deadline (on the connection's I/O thread), then TCP_NODELAY and
/// TCP_USER_TIMEOUT (Darwin: TCP_RXT_CONNDROPTIME). Tries every address the name resolves to.
enum TCPConnector {
    static func connect(
        endpoint: SSHEndpoint, timeout: Double, userTimeout: Double, cancelled: () -> Bool
    ) throws(SSHError) -> Int32 {
        guard (1...65535).contains(endpoint.port) else {
            throw .connectFailed(endpoint, reason: "port \(endpoint.port) is not a valid TCP port")
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = FANOUT_SOCK_STREAM
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list)
        guard rc == 0, let list else {
            throw .resolveFailed(endpoint, reason: String(cString: gai_strerror(rc)))
        }
        defer { freeaddrinfo(list) }

        let deadline = Deadline(after: max(0.001, timeout))
        var lastError = "no address"
        var node: UnsafeMutablePointer<addrinfo>? = list
        while let info = node {
            node = info.pointee.ai_next
            let fd = fanout_tcp_socket(info.pointee.ai_family)
            guard fd >= 0 else {
                lastError = LocalFiles.errorText(errno)
                continue
            }
            var result = systemConnect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen)
            var err: Int32 = result == 0 ? 0 : errno
            if result != 0 && err == EINPROGRESS {
                err = waitConnected(fd, deadline: deadline, cancelled: cancelled)
                result = err == 0 ? 0 : -1
            }
            if result == 0 {
                let ms = UInt32(min(Double(UInt32.max), max(1000, userTimeout * 1000)))
                _ = fanout_tune_tcp_socket(fd, ms)
                return fd
            }
            close(fd)
            if err == ETIMEDOUT {
                throw .connectTimedOut(endpoint, phase: "TCP connect", seconds: timeout)
            }
            if err == ECANCELED { throw .cancelled }
            lastError = err == ECONNREFUSED
                ? "connection refused (nothing listens on port \(endpoint.port))"
                : LocalFiles.errorText(err)
        }
        throw .connectFailed(endpoint, reason: lastError)
    }

    /// 0 when connected, else an errno (ETIMEDOUT at the deadline, ECANCELED when cancelled).
    private static func waitConnected(_ fd: Int32, deadline: Deadline, cancelled: () -> Bool) -> Int32 {
        while true {
            if cancelled() { return ECANCELED }
            let now = monotonicNanos()
            if deadline.hasPassed(now: now) { return ETIMEDOUT }
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let n = poll(&pfd, 1, deadline.pollMilliseconds(now: now, atMost: 100))
            if n < 0 && errno != EINTR { return errno }
            if n > 0 {
                var soError: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                if getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length) != 0 { return errno }
                return soError
            }
        }
    }
}
