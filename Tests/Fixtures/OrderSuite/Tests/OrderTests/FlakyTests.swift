import Foundation
import XCTest

/// Flaky by chance, not by order: it fails with probability 1/2, drawn from FANOUT_SEED (the seed Fanout gives each
/// test process under `--seed` or `--repeat`) and its name: SplitMix64 of the seed mixed with the FNV-1a hash of the
/// name, as LongSuite's SeededCoin. Without FANOUT_SEED it passes.
final class FlakyTests: XCTestCase {
    func testCoinFlip() {
        guard let text = ProcessInfo.processInfo.environment["FANOUT_SEED"], let seed = UInt64(text) else { return }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "testCoinFlip".utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        var z = (seed ^ hash) &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        XCTAssertGreaterThanOrEqual(Double(z >> 11) / Double(UInt64(1) << 53), 0.5, "seeded flake (p = 0.5)")
    }
}
