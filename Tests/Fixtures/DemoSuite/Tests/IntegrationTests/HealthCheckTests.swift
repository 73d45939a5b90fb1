import Foundation
import XCTest
import DemoKit

/// DEMO_STRAGGLER_DIR=<dir>: the first process to run testStoreIsHealthy writes its PID to <dir>/straggler-pid and
/// stalls for 5 minutes (a straggler: a stuck connection, a slow disk); every later run finds the file and is quick.
/// A backup copy of the unit therefore finishes first, and the stalled original must be stopped.
final class HealthCheckTests: XCTestCase {
    func testStoreIsHealthy() throws {
        simulateLatency(0.075)
        if let dir = ProcessInfo.processInfo.environment["DEMO_STRAGGLER_DIR"] {
            let marker = URL(fileURLWithPath: dir).appendingPathComponent("straggler-pid")
            if !FileManager.default.fileExists(atPath: marker.path) {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                _ = FileManager.default.createFile(atPath: marker.path,
                                                   contents: Data("\(ProcessInfo.processInfo.processIdentifier)\n".utf8))
                Thread.sleep(forTimeInterval: 300)
            }
        }
        let store = KeyValueStore()
        store.put("ok", for: "health")
        XCTAssertNoThrow(try store.get("health"))
    }

    func testBreakerHealthyWhenClosed() {
        simulateLatency(0.025)
        XCTAssertEqual(CircuitBreaker(threshold: 1, coolDown: 1).state, .closed)
    }
}
