import XCTest

/// The polluter of `VictimTests.testReadsFreshCache`: warms a global cache and never clears it.
final class CachePolluterTests: XCTestCase {
    func testReadsEmptyFirst() { XCTAssertGreaterThanOrEqual(busyWork(1), 0) }
    func testWarmsCache() { sharedCache["user"] = "stale"; XCTAssertEqual(sharedCache.count, 1) }
    func testZInnocent() { XCTAssertGreaterThanOrEqual(busyWork(2), 0) }
}
