import Foundation
import XCTest
import DemoKit

final class PercentileTests: XCTestCase {
    func testP50() {
        simulateLatency(0.245)
        XCTAssertEqual(Statistics.percentile([15, 20, 35, 40, 50], 50), 35)
    }

    func testP100IsMax() {
        simulateLatency(0.082)
        XCTAssertEqual(Statistics.percentile([3, 1, 2], 100), 3)
    }

    func testP0IsMin() {
        simulateLatency(0.164)
        XCTAssertEqual(Statistics.percentile([3, 1, 2], 0), 1)
    }

    func testOutOfRange() {
        simulateLatency(0.409)
        XCTAssertNil(Statistics.percentile([1], 101))
    }
}
