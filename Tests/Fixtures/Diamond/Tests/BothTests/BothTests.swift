import Left
import Right
import XCTest

final class BothTests: XCTestCase {
    func testLeft() { XCTAssertEqual(Left.quadruple(1), 4) }
    func testRight() { XCTAssertEqual(Right.label(2), "leaf-2-right") }
}
