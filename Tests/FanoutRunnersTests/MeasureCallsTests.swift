@testable import FanoutRunners
import Testing

/// Which classes measure, read from their sources: the names say nothing (Benchmark, Speed, Timing, or none).
@Suite struct MeasureCallsTests {
    @Test func classesThatCallMeasureAreFoundWhateverTheirName() {
        let source = """
        import XCTest
        @testable import Sorting

        final class SortBenchmarks: XCTestCase {
            func testQuicksort() {
                measure { _ = quicksort(input) }
            }
            func testMerge() {
                self.measure(metrics: [XCTClockMetric()]) { _ = mergesort(input) }
            }
        }

        class ParserTests: XCTestCase {
            func testParses() { XCTAssertEqual(parse("1"), 1) }
            func measurement() -> Double { 0 }   // not a call of measure
        }

        @MainActor final class Timing : XCTestCase {
            func testOld() {
                measureMetrics([.wallClockTime], automaticallyStartMeasuring: false) { startMeasuring() }
            }
        }

        extension Sorting.Speed {
            func testInExtension() { measure(options: .default) { run() } }
        }

        struct Helper { func measure(_ f: () -> Void) { f() } }
        """
        #expect(MeasureCalls.measuringClasses(in: source) == ["SortBenchmarks", "Timing", "Speed"])
    }

    @Test func declaringAMeasureMethodIsNotCallingIt() {
        #expect(!MeasureCalls.callsMeasure("    func measure(_ block: () -> Void) {"))
        #expect(MeasureCalls.callsMeasure("        measure {"))
        #expect(MeasureCalls.callsMeasure("measure(metrics: m) {"))
        #expect(!MeasureCalls.callsMeasure("let measured = measurement(of: x)"))
        #expect(!MeasureCalls.callsMeasure("remeasure()"))
    }
}
