#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small blocking file helpers for the I/O thread (known_hosts, key files). Errors are `strerror` texts.
enum LocalFiles {
    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// Reads a whole (small) file.
    static func read(_ path: String, limit: Int = 16 << 20) -> Result<[UInt8], ReadError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(ReadError(code: errno)) }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while out.count < limit {
            let n = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                out.append(contentsOf: chunk[0..<n])
            } else if n == 0 {
                break
            } else if errno != EINTR {
                return .failure(ReadError(code: errno))
            }
        }
        return .success(out)
    }

    /// Appends one line, adding a newline first if the file does not end with one. Creates the file (0600).
    static func appendLine(_ line: String, to path: String) -> Result<Void, ReadError> {
        var prefix = ""
        if case let .success(existing) = read(path), let last = existing.last, last != UInt8(ascii: "\n") {
            prefix = "\n"
        }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .failure(ReadError(code: errno)) }
        defer { close(fd) }
        let bytes = Array((prefix + line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { systemWrite(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                offset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return .failure(ReadError(code: n < 0 ? errno : EIO))
            }
        }
        return .success(())
    }

    struct ReadError: Error {
        var code: Int32
        var text: String { LocalFiles.errorText(code) }
    }
}
