import Foundation
import XCTest
import DemoKit

final class JobQueueTests: XCTestCase {
    func testFIFOWithinPriority() {
        simulateLatency(0.082)
        var queue = JobQueue()
        queue.enqueue(Job(id: 1))
        queue.enqueue(Job(id: 2))
        XCTAssertEqual(queue.dequeue()?.id, 1)
    }

    func testHigherPriorityFirst() {
        simulateLatency(0.027)
        var queue = JobQueue()
        queue.enqueue(Job(id: 1, priority: 0))
        queue.enqueue(Job(id: 2, priority: 9))
        XCTAssertEqual(queue.dequeue()?.id, 2)
    }

    func testDequeueEmpty() {
        simulateLatency(0.055)
        var queue = JobQueue()
        XCTAssertNil(queue.dequeue())
    }

    func testCount() {
        simulateLatency(0.136)
        var queue = JobQueue()
        for i in 0..<3 { queue.enqueue(Job(id: i)) }
        XCTAssertEqual(queue.count, 3)
        XCTAssertFalse(queue.isEmpty)
    }
}
