import Foundation
import XCTest
import DemoKit

final class LRUCacheTests: XCTestCase {
    func testStoresAndReturnsValues() {
        simulateLatency(0.086)
        let c = LRUCache<String, Int>(capacity: 2)
        c.set(1, for: "a")
        XCTAssertEqual(c.value(for: "a"), 1)
    }

    func testMissReturnsNil() {
        simulateLatency(0.029)
        let c = LRUCache<String, Int>(capacity: 2)
        XCTAssertNil(c.value(for: "x"))
        XCTAssertEqual(c.misses, 1)
    }

    func testOverwriteKeepsCount() {
        simulateLatency(0.057)
        let c = LRUCache<String, Int>(capacity: 2)
        c.set(1, for: "a")
        c.set(2, for: "a")
        XCTAssertEqual(c.count, 1)
        XCTAssertEqual(c.value(for: "a"), 2)
    }

    func testRemove() {
        simulateLatency(0.143)
        let c = LRUCache<String, Int>(capacity: 2)
        c.set(1, for: "a")
        XCTAssertEqual(c.remove("a"), 1)
        XCTAssertEqual(c.count, 0)
        XCTAssertNil(c.remove("a"))
    }

    func testHitCounting() {
        simulateLatency(0.029)
        let c = LRUCache<String, Int>(capacity: 2)
        c.set(1, for: "a")
        _ = c.value(for: "a")
        _ = c.value(for: "a")
        XCTAssertEqual(c.hits, 2)
    }

    func testRemoveAll() {
        simulateLatency(0.057)
        let c = LRUCache<String, Int>(capacity: 2)
        c.set(1, for: "a")
        c.set(2, for: "b")
        c.removeAll()
        XCTAssertEqual(c.count, 0)
        XCTAssertTrue(c.keysByRecency.isEmpty)
    }
}
