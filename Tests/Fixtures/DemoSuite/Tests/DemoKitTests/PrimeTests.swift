import Foundation
import XCTest
import DemoKit

final class PrimeTests: XCTestCase {
    func testSmallPrimes() {
        simulateLatency(0.082)
        XCTAssertEqual([2, 3, 5, 7, 11, 13].filter(Arithmetic.isPrime).count, 6)
    }

    func testComposites() {
        simulateLatency(0.027)
        for n in [1, 4, 9, 15, 21, 91] {
            XCTAssertFalse(Arithmetic.isPrime(n), "\(n) is not prime")
        }
    }

    func testSieveMatchesTrialDivision() {
        simulateLatency(0.055)
        XCTAssertEqual(Arithmetic.primes(upTo: 500), (0...500).filter(Arithmetic.isPrime))
    }

    func testPrimeCountBelowThousand() {
        simulateLatency(0.136)
        XCTAssertEqual(Arithmetic.primes(upTo: 1000).count, 168)
    }
}
