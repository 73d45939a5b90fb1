/// Why the history store could not do what it was asked. Every case prints what went wrong and how to fix it, so the
/// CLI can show it as is.
///
/// Corrupt or unreadable history files are not errors: ``HistoryStore/open(at:retention:now:)`` moves them aside and
/// returns a warning. These cases are what is left when the store cannot recover by itself.
public enum HistoryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The folder that holds the history file could not be created or is not writable.
    case folderUnavailable(folder: String, reason: String)
    /// The history file exists but this user may not read or write it.
    case fileNotAccessible(path: String)
    /// The history file was unreadable, and renaming it out of the way failed too.
    case cannotMoveAside(path: String, destination: String, reason: String)
    /// The file was written by a newer Fanout: its schema has migrations this version does not know.
    case newerSchema(path: String, unknownMigrations: [String])
    /// Another process kept the database locked for longer than the busy timeout.
    case locked(path: String)
    /// Any other SQLite failure while `action` was under way.
    case database(path: String, action: String, message: String)

    public var description: String {
        switch self {
        case .folderUnavailable(let folder, let reason):
            "cannot use the history folder \(folder): \(reason). "
                + "Make the folder writable (or create it), or choose another history path."
        case .fileNotAccessible(let path):
            "cannot read and write the history file \(path). "
                + "Fix its permissions (chmod u+rw '\(path)'), or delete it to start a fresh history."
        case .cannotMoveAside(let path, let destination, let reason):
            "the history file \(path) is unreadable, and moving it to \(destination) failed: \(reason). "
                + "Delete or move the file by hand to start a fresh history."
        case .newerSchema(let path, let unknown):
            "the history file \(path) was written by a newer Fanout (unknown schema migrations: "
                + "\(unknown.joined(separator: ", "))). Upgrade Fanout, or move the file away to start a fresh history."
        case .locked(let path):
            "the history file \(path) stayed locked by another process (another Fanout run?). "
                + "Wait for it to finish, or use a separate history path for concurrent runs."
        case .database(let path, let action, let message):
            "history \(path): could not \(action): \(message). "
                + "If this persists, move the file away to start a fresh history."
        }
    }
}
