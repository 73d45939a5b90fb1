import Words
import XCTest

final class WordsTests: XCTestCase {
    func testShout() { XCTAssertEqual(Words.shout("a"), "A!") }
    func testShoutEmpty() { XCTAssertEqual(Words.shout(""), "!") }
}
