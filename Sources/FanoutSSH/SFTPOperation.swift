import CLibSSH2
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One SFTP request. libssh2 keeps per-SFTP-session state for open/mkdir/rename/..., so `SFTPSubsystem` runs
/// these strictly one after another; `step` advances the head of that queue without blocking.
final class SFTPOperation {
    /// What one call of `step` did: waited on the socket, moved the request on, or finished it.
    enum Step {
        case blocked
        case progressed
        case done
    }

    /// Writes of 2 MiB: libssh2 pipelines one call's data as many SFTP packets and waits for all their replies
    /// before the call returns, so each write costs one round trip, and round trips through bastions are longer.
    /// Measured for 106 MB through two bastions: 256 KiB writes 18.7 s, 2 MiB writes 3.8 s (before the session
    /// behind a bastion learned to avoid a 40 ms stall per round trip, see `SessionLoop`; with it, 2.4-2.5 s, where
    /// OpenSSH's scp takes 2.2-2.3 s). Direct, 256 KiB and 2 MiB measured even (0.45-0.56 s, 0.47-0.50 s); one
    /// huge write measured 10x slower.
    static let chunkSize = 2 * 1024 * 1024

    let request: SFTPRequest
    private var reply: CheckedContinuation<Result<SFTPReply, SSHError>, Never>?

    // An upload spans many steps (any libssh2 call in it may return EAGAIN): where it got to lives here.
    private var localFD: Int32 = -1
    private var handle: OpaquePointer?
    private var buffer: UnsafeMutableRawPointer?
    private var bufferLength = 0
    private var bufferOffset = 0
    private var sent = 0
    private var localEOF = false
    private var modeSet = false
    private var failure: SSHError?

    init(request: SFTPRequest, reply: CheckedContinuation<Result<SFTPReply, SSHError>, Never>) {
        self.request = request
        self.reply = reply
    }

    deinit {
        if localFD >= 0 { close(localFD) }
        buffer?.deallocate()
    }

    /// Answers the caller (once) and releases local resources; the remote handle is left to the session.
    func finish(_ result: Result<SFTPReply, SSHError>) {
        if localFD >= 0 {
            close(localFD)
            localFD = -1
        }
        reply?.resume(returning: result)
        reply = nil
    }

    func step(sftp: OpaquePointer, context: SessionContext) -> Step {
        switch request {
        case let .upload(localPath, remotePath, mode):
            return stepUpload(sftp: sftp, context: context, localPath: localPath, remotePath: remotePath, mode: mode)
        case let .mkdir(path, mode):
            return simple(context, sftp) { fanout_sftp_mkdir(sftp, path, Int(mode)) }
        case let .rename(from, to):
            return simple(context, sftp) { fanout_sftp_rename(sftp, from, to) }
        case let .remove(path):
            return simple(context, sftp) { fanout_sftp_unlink(sftp, path) }
        case let .stat(path):
            var attributes = LIBSSH2_SFTP_ATTRIBUTES()
            let rc = fanout_sftp_stat(sftp, path, &attributes)
            if rc == LIBSSH2_ERROR_EAGAIN { return .blocked }
            if rc == 0 {
                finish(.success(.attributes(SSHFileAttributes(attributes))))
            } else if rc == LIBSSH2_ERROR_SFTP_PROTOCOL,
                      [LIBSSH2_FX_NO_SUCH_FILE, LIBSSH2_FX_NO_SUCH_PATH].contains(libssh2_sftp_last_error(sftp)) {
                finish(.success(.attributes(nil)))
            } else if !context.noteIfConnectionError(rc) {
                finish(.failure(error(rc, context, sftp)))
            }
            return .done
        }
    }

    private func simple(_ context: SessionContext, _ sftp: OpaquePointer, _ call: () -> Int32) -> Step {
        let rc = call()
        if rc == LIBSSH2_ERROR_EAGAIN { return .blocked }
        if rc == 0 {
            finish(.success(.done))
        } else if !context.noteIfConnectionError(rc) {
            finish(.failure(error(rc, context, sftp)))
        }
        return .done
    }

    private func stepUpload(
        sftp: OpaquePointer, context: SessionContext, localPath: String, remotePath: String, mode: Int32
    ) -> Step {
        var progressed = false
        if buffer == nil {
            localFD = open(localPath, O_RDONLY | O_CLOEXEC)
            guard localFD >= 0 else {
                finish(.failure(.localFileFailed(path: localPath, reason: LocalFiles.errorText(errno))))
                return .done
            }
            buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
            progressed = true
        }
        guard let buffer else { return .done }

        if handle == nil {
            let flags = UInt(LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC)
            guard let opened = fanout_sftp_open(sftp, remotePath, flags, Int(mode)) else {
                let code = libssh2_session_last_errno(context.session)
                if code == LIBSSH2_ERROR_EAGAIN { return progressed ? .progressed : .blocked }
                if !context.noteIfConnectionError(code) { finish(.failure(error(code, context, sftp))) }
                return .done
            }
            handle = opened
            progressed = true
        }
        guard let handle else { return .done }

        // Write phase: a write that returned EAGAIN is repeated with the same buffer and length; a partial count
        // (bytes acknowledged so far) advances the buffer.
        while failure == nil && !localEOF {
            if bufferOffset == bufferLength {
                switch readChunk(into: buffer) {
                case .failure(let err):
                    failure = .localFileFailed(path: localPath, reason: err.text)
                case .success(0):
                    localEOF = true
                case .success(let n):
                    bufferLength = n
                    bufferOffset = 0
                }
                continue
            }
            let n = libssh2_sftp_write(
                handle, buffer.assumingMemoryBound(to: CChar.self) + bufferOffset, bufferLength - bufferOffset)
            if n == Int(LIBSSH2_ERROR_EAGAIN) { return progressed ? .progressed : .blocked }
            if n < 0 {
                let code = Int32(truncatingIfNeeded: n)
                if context.noteIfConnectionError(code) { return .done }
                failure = error(code, context, sftp)
                break
            }
            bufferOffset += n
            sent += n
            progressed = true
        }

        // Exact permissions (open's mode is subject to the server's umask).
        if failure == nil && !modeSet {
            var attributes = LIBSSH2_SFTP_ATTRIBUTES()
            attributes.flags = UInt(LIBSSH2_SFTP_ATTR_PERMISSIONS)
            attributes.permissions = UInt(mode)
            let rc = libssh2_sftp_fstat_ex(handle, &attributes, 1)
            if rc == LIBSSH2_ERROR_EAGAIN { return progressed ? .progressed : .blocked }
            if rc != 0 {
                if context.noteIfConnectionError(rc) { return .done }
                failure = error(rc, context, sftp)
            }
            modeSet = true
        }

        let rc = libssh2_sftp_close_handle(handle)
        if rc == LIBSSH2_ERROR_EAGAIN { return progressed ? .progressed : .blocked }
        if rc != 0 && failure == nil {
            if context.noteIfConnectionError(rc) { return .done }
            failure = error(rc, context, sftp)
        }
        self.handle = nil
        if let failure {
            finish(.failure(failure))
        } else {
            finish(.success(.bytes(sent)))
        }
        return .done
    }

    private func readChunk(into buffer: UnsafeMutableRawPointer) -> Result<Int, LocalFiles.ReadError> {
        var filled = 0
        while filled < Self.chunkSize {
            let n = read(localFD, buffer + filled, Self.chunkSize - filled)
            if n > 0 {
                filled += n
            } else if n == 0 {
                break
            } else if errno != EINTR {
                return .failure(LocalFiles.ReadError(code: errno))
            }
        }
        return .success(filled)
    }

    private func error(_ code: Int32, _ context: SessionContext, _ sftp: OpaquePointer) -> SSHError {
        let reason: String
        if code == LIBSSH2_ERROR_SFTP_PROTOCOL {
            reason = Self.statusText(libssh2_sftp_last_error(sftp))
        } else {
            reason = context.lastErrorMessage(fallback: "libssh2 error \(code)")
        }
        return .sftpFailed(context.endpoint, operation: request.operationName, path: request.path, reason: reason)
    }

    static func statusText(_ status: UInt) -> String {
        switch status {
        case LIBSSH2_FX_NO_SUCH_FILE: return "no such file"
        case LIBSSH2_FX_PERMISSION_DENIED: return "permission denied"
        case LIBSSH2_FX_FAILURE:
            return "the server reported a failure (for rename: the target exists; for mkdir: it exists already)"
        case LIBSSH2_FX_NO_SUCH_PATH: return "no such path"
        case LIBSSH2_FX_FILE_ALREADY_EXISTS: return "file already exists"
        case LIBSSH2_FX_WRITE_PROTECT: return "write protected"
        case LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM: return "no space left on the file system"
        case LIBSSH2_FX_QUOTA_EXCEEDED: return "quota exceeded"
        case LIBSSH2_FX_NOT_A_DIRECTORY: return "not a directory"
        case LIBSSH2_FX_OP_UNSUPPORTED: return "operation not supported by the server"
        default: return "SFTP status \(status)"
        }
    }
}

extension SSHFileAttributes {
    init(_ attributes: LIBSSH2_SFTP_ATTRIBUTES) {
        let flags = Int32(truncatingIfNeeded: attributes.flags)
        size = flags & LIBSSH2_SFTP_ATTR_SIZE != 0 ? UInt64(attributes.filesize) : nil
        mode = flags & LIBSSH2_SFTP_ATTR_PERMISSIONS != 0 ? UInt32(truncatingIfNeeded: attributes.permissions) : nil
        modificationTime = flags & LIBSSH2_SFTP_ATTR_ACMODTIME != 0 ? UInt64(attributes.mtime) : nil
    }
}
