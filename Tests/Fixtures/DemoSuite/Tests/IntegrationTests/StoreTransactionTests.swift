import Foundation
import XCTest
import DemoKit

final class StoreTransactionTests: XCTestCase {
    func testCommit() throws {
        simulateLatency(0.475)
        let store = KeyValueStore()
        try store.transaction { rows in
            rows["a"] = "1"
            return true
        }
        XCTAssertEqual(try store.get("a"), "1")
    }

    func testRollback() throws {
        simulateLatency(0.158)
        let store = KeyValueStore()
        store.put("0", for: "a")
        let committed = try store.transaction { rows in
            rows["a"] = "changed"
            return false
        }
        XCTAssertFalse(committed)
        XCTAssertEqual(try store.get("a"), "0")
    }

    func testThrowingBodyLeavesStoreUntouched() throws {
        simulateLatency(0.317)
        struct Boom: Error {}
        let store = KeyValueStore()
        store.put("0", for: "a")
        XCTAssertThrowsError(try store.transaction { rows in
            rows["a"] = "x"
            throw Boom()
        })
        XCTAssertEqual(try store.get("a"), "0")
    }

    func testAuditLogRecordsOutcome() throws {
        simulateLatency(0.792)
        let store = KeyValueStore()
        try store.transaction { _ in true }
        try store.transaction { _ in false }
        XCTAssertEqual(store.auditLog, ["commit", "rollback"])
    }

    func testManyWritesInOneTransaction() throws {
        simulateLatency(0.158)
        let store = KeyValueStore()
        try store.transaction { rows in
            for i in 0..<100 { rows["k\(i)"] = "\(i)" }
            return true
        }
        XCTAssertEqual(store.count, 100)
    }
}
