import Foundation
import XCTest
import DemoKit

final class ExpressionParserTests: XCTestCase {
    func testPrecedence() throws {
        simulateLatency(0.096)
        XCTAssertEqual(try ExpressionParser.evaluate("1 + 2 * 3"), 7)
    }

    func testParentheses() throws {
        simulateLatency(0.032)
        XCTAssertEqual(try ExpressionParser.evaluate("(1 + 2) * 3"), 9)
    }

    func testUnaryMinus() throws {
        simulateLatency(0.064)
        XCTAssertEqual(try ExpressionParser.evaluate("-4 + 10"), 6)
    }

    func testLeftAssociativity() throws {
        simulateLatency(0.161)
        XCTAssertEqual(try ExpressionParser.evaluate("20 - 5 - 3"), 12)
        XCTAssertEqual(try ExpressionParser.evaluate("100 / 10 / 2"), 5)
    }

    func testDivisionByZero() throws {
        simulateLatency(0.032)
        XCTAssertThrowsError(try ExpressionParser.evaluate("1 / (2 - 2)")) { error in
            XCTAssertEqual(error as? ExpressionError, .divisionByZero)
        }
    }

    func testUnbalancedParentheses() throws {
        simulateLatency(0.064)
        XCTAssertThrowsError(try ExpressionParser.evaluate("(1 + 2"))
    }
}
