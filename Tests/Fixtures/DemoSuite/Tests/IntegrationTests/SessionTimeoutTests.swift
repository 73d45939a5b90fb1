import Foundation
import XCTest
import DemoKit

/// DEMO_HANG=1: testIdleSessionExpires sleeps for an hour.
final class SessionTimeoutTests: XCTestCase {
    func testActiveSessionStaysOpen() {
        simulateLatency(0.15)
        let breaker = CircuitBreaker(threshold: 2, coolDown: 30)
        breaker.recordSuccess()
        XCTAssertTrue(breaker.allowsRequest(at: 1_000))
    }

    func testIdleSessionExpires() {
        simulateLatency(0.05)
        if DemoEnv.isSet("DEMO_HANG") {
            // DEMO_HANG=1: hangs for an hour (simulates a deadlock / lost server).
            Thread.sleep(forTimeInterval: 3_600)
        }
        let policy = RetryPolicy(maxAttempts: 2, baseDelay: 30, maxDelay: 60)
        XCTAssertEqual(policy.delay(beforeAttempt: 2), 30)
    }

    func testSessionRenewal() {
        simulateLatency(0.1)
        let breaker = CircuitBreaker(threshold: 1, coolDown: 5)
        breaker.recordFailure(at: 0)
        XCTAssertTrue(breaker.allowsRequest(at: 5))
        breaker.recordSuccess()
        XCTAssertEqual(breaker.state, .closed)
    }
}
