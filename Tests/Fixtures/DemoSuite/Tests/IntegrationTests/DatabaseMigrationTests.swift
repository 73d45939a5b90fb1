import Foundation
import XCTest
import DemoKit

final class DatabaseMigrationTests: XCTestCase {
    /// v1 adds defaults, v2 upper-cases user names, v3 stamps the schema.
    static var migrations: [KeyValueStore.Migration] {
        [
            .init(version: 1) { rows in rows["settings:theme"] = "light" },
            .init(version: 2) { rows in
                for (key, value) in rows where key.hasPrefix("user:") { rows[key] = value.uppercased() }
            },
            .init(version: 3) { rows in rows["meta:schema"] = "3" },
        ]
    }

    func testFreshStoreStartsAtVersionZero() {
        simulateLatency(1.263)
        let store = KeyValueStore()
        XCTAssertEqual(store.schemaVersion, 0)
        XCTAssertEqual(store.count, 0)
    }

    func testApplyAllMigrations() throws {
        simulateLatency(0.421)
        let store = KeyValueStore()
        try store.migrate(Self.migrations)
        XCTAssertEqual(store.schemaVersion, 3)
    }

    func testMigrationsAreIdempotent() throws {
        simulateLatency(0.842)
        let store = KeyValueStore()
        try store.migrate(Self.migrations)
        try store.migrate(Self.migrations)
        XCTAssertEqual(store.schemaVersion, 3)
        XCTAssertEqual(store.auditLog.filter { $0.hasPrefix("migrate") }.count, 3)
    }

    func testMigrationGapIsRejected() throws {
        simulateLatency(2.105)
        let store = KeyValueStore()
        let all = Self.migrations
        XCTAssertThrowsError(try store.migrate([all[0], all[2]])) { error in
            XCTAssertEqual(error as? KeyValueStore.StoreError, .migrationGap(from: 1, to: 3))
        }
    }

    func testMigrationTransformsRows() throws {
        simulateLatency(0.421)
        let store = KeyValueStore()
        store.put("alice", for: "user:1")
        try store.migrate(Self.migrations)
        XCTAssertEqual(try store.get("user:1"), "ALICE")
    }

    func testMigrationAddsDefaults() throws {
        simulateLatency(0.842)
        let store = KeyValueStore()
        try store.migrate(Self.migrations)
        XCTAssertEqual(try store.get("settings:theme"), "light")
    }

    func testMigrationOrderDoesNotMatter() throws {
        simulateLatency(1.684)
        let store = KeyValueStore()
        try store.migrate(Self.migrations.reversed())
        XCTAssertEqual(store.schemaVersion, 3)
    }

    func testPartialMigrationThenRest() throws {
        simulateLatency(0.421)
        let store = KeyValueStore()
        try store.migrate(Array(Self.migrations.prefix(1)))
        XCTAssertEqual(store.schemaVersion, 1)
        try store.migrate(Self.migrations)
        XCTAssertEqual(store.schemaVersion, 3)
    }
}
