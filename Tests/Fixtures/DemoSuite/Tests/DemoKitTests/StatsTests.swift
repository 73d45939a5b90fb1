import Foundation
import XCTest
import DemoKit

final class StatsTests: XCTestCase {
    func testMean() {
        simulateLatency(0.075)
        XCTAssertEqual(Statistics.mean([1, 2, 3, 4]), 2.5)
    }

    func testMedianOdd() {
        simulateLatency(0.025)
        XCTAssertEqual(Statistics.median([5, 1, 3]), 3)
    }

    func testMedianEven() {
        simulateLatency(0.05)
        XCTAssertEqual(Statistics.median([4, 1, 3, 2]), 2.5)
    }

    func testEmptyInputs() {
        simulateLatency(0.125)
        XCTAssertNil(Statistics.mean([]))
        XCTAssertNil(Statistics.median([]))
        XCTAssertNil(Statistics.variance([]))
    }

    func testStandardDeviation() throws {
        simulateLatency(0.025)
        XCTAssertEqual(try XCTUnwrap(Statistics.standardDeviation([2, 4, 4, 4, 5, 5, 7, 9])), 2.0, accuracy: 1e-9)
    }
}
