import Foundation
import Leaf
import XCTest

final class LeafTests: XCTestCase {
    func testDouble() { XCTAssertEqual(Leaf.double(21), 42) }
    func testGreeting() { XCTAssertEqual(Leaf.greeting(), "hello") }

    /// Reads a fixture at run time (not compiled in): only a declared input makes its change re-run this target.
    func testFixture() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("Fixtures/expected.txt"), encoding: .utf8)
        XCTAssertEqual(text.trimmingCharacters(in: .whitespacesAndNewlines), "42")
    }
}
