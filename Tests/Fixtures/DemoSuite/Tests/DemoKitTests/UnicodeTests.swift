import Foundation
import XCTest
import DemoKit

final class UnicodeTests: XCTestCase {
    func testPalindromeWithAccents() {
        simulateLatency(0.1)
        XCTAssertTrue(StringUtils.isPalindrome("été"))
    }

    func testLevenshteinCountsCharacters() {
        simulateLatency(0.033)
        XCTAssertEqual(StringUtils.levenshtein("café", "cafe"), 1)
    }

    func testEmojiReverse() {
        simulateLatency(0.067)
        XCTAssertEqual(StringUtils.reverseWords("🚀 launch"), "launch 🚀")
    }
}
