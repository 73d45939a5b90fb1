import Foundation
import XCTest
import DemoKit

final class FactorialTests: XCTestCase {
    func testSmallFactorials() throws {
        simulateLatency(0.1)
        XCTAssertEqual(try (0...5).map { try Arithmetic.factorial($0) }, [1, 1, 2, 6, 24, 120])
    }

    func testTwenty() throws {
        simulateLatency(0.033)
        XCTAssertEqual(try Arithmetic.factorial(20), 2_432_902_008_176_640_000)
    }

    func testOverflowThrows() throws {
        simulateLatency(0.067)
        XCTAssertThrowsError(try Arithmetic.factorial(21)) { error in
            XCTAssertEqual(error as? Arithmetic.Failure, .overflow)
        }
    }
}
