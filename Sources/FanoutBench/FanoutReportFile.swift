import Foundation

/// The parts of Fanout's `report.json` (docs/report-schema.md) the benchmark reads. Decoded with its own small
/// types: the benchmark reads the file as any tool would, not through Fanout's model.
struct FanoutReportFile: Decodable {
    struct Suite: Decodable, Hashable {
        var module: String
        var name: String
        var qualified: String { "\(module).\(name)" }
    }
    struct ID: Decodable, Hashable {
        var suite: Suite
        var name: String
    }
    struct Attempt: Decodable {
        var outcome: String
        var duration: Double
        var issues: [Issue]?
        /// Why this attempt is not the verdict: a measurement taken beside other work, run again alone.
        var contended: String?
    }
    struct Issue: Decodable {
        var kind: String
        var message: String
    }
    struct TestEntry: Decodable {
        var id: ID
        var outcome: String
        var attempts: [Attempt]
        var duration: Double? { attempts.last?.duration }
    }
    struct Class: Decodable {
        var suite: Suite
        var testCount: Int
        var estimate: Double
        var actual: Double?
    }
    struct Unit: Decodable {
        var agent: String
        var startedAt: Double
        var duration: Double
        var suites: [String]
        var testCount: Int?
        var takenFrom: Int?
    }
    struct Agent: Decodable {
        var name: String
        var deployedBytes: Int?
        var deploySeconds: Double?
    }
    struct PlanEntry: Decodable {
        var slots: Int
        var lowerBound: Double
        var predictedMakespan: Double
    }
    struct Timing: Decodable {
        var wall: Double
        var preparation: Double
        var makespan: Double
        /// Includes CPU time / cores when the run measured CPU (`boundBy` says which term binds).
        var lowerBound: Double
        var boundBy: String?
        var cpuSeconds: Double?
        var cores: Int?
    }

    struct Measured: Decodable {
        struct Values: Decodable {
            var test: ID
        }
        var measurement: Values
        var measuredAlone: Bool?
    }

    var results: [TestEntry]
    /// Every `measure {}` result (absent in reports written before Fanout kept them).
    var measurements: [Measured]?
    var classes: [Class]
    var units: [Unit]
    var agents: [Agent]
    var plan: PlanEntry
    var timing: Timing
    var exitCode: Int
    var warnings: [String]

    static func read(_ path: String) throws -> FanoutReportFile {
        do {
            return try JSONDecoder().decode(FanoutReportFile.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw BenchError("cannot read Fanout's report \(path): \(error)")
        }
    }

    var passed: Int { results.filter { $0.outcome == "passed" }.count }
    /// Tests that idle slots took over from running units (work stealing).
    var stolenTests: Int { units.filter { $0.takenFrom != nil }.reduce(0) { $0 + ($1.testCount ?? 0) } }
    var testTime: Double { results.reduce(0) { $0 + ($1.duration ?? 0) } }

    /// Seconds per test method, `Module.Class/test`.
    var methodDurations: [String: Double] {
        var out: [String: Double] = [:]
        for r in results { if let d = r.duration { out["\(r.id.suite.qualified)/\(r.id.name)"] = d } }
        return out
    }

    /// Seconds per class: the measured class time, else the sum of its tests (a class split over several units).
    var classDurations: [String: Double] {
        var sums: [String: Double] = [:]
        for r in results { sums[r.id.suite.qualified, default: 0] += r.duration ?? 0 }
        var out: [String: Double] = [:]
        for c in classes { out[c.suite.qualified] = c.actual ?? sums[c.suite.qualified] }
        return out
    }

    /// A test's outcome, with the first issue of its last attempt as evidence.
    struct TestVerdict: Sendable {
        var verdict: String
        var evidence: String?
    }

    /// Outcome per test, `Module.Suite/name`.
    var verdicts: [String: TestVerdict] {
        var out: [String: TestVerdict] = [:]
        for r in results {
            let issue = r.attempts.last?.issues?.first.map { "\($0.kind): \(String($0.message.prefix(300)))" }
            out["\(r.id.suite.qualified)/\(r.id.name)"] = TestVerdict(verdict: r.outcome, evidence: issue)
        }
        return out
    }
}
