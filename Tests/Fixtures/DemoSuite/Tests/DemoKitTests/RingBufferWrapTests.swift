import Foundation
import XCTest
import DemoKit

final class RingBufferWrapTests: XCTestCase {
    func testOverwritesOldest() {
        simulateLatency(0.15)
        var b = RingBuffer<Int>(capacity: 3)
        for i in 1...5 { b.push(i) }
        XCTAssertEqual(b.elements, [3, 4, 5])
    }

    func testPopAfterWrap() {
        simulateLatency(0.05)
        var b = RingBuffer<Int>(capacity: 2)
        for i in 1...3 { b.push(i) }
        XCTAssertEqual(b.pop(), 2)
        XCTAssertEqual(b.pop(), 3)
        XCTAssertNil(b.pop())
    }

    func testCountNeverExceedsCapacity() {
        simulateLatency(0.1)
        var b = RingBuffer<Int>(capacity: 5)
        for i in 0..<100 {
            b.push(i)
            XCTAssertLessThanOrEqual(b.count, 5)
        }
    }
}
