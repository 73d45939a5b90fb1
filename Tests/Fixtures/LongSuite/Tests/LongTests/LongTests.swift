import Foundation
import XCTest

/// Seconds from an environment variable (0 when unset).
private func seconds(_ name: String) -> Double {
    Double(ProcessInfo.processInfo.environment[name] ?? "") ?? 0
}

private func isSet(_ name: String) -> Bool { ProcessInfo.processInfo.environment[name] == "1" }

/// Work the optimizer cannot remove: a xorshift walk.
private func churn(_ rounds: Int, _ seed: UInt64) -> UInt64 {
    var x = seed | 1
    for _ in 0..<rounds {
        x ^= x << 13
        x ^= x >> 7
        x ^= x << 17
    }
    return x
}

final class ComputeTests: XCTestCase {
    /// LONG_COMPUTE=s: computes for s seconds of wall time, printing nothing.
    func testComputesSilently() {
        let end = Date().addingTimeInterval(seconds("LONG_COMPUTE"))
        var x: UInt64 = 42
        repeat { x = churn(200_000, x) } while Date() < end
        XCTAssertNotEqual(x, 0)
    }
}

final class BlockTests: XCTestCase {
    /// LONG_BLOCK=s: blocks for s seconds with neither output nor CPU (an integration test waiting on a server).
    func testBlocksSilently() {
        Thread.sleep(forTimeInterval: seconds("LONG_BLOCK"))
        XCTAssertTrue(true)
    }
}

final class HangTests: XCTestCase {
    /// LONG_HANG=1: a deadlock.
    func testBlocksForever() {
        if isSet("LONG_HANG") { DispatchSemaphore(value: 0).wait() }
        XCTAssertTrue(true)
    }
}

final class SpinTests: XCTestCase {
    /// LONG_SPIN=1: a busy infinite loop.
    func testSpinsForever() {
        var x: UInt64 = 7
        while isSet("LONG_SPIN") { x = churn(1_000_000, x) }
        XCTAssertNotEqual(x, 0)
    }
}

final class UsualTests: XCTestCase {
    /// LONG_USUAL=s: takes s seconds; LONG_USUAL_HANG=1: then hangs.
    func testUsuallyQuick() {
        Thread.sleep(forTimeInterval: seconds("LONG_USUAL"))
        if isSet("LONG_USUAL_HANG") { DispatchSemaphore(value: 0).wait() }
        XCTAssertTrue(true)
    }

    func testAfterwards() {
        XCTAssertTrue(true)
    }
}
