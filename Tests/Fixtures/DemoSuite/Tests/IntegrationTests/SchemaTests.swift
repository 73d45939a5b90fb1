import Foundation
import XCTest
import DemoKit

final class SchemaTests: XCTestCase {
    func testEmptyMigrationListIsNoop() throws {
        simulateLatency(0.225)
        let store = KeyValueStore()
        try store.migrate([])
        XCTAssertEqual(store.schemaVersion, 0)
    }

    func testGapFromZeroIsRejected() throws {
        simulateLatency(0.075)
        let store = KeyValueStore()
        XCTAssertThrowsError(try store.migrate([.init(version: 2) { _ in }]))
    }

    func testSchemaVersionAdvances() throws {
        simulateLatency(0.15)
        let store = KeyValueStore()
        try store.migrate([.init(version: 1) { _ in }])
        XCTAssertEqual(store.schemaVersion, 1)
    }
}
