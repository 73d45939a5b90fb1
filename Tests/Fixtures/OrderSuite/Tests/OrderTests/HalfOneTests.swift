import XCTest

/// Half of a pair: `VictimTests.testNeedsNotBothFlags` fails only after this and `HalfTwoTests.testSetsFlagB`.
final class HalfOneTests: XCTestCase {
    func testSetsFlagA() { flagA = true }
    func testInnocent() { XCTAssertGreaterThanOrEqual(busyWork(3), 0) }
}
