import Foundation
import XCTest
import DemoKit

final class GCDTests: XCTestCase {
    func testGCD() {
        simulateLatency(0.075)
        XCTAssertEqual(Arithmetic.gcd(48, 18), 6)
    }

    func testGCDWithZeroAndNegatives() {
        simulateLatency(0.025)
        XCTAssertEqual(Arithmetic.gcd(0, 5), 5)
        XCTAssertEqual(Arithmetic.gcd(-12, 8), 4)
    }

    func testLCM() {
        simulateLatency(0.05)
        XCTAssertEqual(Arithmetic.lcm(4, 6), 12)
        XCTAssertEqual(Arithmetic.lcm(0, 3), 0)
    }
}
