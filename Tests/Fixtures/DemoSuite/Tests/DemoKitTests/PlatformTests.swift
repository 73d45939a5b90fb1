import Foundation
import XCTest
import DemoKit

/// Always skips two tests on Linux (XCTSkip): testDarwinOnlyFeature and testNetworkReachability.
final class PlatformTests: XCTestCase {
    func testDarwinOnlyFeature() throws {
        simulateLatency(0.027)
        #if !canImport(Darwin)
        throw XCTSkip("requires Darwin (uses FileProvider)")
        #else
        XCTAssertTrue(true)
        #endif
    }

    func testNetworkReachability() throws {
        simulateLatency(0.009)
        try XCTSkipUnless(DemoEnv.isSet("DEMO_NETWORK"), "network tests disabled (set DEMO_NETWORK=1)")
        XCTAssertTrue(true)
    }

    func testTemporaryDirectoryWritable() throws {
        simulateLatency(0.018)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("demokit-\(getpid()).txt")
        try Data("ok".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        XCTAssertEqual(try String(contentsOf: url, encoding: .utf8), "ok")
    }

    func testTmpExists() {
        simulateLatency(0.045)
        XCTAssertTrue(FileManager.default.fileExists(atPath: "/tmp"))
    }
}
