import Foundation
import XCTest
import DemoKit

final class SlugTests: XCTestCase {
    func testSlugifyTitle() {
        simulateLatency(0.123)
        XCTAssertEqual(StringUtils.slugify("Hello, World!"), "hello-world")
    }

    func testSlugifyTrimsSeparators() {
        simulateLatency(0.041)
        XCTAssertEqual(StringUtils.slugify("  --Fanout 2.0--  "), "fanout-2-0")
    }

    func testSlugifyDropsNonASCII() {
        simulateLatency(0.082)
        XCTAssertEqual(StringUtils.slugify("Crème brûlée"), "cr-me-br-l-e")
    }

    func testSlugifyOnlyPunctuation() {
        simulateLatency(0.205)
        XCTAssertEqual(StringUtils.slugify("!!!"), "")
    }
}
