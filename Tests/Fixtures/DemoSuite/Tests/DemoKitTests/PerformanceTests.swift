import Foundation
import XCTest
import DemoKit

/// testMeasureSorting uses measure {} (10 iterations of ~15 ms).
final class PerformanceTests: XCTestCase {
    func testMeasureSorting() {
        // ~15 ms per iteration (a wait, not CPU). DEMO_PERF_SLOW=1 adds 0.3 s per iteration;
        // DEMO_PERF_NOISY=1 alternates 0.01 s and 0.4 s.
        let slow = DemoEnv.isSet("DEMO_PERF_SLOW")
        let noisy = DemoEnv.isSet("DEMO_PERF_NOISY")
        let input = (0..<2_000).map { ($0 * 7_919) % 2_003 }
        var iteration = 0
        measure {
            iteration += 1
            var pause = 0.015
            if slow { pause += 0.3 }
            if noisy { pause = iteration % 2 == 1 ? 0.01 : 0.4 }
            simulateLatency(pause)
            XCTAssertEqual(input.sorted().first, 0)
        }
    }

    func testSortIsStableForEqualKeys() {
        simulateLatency(0.05)
        let pairs = [(1, "a"), (0, "b"), (1, "c"), (0, "d")]
        let sorted = pairs.sorted { $0.0 < $1.0 }
        XCTAssertEqual(sorted.map(\.1), ["b", "d", "a", "c"])
    }
}
