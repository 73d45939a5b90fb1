/// An in-memory "database" with a schema version, migrations, transactions and an audit log.
public final class KeyValueStore {
    public enum StoreError: Error, Equatable {
        case missingKey(String)
        case migrationGap(from: Int, to: Int)
        case transactionAborted
    }

    public struct Migration {
        public let version: Int
        public let apply: (inout [String: String]) -> Void
        public init(version: Int, apply: @escaping (inout [String: String]) -> Void) {
            self.version = version
            self.apply = apply
        }
    }

    public private(set) var schemaVersion = 0
    public private(set) var auditLog: [String] = []
    private var rows: [String: String] = [:]

    public init() {}

    public var count: Int { rows.count }
    public var keys: [String] { rows.keys.sorted() }

    public func put(_ value: String, for key: String) {
        rows[key] = value
        auditLog.append("put \(key)")
    }

    public func get(_ key: String) throws -> String {
        guard let v = rows[key] else { throw StoreError.missingKey(key) }
        return v
    }

    public func delete(_ key: String) {
        if rows.removeValue(forKey: key) != nil { auditLog.append("delete \(key)") }
    }

    public func query(prefix: String) -> [(key: String, value: String)] {
        rows.filter { $0.key.hasPrefix(prefix) }
            .sorted { $0.key < $1.key }
            .map { (key: $0.key, value: $0.value) }
    }

    /// Applies migrations in order; versions must be consecutive after the current one.
    public func migrate(_ migrations: [Migration]) throws {
        for m in migrations.sorted(by: { $0.version < $1.version }) where m.version > schemaVersion {
            guard m.version == schemaVersion + 1 else {
                throw StoreError.migrationGap(from: schemaVersion, to: m.version)
            }
            m.apply(&rows)
            schemaVersion = m.version
            auditLog.append("migrate \(m.version)")
        }
    }

    /// Runs `body` on a copy; commits if it returns true, otherwise rolls back.
    @discardableResult
    public func transaction(_ body: (inout [String: String]) throws -> Bool) throws -> Bool {
        var copy = rows
        guard try body(&copy) else {
            auditLog.append("rollback")
            return false
        }
        rows = copy
        auditLog.append("commit")
        return true
    }
}
