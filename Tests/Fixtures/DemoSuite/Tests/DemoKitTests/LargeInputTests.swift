import Foundation
import XCTest
import DemoKit

final class LargeInputTests: XCTestCase {
    func testLongSumExpression() throws {
        simulateLatency(0.75)
        let expr = (1...500).map(String.init).joined(separator: " + ")
        XCTAssertEqual(try ExpressionParser.evaluate(expr), 125_250)
    }

    func testDeeplyNestedParentheses() throws {
        simulateLatency(0.25)
        let depth = 200
        let expr = String(repeating: "(", count: depth) + "42" + String(repeating: ")", count: depth)
        XCTAssertEqual(try ExpressionParser.evaluate(expr), 42)
    }

    func testLongTextWrap() {
        simulateLatency(0.5)
        let text = Array(repeating: "lorem", count: 2_000).joined(separator: " ")
        let lines = StringUtils.wrap(text, width: 80)
        XCTAssertEqual(lines.count, 154)
        XCTAssertTrue(lines.allSatisfy { $0.count <= 80 })
    }

    func testLargeLevenshtein() {
        simulateLatency(1.25)
        let a = String(repeating: "ab", count: 150)
        let b = String(repeating: "ba", count: 150)
        XCTAssertEqual(StringUtils.levenshtein(a, b), 2)
    }

    func testManyPrimes() {
        simulateLatency(0.25)
        XCTAssertEqual(Arithmetic.primes(upTo: 100_000).count, 9_592)
    }
}
