import FanoutHistory
import Foundation
import Synchronization

/// A run's one session with its timing history: opened once, at the first read of a history that exists or the
/// first write, used by every stage after (selective testing's verdicts, estimates, `feedback_first`, then
/// recording, trends and flake scores at the end), and closed when the run ends. A failed open is not kept: a later
/// stage tries again, as each did on its own before.
final class HistorySession: Sendable {
    let path: String
    private let state = Mutex<(store: HistoryStore?, notes: [String], opens: Int)>((nil, [], 0))

    init(path: String) { self.path = path }

    /// The store, when the history exists (or this run already opened it); nil when there is none yet: reading
    /// does not create one.
    func existing() throws(HistoryError) -> HistoryStore? {
        if let store = state.withLock({ $0.store }) { return store }
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try store()
    }

    /// The store, created when it does not exist yet.
    func store() throws(HistoryError) -> HistoryStore {
        if let store = state.withLock({ $0.store }) { return store }
        let (opened, notes) = try HistoryStore.open(at: path)
        return state.withLock { s in
            if let store = s.store { return store }
            s.store = opened
            s.notes += notes
            s.opens += 1
            return opened
        }
    }

    /// Ends the session: the store's last connection closes, and SQLite folds its write-ahead log into the file, so
    /// the file alone holds the history (CI caches copy `history.sqlite`, not the `-wal` beside it). A later use
    /// opens it again.
    func close() {
        let store = state.withLock { s -> HistoryStore? in
            defer { s.store = nil }
            return s.store
        }
        _ = store
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
