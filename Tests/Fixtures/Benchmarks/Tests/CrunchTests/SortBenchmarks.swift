import Crunch
import XCTest

/// Measures CPU work (XCTest's default: 10 iterations of wall-clock time). Not named "performance": Fanout must know
/// it measures from its sources, its history or its output.
final class SortBenchmarks: XCTestCase {
    /// Rounds of `crunch` that take about 0.3 s in a debug build here.
    static let rounds = Int(ProcessInfo.processInfo.environment["CRUNCH_ROUNDS"] ?? "") ?? 80_000_000

    func testCrunchA() { measure { _ = crunch(Self.rounds) } }
    func testCrunchB() { measure { _ = crunch(Self.rounds) } }
    func testCrunchC() { measure { _ = crunch(Self.rounds) } }

    /// Tests of the class that do not measure: they need not run alone.
    func testCrunchIsDeterministic() { XCTAssertEqual(crunch(1_000), crunch(1_000)) }
    func testCrunchOfNothing() { XCTAssertNotNil(crunch(0) as Any?) }
}
