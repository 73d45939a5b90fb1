import Foundation
import XCTest

/// Tests that fail with a known probability, so that flake scores, quarantine proposals and `--until-failure` can be
/// checked against the truth. Whether a test fails is a pure function of FANOUT_SEED (the seed Fanout gives each
/// test process under `--repeat` or `--seed`) and the test's name: a run is reproducible from its seed, and two
/// tests in one process draw independently. Without FANOUT_SEED every test passes.
enum SeededCoin {
    /// True with probability `p`, from SplitMix64 of the seed mixed with the FNV-1a hash of `name`.
    static func fails(_ name: String, probability p: Double) -> Bool {
        guard let text = ProcessInfo.processInfo.environment["FANOUT_SEED"], let seed = UInt64(text) else { return false }
        return draw(seed: seed, name: name) < p
    }

    /// A number in [0, 1).
    static func draw(seed: UInt64, name: String) -> Double {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        var z = (seed ^ hash) &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(UInt64(1) << 53)
    }
}

/// Each flaky test is a class of its own, so a run can select exactly one (`--filter FlakeP10Tests`).
final class FlakeP02Tests: XCTestCase {
    func testFailsTwoPercent() {
        XCTAssertFalse(SeededCoin.fails("testFailsTwoPercent", probability: 0.02), "seeded flake (p = 0.02)")
    }
}

final class FlakeP10Tests: XCTestCase {
    func testFailsTenPercent() {
        XCTAssertFalse(SeededCoin.fails("testFailsTenPercent", probability: 0.10), "seeded flake (p = 0.10)")
    }
}

final class FlakeP30Tests: XCTestCase {
    func testFailsThirtyPercent() {
        XCTAssertFalse(SeededCoin.fails("testFailsThirtyPercent", probability: 0.30), "seeded flake (p = 0.30)")
    }
}

final class FlakeP50Tests: XCTestCase {
    func testFailsHalfTheTime() {
        XCTAssertFalse(SeededCoin.fails("testFailsHalfTheTime", probability: 0.50), "seeded flake (p = 0.50)")
    }
}

/// Tests that never fail, whatever the seed: no proposal may ever name them.
final class StableTests: XCTestCase {
    func testAddition() { XCTAssertEqual(2 + 2, 4) }
    func testOrdering() { XCTAssertEqual([3, 1, 2].sorted(), [1, 2, 3]) }
    func testStrings() { XCTAssertEqual("fan" + "out", "fanout") }
    func testSeedIsANumberWhenSet() {
        if let text = ProcessInfo.processInfo.environment["FANOUT_SEED"] { XCTAssertNotNil(UInt64(text)) }
    }
}
