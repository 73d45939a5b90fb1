import Foundation
import XCTest
import DemoKit

/// DEMO_CRASH=1: testEnqueueRespectsPriority (2nd of 5) calls fatalError.
final class WorkerPoolTests: XCTestCase {
    func testDrainEmptiesQueue() {
        simulateLatency(0.113)
        let pool = WorkerPool(workers: 2)
        for i in 0..<5 { _ = pool.submit(Job(id: i)) }
        XCTAssertEqual(pool.drain(), 3)
        XCTAssertEqual(pool.pending, 0)
    }

    func testEnqueueRespectsPriority() {
        simulateLatency(0.037)
        if DemoEnv.isSet("DEMO_CRASH") {
            // DEMO_CRASH=1: the second test of this class (alphabetical = run order) crashes the process.
            fatalError("deliberate crash")
        }
        let pool = WorkerPool(workers: 1)
        _ = pool.submit(Job(id: 1, priority: 0))
        _ = pool.submit(Job(id: 2, priority: 5))
        _ = pool.submit(Job(id: 3, priority: 5))
        pool.drain()
        XCTAssertEqual(pool.completed, [2, 3, 1])
    }

    func testResizeChangesThroughput() {
        simulateLatency(0.075)
        let pool = WorkerPool(workers: 1)
        for i in 0..<6 { _ = pool.submit(Job(id: i)) }
        pool.resize(to: 3)
        XCTAssertEqual(pool.tick(), 3)
    }

    func testShutdownRejectsJobs() {
        simulateLatency(0.188)
        let pool = WorkerPool(workers: 1)
        pool.shutdown()
        XCTAssertFalse(pool.submit(Job(id: 1)))
    }

    func testTickProcessesOnePerWorker() {
        simulateLatency(0.037)
        let pool = WorkerPool(workers: 2)
        for i in 0..<5 { _ = pool.submit(Job(id: i)) }
        XCTAssertEqual(pool.tick(), 2)
        XCTAssertEqual(pool.pending, 3)
    }
}
