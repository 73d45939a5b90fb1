import Foundation
import XCTest
import DemoKit

final class WordWrapTests: XCTestCase {
    func testWrapShortText() {
        simulateLatency(0.175)
        XCTAssertEqual(StringUtils.wrap("short text", width: 20), ["short text"])
    }

    func testWrapBreaksAtWidth() {
        simulateLatency(0.058)
        XCTAssertEqual(StringUtils.wrap("the quick brown fox jumps", width: 10), ["the quick", "brown fox", "jumps"])
    }

    func testWrapLongWordOwnLine() {
        simulateLatency(0.117)
        XCTAssertEqual(StringUtils.wrap("a supercalifragilistic b", width: 5), ["a", "supercalifragilistic", "b"])
    }
}
