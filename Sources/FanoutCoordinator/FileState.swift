import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file's state as the caches between runs key their answers (the toolchain's version, a product's listing): the
/// resolved path, device, inode, size, and modification and status-change times in nanoseconds. Any write, copy,
/// rename into place or restore changes one of them (the status-change time cannot be set back), so an answer kept
/// for one state is never used for another; reading the bytes instead would cost as much as asking again.
enum FileState {
    static func key(_ path: String) -> String? {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var info = stat()
        guard stat(resolved, &info) == 0 else { return nil }
        #if canImport(Darwin)
        let modified = "\(info.st_mtimespec.tv_sec).\(info.st_mtimespec.tv_nsec)"
        let changed = "\(info.st_ctimespec.tv_sec).\(info.st_ctimespec.tv_nsec)"
        #else
        let modified = "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        let changed = "\(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)"
        #endif
        return "\(resolved)|\(info.st_dev)|\(info.st_ino)|\(info.st_size)|\(modified)|\(changed)"
    }
}
