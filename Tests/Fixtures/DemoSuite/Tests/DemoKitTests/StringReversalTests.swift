import Foundation
import XCTest
import DemoKit

final class StringReversalTests: XCTestCase {
    func testReverseWords() {
        simulateLatency(0.055)
        XCTAssertEqual(StringUtils.reverseWords("one two three"), "three two one")
    }

    func testReverseSingleWord() {
        simulateLatency(0.018)
        XCTAssertEqual(StringUtils.reverseWords("alone"), "alone")
    }

    func testReverseCollapsesSpaces() {
        simulateLatency(0.036)
        XCTAssertEqual(StringUtils.reverseWords("  a   b "), "b a")
    }

    func testReverseTwiceIsIdentity() {
        simulateLatency(0.091)
        let s = "the quick brown fox"
        XCTAssertEqual(StringUtils.reverseWords(StringUtils.reverseWords(s)), s)
    }
}
