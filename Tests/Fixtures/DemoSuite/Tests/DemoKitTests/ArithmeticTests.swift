import Foundation
import XCTest
import DemoKit

/// DEMO_FAIL=1 makes testMultiply fail.
final class ArithmeticTests: XCTestCase {
    func testAdd() {
        simulateLatency(0.03)
        XCTAssertEqual(Arithmetic.add(2, 3), 5)
    }

    func testSubtract() {
        simulateLatency(0.01)
        XCTAssertEqual(Arithmetic.subtract(2, 5), -3)
    }

    func testMultiply() {
        simulateLatency(0.02)
        if DemoEnv.isSet("DEMO_FAIL") {
            // DEMO_FAIL=1: wrong expectation on purpose.
            XCTAssertEqual(Arithmetic.multiply(2, 3), 7, "deliberate failure")
        } else {
            XCTAssertEqual(Arithmetic.multiply(2, 3), 6)
        }
    }

    func testDivide() throws {
        simulateLatency(0.05)
        XCTAssertEqual(try Arithmetic.divide(7, by: 2), 3)
    }

    func testDivideByZeroThrows() throws {
        simulateLatency(0.01)
        XCTAssertThrowsError(try Arithmetic.divide(1, by: 0)) { error in
            XCTAssertEqual(error as? Arithmetic.Failure, .divisionByZero)
        }
    }
}
