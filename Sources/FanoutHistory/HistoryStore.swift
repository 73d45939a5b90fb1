import Foundation
import GRDB
import Synchronization

/// The timing history of past runs, kept in one SQLite file per project (`.fanout/history.sqlite` by default).
///
/// The store teaches the estimator (``timingHistory(destination:window:runsForMean:)``), answers
/// `fanout history show` (``recentRuns(limit:)``, ``classStats(destination:window:limit:)``,
/// ``flakyTests(runs:)``), and keeps measurements and attempts for later analyses.
///
/// History is a cache of past runs, never the reason a run fails: ``open(at:retention:now:)`` moves an unreadable
/// file aside and starts afresh, returning a warning for the run to show.
///
/// All methods are synchronous and safe to call from any thread: a `DatabaseQueue` serializes them. Several
/// processes may use one file at once (two `fanout run`s in one package): the file is in WAL mode, writes are
/// IMMEDIATE transactions that wait up to ``busyTimeout`` for each other, and opening is serialized by a lock on the
/// folder.
public final class HistoryStore: Sendable {
    /// Where the CLI keeps history, relative to the package folder.
    public static let defaultPath = ".fanout/history.sqlite"
    /// How many runs are kept: enough for every query's window many times over, small enough that the file of a
    /// 2,000-test suite stays around 25 MB and is checked at open in a fraction of a second (a run skips the check
    /// when the file is as its last run's close left it).
    public static let defaultRetention = 200
    /// The schema version this build of Fanout creates and understands.
    public static var currentSchemaVersion: Int { HistorySchema.currentVersion }

    /// The database file, or `":memory:"` for an in-memory store. Used in error messages.
    public let path: String
    /// Runs beyond the newest `retention` are deleted when a run is recorded; 0 keeps everything.
    public let retention: Int
    let dbQueue: DatabaseQueue

    private init(path: String, retention: Int, dbQueue: DatabaseQueue) {
        self.path = path
        self.retention = retention
        self.dbQueue = dbQueue
    }

    /// Opens the history at `path`, creating the file and its parent folders as needed.
    ///
    /// A file SQLite cannot read as a database (garbage, truncated, corrupt) is renamed to
    /// `<path>.corrupt-<yyyyMMdd-HHmmss>` and a fresh history is created in its place; the returned warnings say so.
    ///
    /// - Parameters:
    ///   - retention: how many runs to keep (0 keeps all).
    ///   - now: the time used to name a file moved aside.
    /// - Throws: ``HistoryError`` when no usable store can be had (folder not writable, file locked or from a newer
    ///   Fanout, moving aside failed).
    ///   - checkPages: read every page to find damage now (`PRAGMA quick_check`: a tenth of a second per 20 MB);
    ///     a caller that knows the file is as its own last close left it may skip it.
    public static func open(at path: String, retention: Int = defaultRetention, now: Date = Date(),
                            checkPages: Bool = true) throws(HistoryError) -> (store: HistoryStore, warnings: [String])
    {
        let fileManager = FileManager.default
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try fileManager.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw .folderUnavailable(folder: folder, reason: error.localizedDescription)
        }
        guard fileManager.isWritableFile(atPath: folder) else {
            throw .folderUnavailable(folder: folder, reason: "the folder is not writable")
        }
        // SQLite silently opens a read-only file read-only and fails only at the first write; say it up front.
        if fileManager.fileExists(atPath: path),
           !fileManager.isReadableFile(atPath: path) || !fileManager.isWritableFile(atPath: path) {
            throw .fileNotAccessible(path: path)
        }

        // Two runs in one package may open the same history at once: opening (creating and migrating a fresh file,
        // or moving a corrupt one aside) happens under a lock on the folder, so the second waits, then finds the
        // file the first left. Recording needs no such lock: SQLite's own locks and the busy timeout cover it.
        let lock = try FolderLock.acquire(folder: folder, for: path)
        defer { lock.release() }
        do {
            let queue = try connect(path: path, checkPages: checkPages)
            return (HistoryStore(path: path, retention: retention, dbQueue: queue), [])
        } catch let problem where isUnreadable(problem) {
            let aside = try moveAside(path, now: now)
            let warning = "history \(path) was unreadable (\(describe(problem))); moved it to \(aside) and started "
                + "a fresh history: estimates fall back to test counts until new runs are recorded"
            do {
                let queue = try connect(path: path, checkPages: true)
                return (HistoryStore(path: path, retention: retention, dbQueue: queue), [warning])
            } catch {
                throw map(error, path: path, action: "create a fresh history")
            }
        } catch let error as HistoryError {
            throw error
        } catch {
            throw map(error, path: path, action: "open the history")
        }
    }

    /// Closes the database: SQLite folds its write-ahead log into the file, so the file alone holds the history
    /// (what a CI cache copies). Nothing may use the store after.
    /// Returns whether it closed (and the file is whole).
    @discardableResult
    public func close() -> Bool {
        (try? dbQueue.close()) != nil
    }

    /// A store that lives in memory only, for tests and for runs that must not touch the disk.
    public static func inMemory(retention: Int = defaultRetention) throws(HistoryError) -> HistoryStore {
        do {
            let queue = try DatabaseQueue(configuration: configuration)
            try HistorySchema.migrator.migrate(queue)
            return HistoryStore(path: ":memory:", retention: retention, dbQueue: queue)
        } catch {
            throw map(error, path: ":memory:", action: "create an in-memory history")
        }
    }

    /// The schema version of the open database: how many of the known migrations have been applied.
    public func schemaVersion() throws(HistoryError) -> Int {
        try read("read the schema version") { db in
            try HistorySchema.migrator.completedMigrations(db).count
        }
    }

    // MARK: - Opening

    /// Files whose every page this process read at open, and how often (for tests).
    static let pageChecks = Mutex<[String: Int]>([:])

    /// How long a write waits for another process's write to finish before giving up with ``HistoryError/locked(path:)``.
    static let busyTimeout: TimeInterval = 30

    private static var configuration: Configuration {
        var config = Configuration()
        config.label = "fanout.history"
        // WAL: a run reading its estimates never waits for another run that is recording, and the other way round.
        config.journalMode = .wal
        // Two Fanout runs may finish at the same moment in one package: the second waits instead of failing.
        config.busyMode = .timeout(busyTimeout)
        return config
    }

    /// Opens, checks and migrates the file. The queue is closed before any error leaves, so the file can be renamed.
    /// `checkPages`: read every page (skipped for a file known to be as its last close left it).
    private static func connect(path: String, checkPages: Bool) throws -> DatabaseQueue {
        // Opening already reads the schema (GRDB rejects files that are not databases here).
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        do {
            let unknown: [String] = try queue.read { db in
                let known = Set(HistorySchema.migrator.migrations)
                return try HistorySchema.migrator.appliedIdentifiers(db).filter { !known.contains($0) }.sorted()
            }
            if !unknown.isEmpty {
                throw HistoryError.newerSchema(path: path, unknownMigrations: unknown)
            }
            // A truncated file can still have a readable first page; quick_check reads every page (but skips the
            // costly index cross-checks), so damage shows now and not in the middle of recording a run.
            if checkPages {
                pageChecks.withLock { $0[path, default: 0] += 1 }
                let verdict = try queue.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check(1)") }
                if verdict != "ok" {
                    throw CorruptionFound(message: verdict ?? "integrity check returned nothing")
                }
            }
            try HistorySchema.migrator.migrate(queue)
            return queue
        } catch {
            try? queue.close()
            throw error
        }
    }

    /// `PRAGMA quick_check` reports damage as a row of text rather than an SQLite error.
    private struct CorruptionFound: Error {
        var message: String
    }

    /// Whether the file itself is bad (as opposed to the disk, permissions or a lock), so moving it aside helps.
    private static func isUnreadable(_ error: any Error) -> Bool {
        if error is CorruptionFound { return true }
        guard let error = error as? DatabaseError else { return false }
        return error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
            // A file shorter than its header claims reads short.
            || error.extendedResultCode == .SQLITE_IOERR_SHORT_READ
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? CorruptionFound { return error.message }
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        return "\(error)"
    }

    /// Renames the file (and the journal files SQLite keeps beside it, which would otherwise be replayed into the new
    /// database) to `<path>.corrupt-<yyyyMMdd-HHmmss>`, adding `-2`, `-3`... when that name is taken.
    private static func moveAside(_ path: String, now: Date) throws(HistoryError) -> String {
        let fileManager = FileManager.default
        let stem = "\(path).corrupt-\(timestamp(now))"
        var aside = stem
        var n = 1
        while fileManager.fileExists(atPath: aside) {
            n += 1
            aside = "\(stem)-\(n)"
        }
        do {
            try fileManager.moveItem(atPath: path, toPath: aside)
        } catch {
            throw .cannotMoveAside(path: path, destination: aside, reason: error.localizedDescription)
        }
        for suffix in ["-journal", "-wal", "-shm"] where fileManager.fileExists(atPath: path + suffix) {
            do {
                try fileManager.moveItem(atPath: path + suffix, toPath: aside + suffix)
            } catch {
                throw .cannotMoveAside(path: path + suffix, destination: aside + suffix,
                                       reason: error.localizedDescription)
            }
        }
        return aside
    }

    /// `yyyyMMdd-HHmmss` in the local time zone, matching the clock of the person who finds the file.
    static func timestamp(_ date: Date, timeZone: TimeZone = .current) -> String {
        let parts = Calendar(identifier: .gregorian).dateComponents(in: timeZone, from: date)
        func pad(_ value: Int?, _ width: Int) -> String {
            let digits = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return pad(parts.year, 4) + pad(parts.month, 2) + pad(parts.day, 2) + "-"
            + pad(parts.hour, 2) + pad(parts.minute, 2) + pad(parts.second, 2)
    }

    // MARK: - Access with typed errors

    func read<T>(_ action: String, _ body: (Database) throws -> T) throws(HistoryError) -> T {
        do {
            return try dbQueue.read(body)
        } catch {
            throw Self.map(error, path: path, action: action)
        }
    }

    /// Runs `body` in an IMMEDIATE transaction: the write lock is taken at BEGIN, so two processes recording at once
    /// queue up on the busy timeout instead of one failing at its first write (a deferred transaction that started
    /// as a reader cannot wait its way into a writer).
    func write<T>(_ action: String, _ body: (Database) throws -> T) throws(HistoryError) -> T {
        do {
            return try dbQueue.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                guard let result else { throw HistoryError.database(path: path, action: action, message: "the transaction returned nothing") }
                return result
            }
        } catch {
            throw Self.map(error, path: path, action: action)
        }
    }

    static func map(_ error: any Error, path: String, action: String) -> HistoryError {
        if let error = error as? HistoryError { return error }
        if let error = error as? DatabaseError {
            if error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED { return .locked(path: path) }
            return .database(path: path, action: action, message: error.message ?? "\(error.resultCode)")
        }
        return .database(path: path, action: action, message: "\(error)")
    }
}
