import Foundation
import XCTest
import DemoKit

final class AuditLogTests: XCTestCase {
    func testPutIsLogged() {
        simulateLatency(0.125)
        let store = KeyValueStore()
        store.put("v", for: "k")
        XCTAssertEqual(store.auditLog, ["put k"])
    }

    func testDeleteOfMissingKeyIsNotLogged() {
        simulateLatency(0.042)
        let store = KeyValueStore()
        store.delete("ghost")
        XCTAssertTrue(store.auditLog.isEmpty)
    }

    func testMigrationIsLogged() throws {
        simulateLatency(0.083)
        let store = KeyValueStore()
        try store.migrate([.init(version: 1) { $0["x"] = "y" }])
        XCTAssertEqual(store.auditLog, ["migrate 1"])
    }
}
