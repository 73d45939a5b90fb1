import Foundation
import XCTest
import DemoKit

final class StoreQueryTests: XCTestCase {
    func seededStore() -> KeyValueStore {
        let store = KeyValueStore()
        for i in 1...20 { store.put("user-\(i)", for: "user:" + (i < 10 ? "0\(i)" : "\(i)")) }
        store.put("pending", for: "order:1")
        return store
    }

    func testQueryByPrefix() {
        simulateLatency(0.429)
        XCTAssertEqual(seededStore().query(prefix: "user:").count, 20)
    }

    func testQueryIsSorted() {
        simulateLatency(0.143)
        let keys = seededStore().query(prefix: "user:").map(\.key)
        XCTAssertEqual(keys, keys.sorted())
        XCTAssertEqual(keys.first, "user:01")
    }

    func testQueryNoMatches() {
        simulateLatency(0.286)
        XCTAssertTrue(seededStore().query(prefix: "invoice:").isEmpty)
    }

    func testGetMissingKeyThrows() throws {
        simulateLatency(0.714)
        XCTAssertThrowsError(try seededStore().get("nope")) { error in
            XCTAssertEqual(error as? KeyValueStore.StoreError, .missingKey("nope"))
        }
    }

    func testDeleteRemovesFromQuery() {
        simulateLatency(0.143)
        let store = seededStore()
        store.delete("user:01")
        XCTAssertEqual(store.query(prefix: "user:").count, 19)
    }

    func testKeysAreSorted() {
        simulateLatency(0.286)
        let store = seededStore()
        XCTAssertEqual(store.keys.first, "order:1")
        XCTAssertEqual(store.count, 21)
    }
}
