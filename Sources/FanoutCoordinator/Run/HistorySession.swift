import FanoutHistory
import Foundation
import Synchronization

/// A run's one session with its timing history: opened once, at the first read of a history that exists or the
/// first write, used by every stage after (selective testing's verdicts, estimates, `feedback_first`, then
/// recording, trends and flake scores at the end), and closed when the run ends. A failed open is not kept: a later
/// stage tries again, as each did on its own before.
final class HistorySession: Sendable {
    let path: String
    private let state = Mutex<(store: HistoryStore?, file: FileIdentity?, notes: [String], opens: Int)>((nil, nil, [], 0))

    /// Which file was opened: one moved aside (a corrupt history, by another run) and replaced is another file.
    private struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64

        init?(_ path: String) {
            guard let a = try? FileManager.default.attributesOfItem(atPath: path),
                  let device = (a[.systemNumber] as? NSNumber)?.uint64Value,
                  let inode = (a[.systemFileNumber] as? NSNumber)?.uint64Value else { return nil }
            self.device = device
            self.inode = inode
        }
    }

    init(path: String) { self.path = path }

    /// The store, when the history exists (or this run already opened it); nil when there is none yet: reading
    /// does not create one.
    func existing() throws(HistoryError) -> HistoryStore? {
        if let store = current() { return store }
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try store()
    }

    /// The store, created when it does not exist yet.
    func store() throws(HistoryError) -> HistoryStore {
        if let store = current() { return store }
        let (opened, notes) = try HistoryStore.open(at: path, checkPages: !Self.isAsLastClosed(path))
        let file = FileIdentity(path)
        return state.withLock { s in
            if let store = s.store { return store }
            s.store = opened
            s.file = file
            s.notes += notes
            s.opens += 1
            return opened
        }
    }

    /// The open store while it is still the history at `path` as this Fanout knows it: one that another run moved
    /// aside (and replaced), or that a newer Fanout migrated meanwhile, is closed and opened again (which says why
    /// it cannot be used, as opening did before each stage kept its own).
    private func current() -> HistoryStore? {
        guard let (store, file) = state.withLock({ s in s.store.map { ($0, s.file) } }) else { return nil }
        let same = file != nil && FileIdentity(path) == file
        if same, let version = try? store.schemaVersion(), version <= HistoryStore.currentSchemaVersion { return store }
        close()
        return nil
    }

    /// Ends the session: the store's last connection closes, and SQLite folds its write-ahead log into the file, so
    /// the file alone holds the history (CI caches copy `history.sqlite`, not the `-wal` beside it). A later use
    /// opens it again.
    func close() {
        let (store, file) = state.withLock { s -> (HistoryStore?, FileIdentity?) in
            defer { s.store = nil; s.file = nil }
            return (s.store, s.file)
        }
        guard let store else { return }
        // Stamped only while the file at the path is the one this session opened (not one put in its place).
        if store.close(), let file, FileIdentity(path) == file { Self.stampClosed(path) }
    }

    // MARK: - The state the last close left

    /// `<history>.checked`: the file's state (``FileState``) as this session's close left it, whole. Opening a file
    /// found exactly so (and no write-ahead log beside it) skips reading every page; any other state of it (a copy,
    /// a cache restored, a write by another process, a crash that left a log) is checked in full.
    static func stampPath(_ path: String) -> String { path + ".checked" }

    static func isAsLastClosed(_ path: String) -> Bool {
        guard !FileManager.default.fileExists(atPath: path + "-wal"), let now = FileState.key(path),
              let stamp = FileManager.default.contents(atPath: stampPath(path)) else { return false }
        return String(decoding: stamp, as: UTF8.self) == now
    }

    /// A stamp that cannot be written only means the next open checks every page.
    private static func stampClosed(_ path: String) {
        guard !FileManager.default.fileExists(atPath: path + "-wal"), let now = FileState.key(path) else {
            try? FileManager.default.removeItem(atPath: stampPath(path))
            return
        }
        try? Data(now.utf8).write(to: URL(fileURLWithPath: stampPath(path)), options: .atomic)
    }

    /// How many times this session opened the file (1 once it is open: tests check that a run opens it once).
    var opens: Int { state.withLock { $0.opens } }

    /// What opening it found worth telling (a corrupt file moved aside), each said once.
    func takeNotes() -> [String] {
        state.withLock { s in
            defer { s.notes = [] }
            return s.notes
        }
    }
}
