@testable import FanoutCoordinator
import FanoutAgents
import FanoutCore
import Foundation
import Testing

/// Performance tests are measured alone because Fanout knows they measure (issue 37), on a real package built here:
/// Tests/Fixtures/Benchmarks' `SortBenchmarks` measures CPU work with `measure` and is not named "performance"; its
/// `Load*` classes burn CPU in bursts. Alone, every measurement passes XCTest's deviation rule; beside the load it
/// fails it (the serial run is the verdict to match). 8 slots on this machine's cores.
@Suite(.serialized, .timeLimit(.minutes(15))) struct PerformanceAloneTests {
    static let bench = SuiteID(module: "CrunchTests", name: "SortBenchmarks")

    func settings(_ dir: TempDir, package: String, history: String = "history.sqlite") -> RunSettings {
        var s = RunSettings()
        s.packagePath = package
        s.slots = 8
        s.historyPath = dir.file(history)
        return s
    }

    /// The tests of the benchmark that measure (its other two check results and need no quiet).
    static let measuring: Set = ["testCrunchA", "testCrunchB", "testCrunchC"]

    /// The units that ran a measuring test of the benchmark had their agent to themselves: no other unit overlapped
    /// one of them.
    func expectAlone(_ report: RunReport, _ place: String) {
        let ids = Set(benchResults(report).flatMap { $0.attempts.map(\.unit) })
        let benchUnits = report.units.filter { ids.contains($0.id) }
        #expect(!benchUnits.isEmpty, "\(place): the benchmark ran")
        for b in benchUnits {
            #expect(b.suites.allSatisfy { $0.hasPrefix(Self.bench.description) }, "\(place): never batched: \(b.suites)")
            let beside = report.units.filter {
                $0.id != b.id && $0.agent == b.agent && $0.startedAt < b.startedAt + b.duration && b.startedAt < $0.startedAt + $0.duration
            }
            #expect(beside.isEmpty, "\(place): \(beside.map(\.suites)) ran beside the benchmark")
        }
    }

    /// The benchmark's measuring tests.
    func benchResults(_ report: RunReport) -> [TestResult] {
        report.results.filter { $0.id.suite == Self.bench && Self.measuring.contains($0.id.name) }
    }

    @Test func aBenchmarkClassKnownFromItsSourcesIsMeasuredAloneOnTheFirstRunAndFromItsHistoryAfter() async throws {
        let dir = try TempDir()
        let package = try fixtureCopy("Benchmarks", dir)
        var s = settings(dir, package: package)
        for round in 1...2 {
            s.reportDirectory = dir.file("report-\(round)")
            let outcome = try await Coordinator(settings: s).run()
            let report = outcome.report
            let place = round == 1 ? "first run (its sources)" : "warm run (its history)"
            let failures = report.results.filter { $0.outcome != .passed }.map { "\($0.id): \($0.outcome) \($0.attempts.flatMap(\.issues).map(\.message))" }
            #expect(outcome.exitCode == .success, "\(place): \(failures)")
            #expect(benchResults(report).count == 3 && benchResults(report).allSatisfy { $0.outcome == .passed && $0.attempts.count == 1 },
                    "\(place): passed at once, as serially")
            #expect(report.measurements.count == 3, "\(place)")
            #expect(report.measurements.allSatisfy { $0.measuredAlone == true }, "\(place): every measurement taken alone")
            expectAlone(report, place)
            // Its tests that do not measure are work like any other: not in the measuring unit, which ran alone.
            let measuringUnits = Set(benchResults(report).flatMap { $0.attempts.map(\.unit) })
            let others = report.results.filter { $0.id.suite == Self.bench && !Self.measuring.contains($0.id.name) }
            #expect(others.count == 2 && others.allSatisfy { $0.outcome == .passed }, "\(place)")
            #expect(others.allSatisfy { $0.attempts.allSatisfy { !measuringUnits.contains($0.unit) } },
                    "\(place): the class's other tests ran apart from its measuring ones")
        }
    }

    /// Without its sources (a built bundle) and without history, nothing tells Fanout the class measures until it
    /// prints a measurement: a measurement that fails beside the load runs again alone, and the verdict is the
    /// framework's serial one.
    @Test func withoutSourcesOrHistoryAFailureBesideTheLoadRunsAgainAloneAndTheVerdictIsTheSerialOne() async throws {
        let dir = try TempDir()
        let package = try fixtureCopy("Benchmarks", dir)
        let build = await LocalShell("test").capture(
            Command(executable: "/bin/sh", arguments: ["-c", "cd \"$0\" && swift build --build-tests 2>&1", package]), timeout: 900)
        #expect(build.0 == .exited(0), "\(String(decoding: build.1, as: UTF8.self).suffix(2000))")
        let binPath = await LocalShell("test").capture(
            Command(executable: "/bin/sh", arguments: ["-c", "cd \"$0\" && swift build --show-bin-path", package]), timeout: 120)
        let bundle = String(decoding: binPath.1, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) + "/BenchmarksPackageTests.xctest"
        // The serial run: the verdict to match.
        let serial = await LocalShell("test").capture(Command(executable: bundle, arguments: ["CrunchTests.SortBenchmarks"]), timeout: 300)
        #expect(serial.0 == .exited(0), "alone, the benchmark passes: \(String(decoding: serial.1, as: UTF8.self).suffix(1500))")

        var s = settings(dir, package: package)
        s.bundlePath = bundle
        s.reportDirectory = dir.file("report")
        let outcome = try await Coordinator(settings: s).run()
        let report = outcome.report
        let results = benchResults(report)
        #expect(results.count == 3 && results.allSatisfy { $0.outcome == .passed }, "the serial verdict: \(results.map { ($0.id.name, $0.outcome, $0.attempts.map(\.outcome)) })")
        for r in results {
            // A failed attempt is only ever one set aside as contended, and the attempt after it was measured alone.
            for (i, a) in r.attempts.enumerated() where a.outcome == .failed {
                #expect(a.contended != nil && i + 1 < r.attempts.count, "\(r.id): \(r.attempts)")
            }
        }
        #expect(outcome.exitCode == .success)
        // Whatever was kept says how it was taken; a measurement set aside is not kept.
        #expect(report.measurements.count == 3 && report.measurements.allSatisfy { $0.measuredAlone != nil })
    }
}
