import Foundation
import XCTest
import DemoKit

final class FibonacciTests: XCTestCase {
    func testFirstTerms() {
        simulateLatency(0.125)
        XCTAssertEqual((0..<10).map(Arithmetic.fibonacci), [0, 1, 1, 2, 3, 5, 8, 13, 21, 34])
    }

    func testFiftiethTerm() {
        simulateLatency(0.042)
        XCTAssertEqual(Arithmetic.fibonacci(50), 12_586_269_025)
    }

    func testRecurrence() {
        simulateLatency(0.083)
        for n in 2..<40 {
            XCTAssertEqual(Arithmetic.fibonacci(n), Arithmetic.fibonacci(n - 1) + Arithmetic.fibonacci(n - 2))
        }
    }
}
