import Foundation
import XCTest
import DemoKit

final class RingBufferTests: XCTestCase {
    func testPushPop() {
        simulateLatency(0.055)
        var b = RingBuffer<Int>(capacity: 3)
        b.push(1)
        b.push(2)
        XCTAssertEqual(b.pop(), 1)
        XCTAssertEqual(b.count, 1)
    }

    func testEmpty() {
        simulateLatency(0.018)
        var b = RingBuffer<Int>(capacity: 2)
        XCTAssertTrue(b.isEmpty)
        XCTAssertNil(b.pop())
    }

    func testFull() {
        simulateLatency(0.036)
        var b = RingBuffer<Int>(capacity: 2)
        b.push(1)
        b.push(2)
        XCTAssertTrue(b.isFull)
    }

    func testElementsInOrder() {
        simulateLatency(0.091)
        var b = RingBuffer<Int>(capacity: 4)
        for i in 1...3 { b.push(i) }
        XCTAssertEqual(b.elements, [1, 2, 3])
    }
}
