import Foundation
import XCTest
import DemoKit

/// DEMO_FLAKY_DIR=<dir>: testFetchWithFlakyBackend fails once per marker file.
final class RetryableFetchTests: XCTestCase {
    func testFetchWithFlakyBackend() throws {
        simulateLatency(0.1)
        // DEMO_FLAKY_DIR=<dir>: fails when <dir>/flaky-marker is missing (and creates it),
        // so the first run fails and a retry passes.
        if let dir = ProcessInfo.processInfo.environment["DEMO_FLAKY_DIR"] {
            let marker = URL(fileURLWithPath: dir).appendingPathComponent("flaky-marker")
            if !FileManager.default.fileExists(atPath: marker.path) {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                _ = FileManager.default.createFile(atPath: marker.path, contents: Data("seen\n".utf8))
                XCTFail("backend not ready (flaky): created \(marker.path), will pass next time")
            }
        }
        let policy = RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 0.01)
        XCTAssertEqual(try policy.run { $0 }, 1)
    }

    func testFetchGivesUp() throws {
        simulateLatency(0.033)
        struct Unavailable: Error {}
        let policy = RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 0.01)
        XCTAssertThrowsError(try policy.run { _ -> Int in throw Unavailable() })
    }

    func testFetchUsesBackoff() {
        simulateLatency(0.067)
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 1)
        XCTAssertEqual(policy.delay(beforeAttempt: 3), 0.02)
    }
}
