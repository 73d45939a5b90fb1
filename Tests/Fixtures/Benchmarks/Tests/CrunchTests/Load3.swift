import Crunch
import XCTest

/// CPU load in bursts (0.8 s of work, 0.6 s of sleep), beside which a measurement is noise.
final class Load3: XCTestCase {
    func testBurstsA() { XCTAssertNotEqual(burnInBursts(seconds: 3, burst: 0.8, pause: 0.6), 1) }
    func testBurstsB() { XCTAssertNotEqual(burnInBursts(seconds: 3, burst: 0.8, pause: 0.6), 1) }
}
