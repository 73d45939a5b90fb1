import XCTest

/// Innocent: shares a process with the polluters and victims, touches nothing shared.
final class GFillerTests: XCTestCase {
    func test1() { XCTAssertGreaterThanOrEqual(busyWork(1), 0) }
    func test2() { XCTAssertGreaterThanOrEqual(busyWork(2), 0) }
    func test3() { XCTAssertGreaterThanOrEqual(busyWork(3), 0) }
    func test4() { XCTAssertGreaterThanOrEqual(busyWork(4), 0) }
    func test5() { XCTAssertGreaterThanOrEqual(busyWork(5), 0) }
}
