import Foundation
import XCTest
import DemoKit

final class VarianceTests: XCTestCase {
    func testVarianceOfConstant() {
        simulateLatency(0.35)
        XCTAssertEqual(Statistics.variance([7, 7, 7]), 0)
    }

    func testPopulationVariance() throws {
        simulateLatency(0.117)
        XCTAssertEqual(try XCTUnwrap(Statistics.variance([2, 4, 4, 4, 5, 5, 7, 9])), 4, accuracy: 1e-9)
    }

    func testShiftInvariance() throws {
        simulateLatency(0.233)
        let xs: [Double] = [1, 5, 9, 13]
        XCTAssertEqual(try XCTUnwrap(Statistics.variance(xs)), try XCTUnwrap(Statistics.variance(xs.map { $0 + 100 })), accuracy: 1e-9)
    }
}
