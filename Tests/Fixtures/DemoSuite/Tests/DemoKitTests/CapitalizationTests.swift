import Foundation
import XCTest
import DemoKit

final class CapitalizationTests: XCTestCase {
    func testCapitalizeWords() {
        simulateLatency(0.15)
        XCTAssertEqual(StringUtils.capitalizeWords("hello wORLD"), "Hello World")
    }

    func testCapitalizeKeepsSpacing() {
        simulateLatency(0.05)
        XCTAssertEqual(StringUtils.capitalizeWords("a  b"), "A  B")
    }

    func testVowelCount() {
        simulateLatency(0.1)
        XCTAssertEqual(StringUtils.vowelCount("Fanout Executor"), 7)
    }
}
