import Foundation
import Testing
@testable import FanoutCore

/// Pins Xcode's performance rule at its boundaries: regression = more than 10% AND more than 0.1 s slower; too
/// noisy = sample SD more than 10% of the average AND more than 0.1 s; a baseline applies only to the same test,
/// metric, destination and hardware class.
@Suite(.timeLimit(.minutes(2))) struct PerformanceJudgeTests {
    static let test = TestID(module: "DemoKitTests", suite: "PerformanceTests", name: "testMeasureSorting")
    static let wallClock = "org.swift.XCTPerformanceMetric_WallClockTime"
    static let hardware = "Intel Xeon E5-2673 v4 × 2"

    /// A measurement whose values are all `value` (zero variance) unless given.
    func measure(_ value: Double, values: [Double]? = nil, test: TestID = Self.test,
                 identifier: String = Self.wallClock) -> FanoutCore.Measurement {
        let values = values ?? Array(repeating: value, count: 10)
        return Measurement(test: test, metric: "Time", unit: "seconds", identifier: identifier, values: values,
                           average: value, relativeStandardDeviation: 0)
    }

    func baseline(_ average: Double, test: TestID = Self.test, metric: String = Self.wallClock,
                  destination: String = "local", hardware: String = Self.hardware,
                  maxSD: Double? = nil) -> Baseline {
        Baseline(test: test, metric: metric, destination: destination, hardwareClass: hardware, average: average,
                 maxStandardDeviation: maxSD)
    }

    func verdict(_ m: FanoutCore.Measurement, _ baselines: [Baseline], judge: PerformanceJudge = PerformanceJudge(),
                 destination: String = "local", hardware: String? = Self.hardware) -> PerformanceVerdict {
        judge.verdict(for: m, destination: destination, hardwareClass: hardware, baselines: baselines)
    }

    // MARK: - Regression boundaries

    @Test func exactlyTenPercentAndMoreThanAbsoluteIsNotARegression() {
        // 2.0 → 2.2: +0.2 s (more than 0.1 s) but exactly 10%.
        let v = verdict(measure(2.2), [baseline(2.0)])
        #expect(v.kind == .passed, "\(v.message)")
        #expect(abs((v.change ?? 0) - 0.10) < 1e-9)
        #expect(v.baselineAverage == 2.0)
    }

    @Test func exactlyPointOneSecondAndMoreThanRelativeIsNotARegression() {
        // 0.5 → 0.6: +20% but exactly 0.1 s.
        #expect(verdict(measure(0.6), [baseline(0.5)]).kind == .passed)
    }

    @Test func exactlyBothThresholdsIsNotARegression() {
        // 1.0 → 1.1 is exactly 10% and exactly 0.1 s; in binary floating point 1.1 − 1.0 is 0.10000000000000009.
        #expect(verdict(measure(1.1), [baseline(1.0)]).kind == .passed)
    }

    @Test func justOverBothThresholdsIsARegression() {
        let epsilon = 1e-6 // a microsecond: XCTest's print resolution
        let v = verdict(measure(1.1 + epsilon), [baseline(1.0)])
        #expect(v.kind == .regression, "\(v.message)")
        #expect(v.message.contains("more than 10% and 100.0 ms slower"), "\(v.message)")
        #expect(v.message.contains("against the baseline 1.000 s"), "\(v.message)")
    }

    @Test func theRegressionLimitIsTheBaselinePlusTheLargerAllowance() {
        // 2.0 s: 10% (0.2 s) is the larger; 20 ms: 0.1 s is. Whatever the verdict, the limit is the baseline's.
        #expect(verdict(measure(2.1), [baseline(2.0)]).regressionAbove == 2.2)
        #expect(abs((verdict(measure(0.5), [baseline(0.02)]).regressionAbove ?? 0) - 0.12) < 1e-12)
        #expect(verdict(measure(0.5), [baseline(0.02)]).kind == .regression)
        let noisy = verdict(measure(0.5, values: [0.01, 0.99]), [baseline(0.02)])
        #expect(noisy.kind == .tooNoisy)
        #expect(abs((noisy.regressionAbove ?? 0) - 0.12) < 1e-12, "too noisy too")
        #expect(verdict(measure(0.5), []).regressionAbove == nil, "no baseline, no limit")
        let looser = PerformanceJudge(rules: PerformanceRules(relativeRegression: 0.5, absoluteRegression: 0.01))
        #expect(verdict(measure(2.1), [baseline(2.0)], judge: looser).regressionAbove == 3.0)
    }

    @Test func regressionNeedsBothThresholds() {
        // Over 10% but only just at 0.1 s, then over 0.1 s but only at 10%: neither is a regression.
        #expect(verdict(measure(0.6), [baseline(0.5)]).kind == .passed)
        #expect(verdict(measure(2.2), [baseline(2.0)]).kind == .passed)
        // Over both.
        #expect(verdict(measure(0.6 + 1e-6), [baseline(0.5)]).kind == .regression)
        #expect(verdict(measure(2.2 + 1e-6), [baseline(2.0)]).kind == .regression)
        // Over 0.1 s, under 10%: 5.0 → 5.4 (+8%, +0.4 s).
        #expect(verdict(measure(5.4), [baseline(5.0)]).kind == .passed)
    }

    @Test func tinyAveragesNeedTheAbsoluteAmount() {
        // 1 ms → 2 ms is 100% slower but only 1 ms: no regression under the defaults.
        let v = verdict(measure(0.002), [baseline(0.001)])
        #expect(v.kind == .passed)
        #expect(abs((v.change ?? 0) - 1.0) < 1e-9)
        // 1 ms → 150 ms is over both.
        #expect(verdict(measure(0.150), [baseline(0.001)]).kind == .regression)
    }

    @Test func fasterIsAlwaysPassed() {
        let v = verdict(measure(0.5), [baseline(2.0)])
        #expect(v.kind == .passed)
        #expect(v.change == -0.75)
    }

    @Test func aZeroBaselineHasNoRelativeChange() {
        let v = verdict(measure(0.2), [baseline(0)])
        #expect(v.kind == .regression, "0.2 s over a 0 s baseline is more than 0.1 s and more than 10% of 0")
        #expect(v.change == nil)
        #expect(verdict(measure(0.1), [baseline(0)]).kind == .passed)
    }

    @Test func averageIsRecomputedFromTheValues() {
        // XCTest prints the average rounded to 1 ms; the values carry microseconds.
        let values = [0.0014, 0.0016, 0.0015, 0.0015]
        var m = measure(0.002, values: values)
        m.average = 0.002
        #expect(abs(m.meanOfValues - 0.0015) < 1e-12)
        #expect(verdict(m, [baseline(0.0015)]).change.map { abs($0) < 1e-9 } == true)
    }

    // MARK: - Noise

    @Test func sampleStandardDeviationAsCorelibsXCTestComputesIt() {
        // The captured noisy run (Tests/Fixtures/Captured/xctest-measure-noisy.stdout): XCTest printed 98.544%.
        let values = [0.013034, 0.404226, 0.013536, 0.402897, 0.012953, 0.404219, 0.014287, 0.404152, 0.014187,
                      0.404534]
        let m = measure(0.209, values: values)
        let rsd = m.sampleStandardDeviation / m.meanOfValues * 100
        #expect(abs(rsd - 98.544) < 0.001, "sample SD (n − 1) reproduces XCTest's figure: \(rsd)")
        let population = m.standardDeviation / m.meanOfValues * 100
        #expect(abs(population - 98.544) > 1, "the population SD would not: \(population)")
        let v = verdict(m, [])
        #expect(v.kind == .tooNoisy)
        #expect(v.message.contains("more than 10% of the average and more than 100.0 ms"), "\(v.message)")
    }

    @Test func zeroVarianceIsNeverNoisy() {
        let m = measure(5.0)
        #expect(m.sampleStandardDeviation == 0)
        #expect(verdict(m, []).kind == .recorded)
        #expect(verdict(measure(5.0, values: [5.0]), []).kind == .recorded, "one value: SD 0")
    }

    @Test func noiseNeedsBothThresholds() {
        // SD exactly 0.1 s and 50% of the average: not noisy ("more than" 0.1 s).
        let atAbsolute = measure(0.2, values: [0.1, 0.3])
        #expect(abs(atAbsolute.sampleStandardDeviation - 0.1 * 2.0.squareRoot()) < 1e-12)
        let exactly = measure(0.2, values: [0.2 - 0.1 / 2.0.squareRoot(), 0.2 + 0.1 / 2.0.squareRoot()])
        #expect(abs(exactly.sampleStandardDeviation - 0.1) < 1e-12)
        #expect(verdict(exactly, []).kind == .recorded, "SD exactly 0.1 s is within")
        #expect(verdict(atAbsolute, []).kind == .tooNoisy, "SD 0.141 s, 71%: too noisy")
        // SD 0.2 s (more than 0.1 s) but only 5% of a 4 s average: not noisy.
        let relativeOK = measure(4.0, values: [4.2, 3.8, 4.2, 3.8, 4.2, 3.8, 4.2, 3.8, 4.2, 3.8])
        #expect(relativeOK.sampleStandardDeviation > 0.2)
        #expect(relativeOK.sampleStandardDeviation < 0.4)
        #expect(verdict(relativeOK, []).kind == .recorded)
        // SD 50% of a 10 ms average (5 ms, under 0.1 s): not noisy.
        #expect(verdict(measure(0.01, values: [0.005, 0.015, 0.005, 0.015]), []).kind == .recorded)
    }

    @Test func exactlyTenPercentNoiseIsWithin() {
        // Average 2 s, SD exactly 0.2 s (10%, and more than 0.1 s).
        let d = 0.2 / 2.0.squareRoot()
        let m = measure(2.0, values: [2 - d, 2 + d])
        #expect(abs(m.sampleStandardDeviation - 0.2) < 1e-12)
        #expect(verdict(m, []).kind == .recorded)
        let over = measure(2.0, values: [2 - d * 1.001, 2 + d * 1.001])
        #expect(verdict(over, []).kind == .tooNoisy)
    }

    @Test func noiseTakesPrecedenceOverRegression() {
        // Far slower than the baseline, but too noisy to say so.
        let m = measure(0.6, values: [0.2, 1.0, 0.2, 1.0, 0.2, 1.0])
        let v = verdict(m, [baseline(0.1)])
        #expect(v.kind == .tooNoisy)
        #expect(v.baselineAverage == 0.1, "the baseline is still shown")
        #expect(v.message.contains("too noisy to judge"))
    }

    @Test func aBaselinesAllowedDeviationReplacesTheRule() {
        let m = measure(1.0, values: [0.95, 1.05, 0.95, 1.05]) // SD ≈ 0.058 s
        #expect(verdict(m, [baseline(1.0, maxSD: 0.05)]).kind == .tooNoisy, "more than the 0.05 s it allows")
        #expect(verdict(m, [baseline(1.0, maxSD: 0.06)]).kind == .passed)
        #expect(verdict(m, [baseline(1.0)]).kind == .passed, "the rule: 5.8% and 0.058 s are within")
    }

    // MARK: - Matching

    @Test func noBaselineIsRecordedOnly() {
        let v = verdict(measure(0.3), [])
        #expect(v.kind == .recorded)
        #expect(v.baselineAverage == nil && v.change == nil)
        #expect(v.message.contains("no baseline"))
    }

    @Test func anotherDestinationsBaselineNeverApplies() {
        let other = baseline(0.01, destination: "other")
        #expect(verdict(measure(0.5), [other]).kind == .recorded)
        #expect(verdict(measure(0.5), [other], destination: "other").kind == .regression)
    }

    @Test func anotherHardwareClassesBaselineNeverApplies() {
        let slowMachine = baseline(0.01, hardware: "ARM Neoverse-N1 × 4")
        #expect(verdict(measure(0.5), [slowMachine]).kind == .recorded)
        #expect(verdict(measure(0.5), [slowMachine], hardware: "ARM Neoverse-N1 × 4").kind == .regression)
    }

    @Test func anUnknownHardwareClassMatchesOnlyAnUnknownOne() {
        let known = baseline(0.01)
        let unknown = baseline(0.01, hardware: Baseline.unknownHardwareClass)
        #expect(verdict(measure(0.5), [known], hardware: nil).kind == .recorded)
        #expect(verdict(measure(0.5), [unknown], hardware: nil).kind == .regression)
        #expect(verdict(measure(0.5), [unknown]).kind == .recorded, "a known class does not take the unknown's")
    }

    @Test func anotherMetricOrTestNeverMatches() {
        let cpu = baseline(0.01, metric: "org.swift.XCTPerformanceMetric_CPUTime")
        #expect(verdict(measure(0.5), [cpu]).kind == .recorded)
        let otherTest = baseline(0.01, test: TestID(module: "DemoKitTests", suite: "PerformanceTests", name: "testOther"))
        #expect(verdict(measure(0.5), [otherTest]).kind == .recorded)
        let otherModule = baseline(0.01, test: TestID(module: "OtherTests", suite: "PerformanceTests",
                                                      name: "testMeasureSorting"))
        #expect(verdict(measure(0.5), [otherModule]).kind == .recorded, "same class and name, other module")
    }

    @Test func judgeFillsEveryRecordsVerdict() {
        let records = [
            MeasurementRecord(destination: "local", agent: "a", measurement: measure(0.5), hardwareClass: Self.hardware),
            MeasurementRecord(destination: "other", agent: "b", measurement: measure(0.5), hardwareClass: Self.hardware),
        ]
        let judged = PerformanceJudge().judge(records, baselines: [baseline(0.01)])
        #expect(judged.map { $0.verdict?.kind } == [.regression, .recorded])
        #expect(judged.map(\.destination) == ["local", "other"])
    }

    // MARK: - Rules

    @Test func perTestOverridesExactIdFirstThenFirstPattern() {
        let rules = PerformanceRules(overrides: [
            .init(test: "PerformanceTests/", relativeRegression: 0.5),
            .init(test: "DemoKitTests.PerformanceTests/testMeasureSorting", absoluteRegression: 0.5),
            .init(test: "Performance", relativeRegression: 0.9),
        ])
        let exact = rules.thresholds(for: Self.test)
        #expect(exact.absoluteRegression == 0.5 && exact.relativeRegression == 0.10, "the exact id wins")
        let other = TestID(module: "DemoKitTests", suite: "PerformanceTests", name: "testOther")
        #expect(rules.thresholds(for: other).relativeRegression == 0.5, "the first matching pattern")
        let unrelated = TestID(module: "M", suite: "C", name: "t")
        #expect(rules.thresholds(for: unrelated) == PerformanceRules())
    }

    @Test func overridesChangeTheVerdict() {
        // +0.3 s over 1 s: a regression by default, not with 50% allowed for this test.
        let lenient = PerformanceJudge(rules: PerformanceRules(overrides: [
            .init(test: "DemoKitTests.PerformanceTests/testMeasureSorting", relativeRegression: 0.5),
        ]))
        #expect(verdict(measure(1.3), [baseline(1.0)]).kind == .regression)
        #expect(verdict(measure(1.3), [baseline(1.0)], judge: lenient).kind == .passed)
        // A stricter absolute amount for tiny tests: 1 ms → 2 ms is then a regression.
        let strict = PerformanceJudge(rules: PerformanceRules(overrides: [
            .init(test: "^DemoKitTests\\.", absoluteRegression: 0.0005),
        ]))
        #expect(verdict(measure(0.002), [baseline(0.001)], judge: strict).kind == .regression)
        // Noise thresholds per test.
        let noisyOK = PerformanceJudge(rules: PerformanceRules(overrides: [
            .init(test: "testMeasureSorting", relativeNoise: 1.0, absoluteNoise: 1.0),
        ]))
        let m = measure(0.6, values: [0.2, 1.0, 0.2, 1.0])
        #expect(verdict(m, [], judge: noisyOK).kind == .recorded)
    }

    @Test func testPatternsMatchExactIdsAndRegexes() {
        #expect(TestPattern("DemoKitTests.PerformanceTests/testMeasureSorting").matches(Self.test))
        #expect(TestPattern("PerformanceTests/").matches(Self.test))
        #expect(TestPattern("^DemoKitTests\\.Perf").matches(Self.test))
        #expect(!TestPattern("^PerformanceTests").matches(Self.test))
        #expect(!TestPattern("(").isValid)
        #expect(TestPattern("(").matches(TestID(module: "M", suite: "C", name: "(")) == false)
    }

    @Test func verdictsRoundTripThroughJSONWithFailsRunOnlyWhenTrue() throws {
        let v = PerformanceVerdict(kind: .tooNoisy, baselineAverage: 0.1, change: 0.5, message: "m")
        let encoded = try JSONEncoderBox.encode(v)
        #expect(!encoded.contains("failsRun"))
        #expect(encoded.contains("\"too-noisy\""))
        var failing = v
        failing.failsRun = true
        #expect(try JSONEncoderBox.encode(failing).contains("\"failsRun\":true"))
        #expect(try JSONEncoderBox.decode(JSONEncoderBox.encode(failing)) == failing)
        #expect(try JSONEncoderBox.decode(#"{"kind":"passed","message":"x"}"#)
            == PerformanceVerdict(kind: .passed, message: "x"))
    }
}

private enum JSONEncoderBox {
    static func encode(_ v: PerformanceVerdict) throws -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return String(decoding: try e.encode(v), as: UTF8.self)
    }

    static func decode(_ s: String) throws -> PerformanceVerdict {
        try JSONDecoder().decode(PerformanceVerdict.self, from: Data(s.utf8))
    }
}
