import Foundation
import XCTest

/// Each victim passes alone and fails after its polluter(s) ran in the same process.
final class VictimTests: XCTestCase {
    func testInnocent() { XCTAssertGreaterThanOrEqual(busyWork(5), 0) }
    func testNeedsNotBothFlags() { XCTAssertFalse(flagA && flagB, "both flags were left set by earlier tests") }
    func testNoMarkerFile() {
        XCTAssertFalse(FileManager.default.fileExists(atPath: processFolder + "/marker"), "a marker file was left behind")
    }
    func testReadsFreshCache() { XCTAssertNil(sharedCache["user"], "the cache was warmed by an earlier test") }
}
