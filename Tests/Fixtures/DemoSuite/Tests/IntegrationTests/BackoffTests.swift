import Foundation
import XCTest
import DemoKit

final class BackoffTests: XCTestCase {
    func testFirstAttemptHasNoDelay() {
        simulateLatency(0.3)
        let policy = RetryPolicy(maxAttempts: 5, baseDelay: 0.5, maxDelay: 10)
        XCTAssertEqual(policy.delay(beforeAttempt: 1), 0)
    }

    func testDelayDoubles() {
        simulateLatency(0.1)
        let policy = RetryPolicy(maxAttempts: 5, baseDelay: 0.5, maxDelay: 10)
        XCTAssertEqual((2...5).map { policy.delay(beforeAttempt: $0) }, [0.5, 1, 2, 4])
    }

    func testDelayIsCapped() {
        simulateLatency(0.2)
        let policy = RetryPolicy(maxAttempts: 10, baseDelay: 1, maxDelay: 5)
        XCTAssertEqual(policy.delay(beforeAttempt: 10), 5)
    }

    func testTotalBackoffBudget() {
        simulateLatency(0.5)
        let policy = RetryPolicy(maxAttempts: 6, baseDelay: 0.25, maxDelay: 2)
        XCTAssertEqual((1...6).map(policy.delay(beforeAttempt:)).reduce(0, +), 5.75)
    }
}
