import Foundation
import XCTest
import DemoKit

final class SchedulerTests: XCTestCase {
    func testSingleWorkerSumsCosts() {
        simulateLatency(0.225)
        XCTAssertEqual(Scheduler.makespan(costs: [3, 1, 4], workers: 1), 8)
    }

    func testLongestJobBoundsMakespan() {
        simulateLatency(0.075)
        XCTAssertEqual(Scheduler.makespan(costs: [10, 1, 1, 1], workers: 4), 10)
    }

    func testLongestFirstIsNotAlwaysOptimal() {
        simulateLatency(0.15)
        // Optimum is 9 (5+4 | 3+3+3); longest-first gives 10.
        XCTAssertEqual(Scheduler.makespan(costs: [5, 4, 3, 3, 3], workers: 2), 10)
    }
}
