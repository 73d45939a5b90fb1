import Foundation
import XCTest
import DemoKit

final class CacheStressTests: XCTestCase {
    func testManyInsertions() {
        simulateLatency(1.071)
        let c = LRUCache<Int, Int>(capacity: 100)
        for i in 0..<5_000 { c.set(i * i, for: i) }
        XCTAssertEqual(c.count, 100)
        XCTAssertEqual(c.evictions, 4_900)
    }

    func testHotKeySurvives() {
        simulateLatency(0.357)
        let c = LRUCache<Int, Int>(capacity: 10)
        c.set(0, for: 0)
        for i in 1..<1_000 {
            _ = c.value(for: 0)
            c.set(i, for: i)
        }
        XCTAssertEqual(c.value(for: 0), 0)
    }

    func testHitRatioUnderCyclicAccess() {
        simulateLatency(0.714)
        let c = LRUCache<Int, Int>(capacity: 8)
        for _ in 0..<50 {
            for k in 0..<8 where c.value(for: k) == nil { c.set(k, for: k) }
        }
        XCTAssertEqual(c.misses, 8)
        XCTAssertEqual(c.hits, 392)
    }

    func testThrashingWhenWorkingSetExceedsCapacity() {
        simulateLatency(1.786)
        let c = LRUCache<Int, Int>(capacity: 4)
        for _ in 0..<20 {
            for k in 0..<5 where c.value(for: k) == nil { c.set(k, for: k) }
        }
        XCTAssertEqual(c.hits, 0)
        XCTAssertEqual(c.misses, 100)
    }

    func testStringKeys() {
        simulateLatency(0.357)
        let c = LRUCache<String, String>(capacity: 50)
        for i in 0..<500 { c.set("v\(i)", for: "key-\(i)") }
        XCTAssertEqual(c.value(for: "key-499"), "v499")
        XCTAssertNil(c.value(for: "key-0"))
    }

    func testRemoveDuringChurn() {
        simulateLatency(0.714)
        let c = LRUCache<Int, Int>(capacity: 20)
        for i in 0..<200 {
            c.set(i, for: i)
            if i % 3 == 0 { c.remove(i) }
        }
        XCTAssertLessThanOrEqual(c.count, 20)
        XCTAssertNil(c.value(for: 198))
    }
}
