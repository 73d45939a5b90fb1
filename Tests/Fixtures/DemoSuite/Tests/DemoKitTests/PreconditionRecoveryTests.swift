import Foundation
import XCTest
import DemoKit
import TrapCatcher

/// Tests that deliberately trip a precondition and survive it, as suites that use signal-handler-based
/// precondition-testing libraries do. The Swift runtime prints `LRUCache.swift:11: Precondition failed: …` on
/// standard error (debug builds), the trap is caught, the test goes on and PASSES, and the process exits 0.
/// A runner must report these tests passed, exactly as XCTest itself does.
final class PreconditionRecoveryTests: XCTestCase {
    func testZeroCapacityCacheTrapsAndIsCaught() {
        let trapped = trap_catcher_run({ _ in _ = LRUCache<Int, Int>(capacity: 0) }, nil)
        XCTAssertEqual(trapped, 1, "a zero-capacity cache must trip its precondition")
        simulateLatency(0.02)
    }

    func testRuntimeLikeLinesOnStandardErrorAreHarmless() {
        // Real suites log lines that look like the runtime's last words; the test still passes.
        FileHandle.standardError.write(Data("Sources/App/Logger.swift:42: Fatal error: printed by the test, not a crash\n".utf8))
        let cache = LRUCache<Int, Int>(capacity: 1)
        cache.set(1, for: 1)
        XCTAssertEqual(cache.value(for: 1), 1)
    }
}
