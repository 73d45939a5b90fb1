import Foundation
import Words
import XCTest

/// Compares with a golden file at the package's root (outside every target folder), found through #filePath.
final class GoldenTests: XCTestCase {
    func testShoutMatchesTheGoldenFile() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let golden = try String(contentsOf: root.appendingPathComponent("Golden/shout.txt"), encoding: .utf8)
        XCTAssertEqual(Words.shout("hello"), golden.trimmingCharacters(in: .newlines))
    }
}
