import FanoutCore
import Foundation

/// A large run's report, built in memory: the shape HTMLWriterTests caps at 5 MB (two destinations, 200 units of 30
/// classes with 400-line logs, every fifth test failing with a 2,000-character message and a 300-frame backtrace,
/// every tenth crashed), plus 50 measurements with a 10-run trend each, so the page has every section to draw.
enum LargeReport {
    static func make(tests: Int, failures: Int) -> RunReport {
        let destinations = ["debug", "release"]
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let log = (1...400).map { "line \($0) " + String(repeating: "y", count: 120) }.joined(separator: "\n")
        let trace = (1...300).map { "#\($0) 0x00007f in frame\($0) " + String(repeating: "z", count: 80) }
            .joined(separator: "\n")
        let units = (0..<200).map { u in
            UnitReport(id: u, destination: destinations[u % 2], framework: .xctest, agent: "agent-\(u % 8)",
                       slot: u % 4, suites: (0..<30).map { "Module.Class\(u)x\($0)" }, testCount: tests / 200,
                       estimate: 8, startedAt: Double(u / 32) * 10, duration: 9, ending: "exit 1",
                       command: "/srv/fanout/bundle/ProductPackageTests.xctest Module.Class\(u)", log: log)
        }
        var results: [TestResult] = []
        var failed = 0
        for i in 0..<(tests / 2) {
            for (k, destination) in destinations.enumerated() {
                let unit = (i % 100) * 2 + k
                let id = TestID(module: "Module\(i % 20)", suite: "Class\(i % 300)", name: "test\(i)")
                let fails = i % 5 == 0 && failed < failures
                let outcome: Outcome = fails ? (i % 10 == 0 ? .crashed : .failed) : .passed
                if fails { failed += 1 }
                let issues = fails ? [Issue(kind: outcome == .crashed ? .crash : .assertion,
                                            message: "failure \(i) " + String(repeating: "x", count: 2_000),
                                            location: SourceLocation(file: "/src/Tests/Class\(i % 300).swift", line: i % 900 + 1))] : []
                results.append(TestResult(id: id, framework: .xctest, destination: destination, outcome: outcome, attempts: [
                    Attempt(outcome: outcome, duration: fails ? 0.3 : 0.01, issues: issues, unit: unit,
                            agent: "agent-\(unit % 8)", diagnostics: outcome == .crashed ? trace : nil),
                ]))
            }
        }
        results.sort { ($0.destination, $0.id) < ($1.destination, $1.id) }
        let measurements = (0..<50).map { i -> MeasurementRecord in
            let average = 0.02 + (i % 7 == 0 ? 0.3 : 0)
            let m = Measurement(test: TestID(module: "PerfTests", suite: "Perf\(i % 5)", name: "testMeasure\(i)"),
                                metric: "Time", unit: "seconds", identifier: "org.swift.XCTPerformanceMetric_WallClockTime",
                                values: Array(repeating: average, count: 10), average: average, relativeStandardDeviation: 1)
            let regressed = average > 0.12
            let verdict = PerformanceVerdict(kind: regressed ? .regression : .passed, baselineAverage: 0.02,
                                             change: (average - 0.02) / 0.02, message: "average against 20 ms",
                                             regressionAbove: 0.12)
            let trend = PerformanceTrend(runs: (0..<10).map { r in
                PerformanceTrend.Point(runID: "run-\(r)", startedAt: start.addingTimeInterval(Double(r - 10) * 86_400),
                                       average: 0.019 + Double(r % 3) * 0.001, baseline: 0.02)
            })
            return MeasurementRecord(destination: destinations[i % 2], agent: "agent-0", measurement: m,
                                     hardwareClass: "Intel Xeon × 8", verdict: verdict, trend: trend)
        }
        let counts = Counts(results.map(\.outcome))
        return RunReport(
            runID: "bench-report-page", fanoutVersion: "bench", startedAt: start, finishedAt: start.addingTimeInterval(75),
            interrupted: false, product: ProductInfo(package: nil, bundle: "/src/.build/debug/ProductPackageTests.xctest"),
            destinations: destinations,
            agents: (0..<8).map { AgentInfo(name: "agent-\($0)", transport: "ssh", slots: 4, host: "10.0.0.\($0 + 1)") },
            plan: PlanReport(slots: 32, lowerBound: 60, predictedMakespan: 62, totalEstimate: 1_900),
            units: units, classes: [], results: results, measurements: measurements, warnings: [],
            timing: Timing(wall: 75, preparation: 5, makespan: 69, lowerBound: 60),
            exitCode: counts.failures > 0 ? 1 : 0)
    }
}
