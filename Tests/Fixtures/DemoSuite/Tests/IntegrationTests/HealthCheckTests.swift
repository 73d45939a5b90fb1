import Foundation
import XCTest
import DemoKit

final class HealthCheckTests: XCTestCase {
    func testStoreIsHealthy() throws {
        simulateLatency(0.075)
        let store = KeyValueStore()
        store.put("ok", for: "health")
        XCTAssertNoThrow(try store.get("health"))
    }

    func testBreakerHealthyWhenClosed() {
        simulateLatency(0.025)
        XCTAssertEqual(CircuitBreaker(threshold: 1, coolDown: 1).state, .closed)
    }
}
