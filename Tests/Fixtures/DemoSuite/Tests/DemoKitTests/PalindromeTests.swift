import Foundation
import XCTest
import DemoKit

final class PalindromeTests: XCTestCase {
    func testSimplePalindromes() {
        simulateLatency(0.15)
        XCTAssertTrue(StringUtils.isPalindrome("racecar"))
        XCTAssertTrue(StringUtils.isPalindrome(""))
    }

    func testPunctuationIgnored() {
        simulateLatency(0.05)
        XCTAssertTrue(StringUtils.isPalindrome("A man, a plan, a canal: Panama"))
    }

    func testNonPalindromes() {
        simulateLatency(0.1)
        XCTAssertFalse(StringUtils.isPalindrome("swift"))
    }
}
