import Foundation
import XCTest
import DemoKit

final class TokenizerTests: XCTestCase {
    func testNumbersAndOperators() throws {
        simulateLatency(0.068)
        XCTAssertEqual(try Tokenizer.tokenize("12+3"), [.number(12), .op("+"), .number(3)])
    }

    func testWhitespaceIgnored() throws {
        simulateLatency(0.023)
        XCTAssertEqual(try Tokenizer.tokenize(" 1 *  2 "), [.number(1), .op("*"), .number(2)])
    }

    func testParentheses() throws {
        simulateLatency(0.045)
        XCTAssertEqual(try Tokenizer.tokenize("(7)"), [.lparen, .number(7), .rparen])
    }

    func testRejectsLetters() throws {
        simulateLatency(0.114)
        XCTAssertThrowsError(try Tokenizer.tokenize("1 + x")) { error in
            XCTAssertEqual(error as? ExpressionError, .unexpectedCharacter("x"))
        }
    }
}
