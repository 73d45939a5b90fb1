import XCTest

/// The other half of the pair (see `HalfOneTests`).
final class HalfTwoTests: XCTestCase {
    func testInnocent() { XCTAssertGreaterThanOrEqual(busyWork(4), 0) }
    func testSetsFlagB() { flagB = true }
}
