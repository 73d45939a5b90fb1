import Foundation
import XCTest
import DemoKit

/// Tests that write to the console the way real suites do: progress text without a final newline (so XCTest's own
/// `Test Case '…' passed` line is glued to it), partial lines on stderr, and blank or carriage-return lines. They
/// all pass; a runner that reads XCTest's output must still see every test's own end.
final class ConsoleNoiseTests: XCTestCase {
    func testProgressWithoutNewline() {
        print("migrating 3/3 ", terminator: "")
        print("done:", terminator: " ")
        XCTAssertEqual(Statistics.mean([1, 2, 3]), 2)
    }

    func testPartialLinesOnBothStreams() {
        FileHandle.standardError.write(Data("warning: cache directory is not writable, continuing".utf8))
        print("\r\n\r", terminator: "")
        print("Test Case ", terminator: "")
        XCTAssertEqual(StringUtils.reverseWords("a b"), "b a")
    }
}
