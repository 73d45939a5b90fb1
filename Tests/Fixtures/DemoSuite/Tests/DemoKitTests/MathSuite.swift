import DemoKit
import Foundation
import Testing

@Suite struct MathSuite {
    @Test func additionIsCommutative() {
        #expect(Arithmetic.add(2, 3) == Arithmetic.add(3, 2))
        if DemoEnv.isSet("DEMO_HOSTILE") {
            Issue.record(Comment(rawValue: Hostile.text("HOSTILE-VISIBLE-TESTING")))
        }
    }

    @Test func multiplication() {
        if ProcessInfo.processInfo.environment["DEMO_ST_FAIL"] == "1" {
            // DEMO_ST_FAIL=1: deliberate Swift Testing failure.
            #expect(Arithmetic.multiply(2, 2) == 5, "deliberate failure")
        } else {
            #expect(Arithmetic.multiply(2, 2) == 4)
        }
    }

    @Test(arguments: [2, 3, 5, 7, 11, 13])
    func primesArePrime(n: Int) {
        #expect(Arithmetic.isPrime(n))
    }

    @Test func divisionByZeroThrows() {
        #expect(throws: Arithmetic.Failure.divisionByZero) {
            try Arithmetic.divide(1, by: 0)
        }
    }
}

/// Lives in MathSuite.swift on purpose: Swift Testing ids contain the file name, so an
/// unanchored `--filter MathSuite` also selects this suite.
@Suite struct TrivialSuite {
    @Test func trivial() {
        #expect(Arithmetic.clamp(5, to: 0...3) == 3)
    }
}

/// A free-standing test function (no suite type).
@Test func freeStandingGCD() {
    #expect(Arithmetic.gcd(21, 14) == 7)
}
