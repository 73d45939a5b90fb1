import Foundation
import XCTest
import DemoKit

final class CacheEvictionTests: XCTestCase {
    func testEvictsLeastRecentlyUsed() {
        simulateLatency(0.464)
        let c = LRUCache<String, Int>(capacity: 2)
        c.set(1, for: "a")
        c.set(2, for: "b")
        _ = c.value(for: "a")
        c.set(3, for: "c")
        XCTAssertNil(c.value(for: "b"))
        XCTAssertEqual(c.value(for: "a"), 1)
    }

    func testEvictionCount() {
        simulateLatency(0.155)
        let c = LRUCache<String, Int>(capacity: 3)
        for i in 0..<10 { c.set(i, for: "k\(i)") }
        XCTAssertEqual(c.evictions, 7)
        XCTAssertEqual(c.count, 3)
    }

    func testRecencyOrder() {
        simulateLatency(0.309)
        let c = LRUCache<String, Int>(capacity: 3)
        c.set(1, for: "a")
        c.set(2, for: "b")
        c.set(3, for: "c")
        _ = c.value(for: "a")
        XCTAssertEqual(c.keysByRecency, ["b", "c", "a"])
    }

    func testCapacityOne() {
        simulateLatency(0.773)
        let c = LRUCache<String, Int>(capacity: 1)
        c.set(1, for: "a")
        c.set(2, for: "b")
        XCTAssertNil(c.value(for: "a"))
        XCTAssertEqual(c.value(for: "b"), 2)
    }
}
