import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on a folder, held while a history file in it is opened, created, migrated or moved aside.
///
/// A lock on the folder rather than on the file: the file itself is what gets renamed away when it is corrupt, and a
/// lock file beside it would be one more file to leave behind. flock locks belong to an open file description, so two
/// stores in one process exclude each other just as two processes do, and the kernel drops the lock of a process
/// that dies.
final class FolderLock {
    private var descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// How long to wait for another process that is opening the same history.
    static let timeout: Double = 60

    /// Waits (polling, at most ``timeout`` seconds) for the lock on `folder`.
    static func acquire(folder: String, for path: String) throws(HistoryError) -> FolderLock {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .folderUnavailable(folder: folder, reason: "cannot open it to lock it: \(String(cString: strerror(errno)))")
        }
        let deadline = Date().addingTimeInterval(timeout)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, Date() < deadline else {
                close(fd)
                throw .locked(path: path)
            }
            usleep(20_000)
        }
        return FolderLock(descriptor: fd)
    }

    /// Releases the lock; later calls do nothing.
    func release() {
        guard descriptor >= 0 else { return }
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
