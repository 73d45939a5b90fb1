import Foundation
import XCTest
import DemoKit

final class CircuitBreakerTests: XCTestCase {
    func testStartsClosed() {
        simulateLatency(0.109)
        let breaker = CircuitBreaker(threshold: 3, coolDown: 10)
        XCTAssertEqual(breaker.state, .closed)
        XCTAssertTrue(breaker.allowsRequest(at: 0))
    }

    func testOpensAfterThreshold() {
        simulateLatency(0.036)
        let breaker = CircuitBreaker(threshold: 3, coolDown: 10)
        for t in 0..<3 { breaker.recordFailure(at: Double(t)) }
        XCTAssertEqual(breaker.state, .open(since: 2))
        XCTAssertFalse(breaker.allowsRequest(at: 5))
    }

    func testHalfOpenAfterCoolDown() {
        simulateLatency(0.073)
        let breaker = CircuitBreaker(threshold: 3, coolDown: 10)
        for _ in 0..<3 { breaker.recordFailure(at: 0) }
        XCTAssertTrue(breaker.allowsRequest(at: 10))
        XCTAssertEqual(breaker.state, .halfOpen)
    }

    func testHalfOpenFailureReopens() {
        simulateLatency(0.182)
        let breaker = CircuitBreaker(threshold: 3, coolDown: 10)
        for _ in 0..<3 { breaker.recordFailure(at: 0) }
        _ = breaker.allowsRequest(at: 11)
        breaker.recordFailure(at: 11)
        XCTAssertEqual(breaker.state, .open(since: 11))
        breaker.recordSuccess()
        XCTAssertEqual(breaker.state, .closed)
    }
}
