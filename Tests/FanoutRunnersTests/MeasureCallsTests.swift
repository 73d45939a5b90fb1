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
        #expect(MeasureCalls.scan(source).classes == ["SortBenchmarks", "Timing", "Speed"])
    }

    @Test func declaringAMeasureMethodIsNotCallingIt() {
        #expect(!MeasureCalls.callsMeasure("    func measure(_ block: () -> Void) {"))
        #expect(MeasureCalls.callsMeasure("        measure {"))
        #expect(MeasureCalls.callsMeasure("measure(metrics: m) {"))
        #expect(!MeasureCalls.callsMeasure("let measured = measurement(of: x)"))
        #expect(!MeasureCalls.callsMeasure("remeasure()"))
    }

    /// Which tests of a class measure, where the sources say: every call inside a `func test…`. A call in a helper
    /// or an override of `measure` makes the whole class count.
    @Test func theTestMethodsThatMeasureAreReadWhereEveryCallIsInOne() {
        let source = """
        final class ArchiveTests: XCTestCase {
            func testZip() { XCTAssertTrue(zip()) }
            func testPerformanceWrite() {
                let data = make()
                measure {
                    write(data)
                }
            }
            func testRead() { XCTAssertTrue(read()) }
        }
        extension ArchiveTests {
            func testPerformanceCRC() { measure { crc() } }
        }
        class Harness: XCTestCase {
            func testOne() { bench() }
            func bench() { measure { work() } }
            func testTwo() { measure { work() } }
        }
        final class Overridden: XCTestCase {
            override func measure(_ block: () -> Void) { super.measure(block) }
            func testA() { measure { a() } }
        }
        """
        let found = MeasureCalls.scan(source)
        #expect(found.tests == ["ArchiveTests": ["testPerformanceWrite", "testPerformanceCRC"]])
        #expect(found.whole == ["Harness", "Overridden"])
        var merged = found
        merged.merge(MeasureCalls.Found(tests: ["Harness": ["testTwo"], "Other": ["testX"]], whole: ["ArchiveTests"]))
        #expect(merged.whole == ["Harness", "Overridden", "ArchiveTests"] && merged.tests == ["Other": ["testX"]])
    }
}
