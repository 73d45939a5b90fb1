import Foundation
import XCTest
import DemoKit

private struct TransientError: Error {}

final class NetworkRetryTests: XCTestCase {
    func testSucceedsFirstTry() throws {
        simulateLatency(1.0)
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 0.1, maxDelay: 1)
        var attempts = 0
        let value = try policy.run { n in
            attempts = n
            return "ok"
        }
        XCTAssertEqual(value, "ok")
        XCTAssertEqual(attempts, 1)
    }

    func testRetriesUntilSuccess() throws {
        simulateLatency(0.333)
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 0.1, maxDelay: 1)
        let value = try policy.run { n in
            if n < 3 { throw TransientError() }
            return n
        }
        XCTAssertEqual(value, 3)
    }

    func testGivesUpAfterMaxAttempts() throws {
        simulateLatency(0.667)
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 0.1, maxDelay: 1)
        var calls = 0
        XCTAssertThrowsError(try policy.run { _ -> Int in
            calls += 1
            throw TransientError()
        })
        XCTAssertEqual(calls, 3)
    }

    func testDelaysAreRecorded() throws {
        simulateLatency(1.667)
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 0.1, maxDelay: 1)
        var delays: [Double] = []
        _ = try? policy.run(sleep: { delays.append($0) }) { _ -> Int in throw TransientError() }
        XCTAssertEqual(delays, [0.1, 0.2])
    }

    func testRealSleepsBetweenAttempts() throws {
        simulateLatency(0.333)
        // Really sleeps 0.05 + 0.1 + 0.1 s between attempts.
        let policy = RetryPolicy(maxAttempts: 4, baseDelay: 0.05, maxDelay: 0.1)
        let start = Date()
        let value = try policy.run(sleep: { Thread.sleep(forTimeInterval: $0) }) { n in
            if n < 4 { throw TransientError() }
            return n
        }
        XCTAssertEqual(value, 4)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.25)
    }
}
