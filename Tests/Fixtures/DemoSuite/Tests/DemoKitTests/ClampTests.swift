import Foundation
import XCTest
import DemoKit

final class ClampTests: XCTestCase {
    func testClampInsideRange() {
        simulateLatency(0.075)
        XCTAssertEqual(Arithmetic.clamp(5, to: 0...10), 5)
    }

    func testClampOutsideRange() {
        simulateLatency(0.025)
        XCTAssertEqual(Arithmetic.clamp(-3, to: 0...10), 0)
        XCTAssertEqual(Arithmetic.clamp(2.5, to: 0.0...1.0), 1.0)
    }
}
