import Foundation
import XCTest
import DemoKit

final class LevenshteinTests: XCTestCase {
    func testIdentical() {
        simulateLatency(0.325)
        XCTAssertEqual(StringUtils.levenshtein("swift", "swift"), 0)
    }

    func testEmptyStrings() {
        simulateLatency(0.108)
        XCTAssertEqual(StringUtils.levenshtein("", "abc"), 3)
        XCTAssertEqual(StringUtils.levenshtein("abc", ""), 3)
    }

    func testKittenSitting() {
        simulateLatency(0.217)
        XCTAssertEqual(StringUtils.levenshtein("kitten", "sitting"), 3)
    }

    func testSymmetric() {
        simulateLatency(0.542)
        for (a, b) in [("flaw", "lawn"), ("gumbo", "gambol"), ("book", "back")] {
            XCTAssertEqual(StringUtils.levenshtein(a, b), StringUtils.levenshtein(b, a))
        }
    }

    func testTriangleInequality() {
        simulateLatency(0.108)
        let words = ["fan", "fanout", "out", "about"]
        for a in words {
            for b in words {
                for c in words {
                    XCTAssertLessThanOrEqual(StringUtils.levenshtein(a, c),
                                             StringUtils.levenshtein(a, b) + StringUtils.levenshtein(b, c))
                }
            }
        }
    }
}
