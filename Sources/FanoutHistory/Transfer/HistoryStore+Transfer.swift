import FanoutCore
import Foundation
import GRDB

/// What an import did, run by run.
public struct ImportSummary: Hashable, Sendable {
    /// Runs written into the store (and kept by retention).
    public var imported: [String] = []
    /// Runs the store already had (by run id): left as they were.
    public var alreadyPresent: [String] = []
    /// Runs written, then pruned at once because they are older than the newest ``HistoryStore/retention`` runs.
    public var droppedByRetention: [String] = []
    /// Selective testing's verdicts on test targets that were new to the store.
    public var targetVerdicts = 0

    public init() {}

    /// `imported 3 runs, 2 already present`.
    public var description: String {
        func runs(_ n: Int) -> String { "\(n) run\(n == 1 ? "" : "s")" }
        var text = "imported \(runs(imported.count)), \(alreadyPresent.count) already present"
        if !droppedByRetention.isEmpty {
            text += ", \(droppedByRetention.count) older than the runs kept (retention) and dropped"
        }
        if targetVerdicts > 0 { text += ", \(targetVerdicts) test target verdict\(targetVerdicts == 1 ? "" : "s") for selective testing" }
        return text
    }
}

extension HistoryStore {
    /// Every run in the store, oldest first, as an import would write it back; only the newest `limit` when given.
    public func exportRuns(limit: Int? = nil) throws(HistoryError) -> [HistoryRun] {
        try read("export the history") { db in
            try Self.runs(db, sql: """
                SELECT * FROM (SELECT * FROM runs ORDER BY started_at DESC, run_id DESC LIMIT ?)
                ORDER BY started_at, run_id
                """, arguments: [limit ?? -1])
        }
    }

    /// One run, whole (every unit, class, attempt and measurement), by its id; nil when the store does not have it.
    public func run(id: String) throws(HistoryError) -> HistoryRun? {
        try read("read run \(id)") { db in
            try Self.runs(db, sql: "SELECT * FROM runs WHERE run_id = ?", arguments: [id]).first
        }
    }

    private static func runs(_ db: Database, sql: String, arguments: StatementArguments) throws -> [HistoryRun] {
        var runs = try Row.fetchAll(db, sql: sql, arguments: arguments).map { row -> (Int64, HistoryRun) in
            let run = HistoryRun(
                runID: row["run_id"], startedAt: row["started_at"], finishedAt: row["finished_at"],
                fanoutVersion: row["fanout_version"], exitCode: Int32(truncatingIfNeeded: row["exit_code"] as Int),
                interrupted: row["interrupted"],
                destinations: decodeJSON([String].self, from: row["destinations"]) ?? [], product: row["product"],
                slots: row["slots"],
                wall: row["wall"], preparation: row["preparation"], makespan: row["makespan"],
                lowerBound: row["lower_bound"], predictedMakespan: row["predicted_makespan"],
                plannedLowerBound: row["planned_lower_bound"], totalEstimate: row["total_estimate"],
                counts: Self.counts(of: row))
            return (row["id"], run)
        }
        for index in runs.indices {
            let key = runs[index].0
            runs[index].1.units = try exportedUnits(run: key, db)
            runs[index].1.classes = try exportedClasses(run: key, db)
            runs[index].1.tests = try exportedTests(run: key, db)
            runs[index].1.measurements = try exportedMeasurements(run: key, db)
        }
        return runs.map(\.1)
    }

    /// Writes `runs` into the store in one transaction: all of them, or (on any error) none.
    ///
    /// A run whose id the store already has is left alone, so importing one export twice, or the exports of four
    /// shard jobs that all carry the history they started from, adds every run once. Retention applies as after a
    /// recorded run: only the newest ``retention`` runs stay.
    public func importRuns(_ runs: [HistoryRun]) throws(HistoryError) -> ImportSummary {
        try write("import \(runs.count) runs") { db in
            var summary = ImportSummary()
            var keys = TestKeys(db)
            let exists = try db.cachedStatement(sql: "SELECT 1 FROM runs WHERE run_id = ?")
            for run in runs {
                if try Bool.fetchOne(exists, arguments: [run.runID]) == true {
                    summary.alreadyPresent.append(run.runID)
                    continue
                }
                try Self.insert(run, keys: &keys, db)
                summary.imported.append(run.runID)
            }
            if retention > 0, !summary.imported.isEmpty {
                try Self.prune(keeping: retention, db)
                let kept = try Set(String.fetchAll(db, sql: "SELECT run_id FROM runs"))
                summary.droppedByRetention = summary.imported.filter { !kept.contains($0) }
                summary.imported = summary.imported.filter { kept.contains($0) }
            }
            return summary
        }
    }

    // MARK: - Reading one run's rows

    private static func exportedUnits(run: Int64, _ db: Database) throws -> [HistoryRun.UnitRun] {
        try Row.fetchAll(db, sql: "SELECT * FROM unit_runs WHERE run = ? ORDER BY unit_id", arguments: [run]).map { row in
            HistoryRun.UnitRun(
                summary: UnitSummary(
                    id: row["unit_id"], destination: row["destination"], framework: try framework(row["framework"]),
                    agent: row["agent"], slot: row["slot"], suites: decodeJSON([String].self, from: row["suites"]) ?? [],
                    testCount: row["test_count"], ending: row["ending"], cpuSeconds: row["cpu_seconds"],
                    peakMemoryBytes: row["peak_memory"], concurrent: row["concurrent"]),
                estimate: row["estimate"], startedAt: row["started_at"], duration: row["duration"], cores: row["cores"])
        }
    }

    private static func exportedClasses(run: Int64, _ db: Database) throws -> [HistoryRun.ClassRun] {
        try Row.fetchAll(db, sql: "SELECT * FROM class_runs WHERE run = ? ORDER BY rowid", arguments: [run]).map { row in
            HistoryRun.ClassRun(
                destination: row["destination"], framework: try framework(row["framework"]), module: row["module"],
                suite: row["suite"], testCount: row["test_count"], estimate: row["estimate"],
                estimateSource: row["estimate_source"], actual: row["actual"], outcome: try outcome(row["outcome"]),
                timingComplete: row["timing_complete"], agent: row["agent"], cpuSeconds: row["cpu_seconds"])
        }
    }

    /// Ordered by name, not by the store's integer test keys: those differ from one store to the next.
    private static func exportedTests(run: Int64, _ db: Database) throws -> [HistoryRun.TestRun] {
        var attempts: [String: [Int64: [HistoryRun.TestAttempt]]] = [:]
        let attemptRows = try Row.fetchCursor(db, sql: """
            SELECT * FROM test_attempts WHERE run = ? ORDER BY destination, test, attempt
            """, arguments: [run])
        while let row = try attemptRows.next() {
            let cpu: Int64? = row["cpu_ms"]
            let attempt = HistoryRun.TestAttempt(outcome: try outcome(row["outcome"]), duration: row["duration"],
                                                 agent: row["agent"], unit: row["unit"], failure: row["failure"],
                                                 cpuSeconds: cpu.map { Double($0) / 1000 },
                                                 position: row["position"], replayOf: row["replay_of"])
            attempts[row["destination"], default: [:]][row["test"], default: []].append(attempt)
        }
        return try Row.fetchAll(db, sql: """
            SELECT r.*, t.module, t.suite, t.name FROM test_results r JOIN tests t ON t.id = r.test
            WHERE r.run = ? ORDER BY r.destination, t.module, t.suite, t.name
            """, arguments: [run]).map { row in
            HistoryRun.TestRun(
                destination: row["destination"], id: TestID(module: row["module"], suite: row["suite"], name: row["name"]),
                framework: try framework(row["framework"]), outcome: try outcome(row["outcome"]),
                attempts: attempts[row["destination"]]?[row["test"]] ?? [],
                orderPolluters: (row["order_dependent"] as String?).map { $0.split(separator: "\n").map(String.init) })
        }
    }

    private static func exportedMeasurements(run: Int64, _ db: Database) throws -> [HistoryRun.MeasurementRun] {
        try Row.fetchAll(db, sql: "SELECT * FROM measurements WHERE run = ? ORDER BY rowid", arguments: [run]).map { row in
            // NaN was stored as NULL: it stays absent rather than becoming an invented number.
            HistoryRun.MeasurementRun(
                destination: row["destination"], agent: row["agent"],
                test: TestID(module: row["module"], suite: row["suite"], name: row["name"]), metric: row["metric"],
                unit: row["unit"], identifier: row["identifier"],
                samples: decodeJSON([Double].self, from: row["samples"]) ?? [], average: row["average"],
                relativeStandardDeviation: row["rsd"], maxRelativeStandardDeviation: row["max_rsd"],
                maxStandardDeviation: row["max_std"], hardwareClass: row["hardware_class"], baseline: row["baseline"])
        }
    }

    private static func framework(_ text: String) throws -> Framework {
        guard let value = Framework(rawValue: text) else { throw UnknownValue(column: "framework", value: text) }
        return value
    }

    private static func outcome(_ text: String) throws -> Outcome {
        guard let value = Outcome(rawValue: text) else { throw UnknownValue(column: "outcome", value: text) }
        return value
    }

    private struct UnknownValue: Error, CustomStringConvertible {
        var column: String
        var value: String
        var description: String { "unknown \(column) '\(value)' in the history" }
    }
}
