import Foundation
import XCTest
import DemoKit

/// A class with the same name exists in IntegrationTests (different methods except testRoundTrip).
final class SharedNameTests: XCTestCase {
    func testRoundTrip() {
        simulateLatency(0.1)
        XCTAssertEqual(StringUtils.reverseWords(StringUtils.reverseWords("x y z")), "x y z")
    }

    func testSharedArithmetic() {
        simulateLatency(0.033)
        XCTAssertEqual(Arithmetic.add(40, 2), 42)
    }

    func testSharedStrings() {
        simulateLatency(0.067)
        XCTAssertEqual(StringUtils.slugify("Shared Name"), "shared-name")
    }
}
