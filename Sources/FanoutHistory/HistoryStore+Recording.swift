import FanoutCore
import Foundation
import GRDB

extension HistoryStore {
    /// Writes everything of `report` in one transaction: the run, its units, classes, every attempt of every test,
    /// and its measurements. Recording the same `runID` again replaces the earlier copy, so re-importing a report
    /// never counts its timings twice. Runs beyond ``retention`` are pruned in the same transaction.
    public func record(_ report: RunReport) throws(HistoryError) {
        let run = HistoryRun(report)
        try write("record run \(report.runID)") { db in
            // ON DELETE CASCADE removes the rows of an earlier copy of this run.
            try db.execute(sql: "DELETE FROM runs WHERE run_id = ?", arguments: [run.runID])
            var keys = TestKeys(db)
            try Self.insert(run, keys: &keys, db)
            if retention > 0 {
                try Self.prune(keeping: retention, db)
            }
        }
    }

    /// The rows of one run; the caller has made sure no run with its id is stored.
    static func insert(_ run: HistoryRun, keys: inout TestKeys, _ db: Database) throws {
        let key = try insertRun(run, db)
        try insertUnits(run, run: key, db)
        try insertClasses(run, run: key, db)
        try insertResults(run, run: key, keys: &keys, db)
        try insertMeasurements(run, run: key, db)
    }

    /// Returns the integer key the other tables use for this run.
    private static func insertRun(_ run: HistoryRun, _ db: Database) throws -> Int64 {
        let counts = run.counts
        try db.execute(sql: """
            INSERT INTO runs (run_id, started_at, finished_at, fanout_version, exit_code, interrupted, destinations,
                product, slots, wall, preparation, makespan, lower_bound, predicted_makespan, planned_lower_bound,
                total_estimate, total, passed, flaky, failed, skipped, crashed, timed_out, not_run)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [
                run.runID, run.startedAt, run.finishedAt, run.fanoutVersion, Int(run.exitCode),
                run.interrupted, try json(run.destinations), run.product, run.slots, run.wall,
                run.preparation, run.makespan, run.lowerBound,
                run.predictedMakespan, run.plannedLowerBound, run.totalEstimate,
                counts.total, counts.passed, counts.flaky, counts.failed, counts.skipped, counts.crashed,
                counts.timedOut, counts.notRun,
            ])
        return db.lastInsertedRowID
    }

    private static func insertUnits(_ run: HistoryRun, run key: Int64, _ db: Database) throws {
        // OR REPLACE: a report that lists a unit twice keeps its last entry rather than losing the whole run.
        let statement = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO unit_runs (run, unit_id, destination, framework, agent, slot, suites, test_count,
                estimate, started_at, duration, ending, cpu_seconds, peak_memory, cores, concurrent)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for unit in run.units {
            try statement.execute(arguments: [
                key, unit.id, unit.destination, unit.framework.rawValue, unit.agent, unit.slot,
                try json(unit.suites), unit.testCount, unit.estimate, unit.startedAt, unit.duration, unit.ending,
                unit.cpuSeconds, unit.peakMemoryBytes, unit.cores, unit.concurrent == true ? true : nil,
            ])
        }
    }

    private static func insertClasses(_ run: HistoryRun, run key: Int64, _ db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO class_runs (run, destination, framework, module, suite, test_count, estimate,
                estimate_source, actual, outcome, timing_complete, agent, cpu_seconds)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for entry in run.classes {
            try statement.execute(arguments: [
                key, entry.destination, entry.framework.rawValue, entry.module, entry.suite,
                entry.testCount, entry.estimate, entry.estimateSource, entry.actual, entry.outcome.rawValue,
                entry.timingComplete, entry.agent, entry.cpuSeconds,
            ])
        }
    }

    private static func insertResults(_ run: HistoryRun, run key: Int64, keys: inout TestKeys,
                                      _ db: Database) throws {
        let insertResult = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO test_results (run, destination, test, framework, outcome, attempt_count,
                order_dependent)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        let insertAttempt = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO test_attempts (run, destination, test, attempt, outcome, duration, agent, unit,
                failure, cpu_ms, position, replay_of)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for test in run.tests {
            let testKey = try keys.key(for: test.id)
            try insertResult.execute(arguments: [
                key, test.destination, testKey, test.framework.rawValue, test.outcome.rawValue, test.attempts.count,
                test.orderPolluters?.joined(separator: "\n"),
            ])
            for (index, attempt) in test.attempts.enumerated() {
                try insertAttempt.execute(arguments: [
                    key, test.destination, testKey, index, attempt.outcome.rawValue, attempt.duration, attempt.agent,
                    attempt.unit, attempt.failure, milliseconds(attempt.cpuSeconds), attempt.position,
                    attempt.replayOf,
                ])
            }
        }
    }

    private static func insertMeasurements(_ run: HistoryRun, run key: Int64, _ db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO measurements (run, destination, agent, module, suite, name, metric, unit, identifier,
                samples, average, rsd, max_rsd, max_std, hardware_class, baseline)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for m in run.measurements {
            try statement.execute(arguments: [
                key, m.destination, m.agent, m.module, m.suite, m.name, m.metric, m.unit, m.identifier,
                try json(m.samples), m.average, m.relativeStandardDeviation, m.maxRelativeStandardDeviation,
                m.maxStandardDeviation, m.hardwareClass, m.baseline,
            ])
        }
    }

    /// Deletes all but the newest `count` runs, then the test names no remaining run refers to.
    static func prune(keeping count: Int, _ db: Database) throws {
        try db.execute(sql: """
            DELETE FROM runs WHERE id NOT IN (SELECT id FROM runs ORDER BY started_at DESC, run_id DESC LIMIT ?)
            """, arguments: [count])
        guard db.changesCount > 0 else { return }
        try db.execute(sql: "DELETE FROM tests WHERE id NOT IN (SELECT DISTINCT test FROM test_results)")
    }
}

/// Integer keys of test names, created on first sight and remembered for the rest of one transaction.
struct TestKeys {
    let db: Database
    var known: [TestID: Int64] = [:]

    init(_ db: Database) { self.db = db }

    mutating func key(for test: TestID) throws -> Int64 {
        if let key = known[test] { return key }
        let arguments: StatementArguments = [test.suite.module, test.suite.name, test.name]
        let key: Int64
        if let existing = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT id FROM tests WHERE module = ? AND suite = ? AND name = ?"),
            arguments: arguments) {
            key = existing
        } else {
            try db.cachedStatement(sql: "INSERT INTO tests (module, suite, name) VALUES (?, ?, ?)")
                .execute(arguments: arguments)
            key = db.lastInsertedRowID
        }
        known[test] = key
        return key
    }
}

/// Whole milliseconds of `seconds` for the compact INTEGER columns of per-test rows; nil (NULL) for no value, a
/// negative or non-finite one, or one beyond any test (a century).
func milliseconds(_ seconds: Double?) -> Int64? {
    guard let seconds, seconds.isFinite, seconds >= 0, seconds < 3e9 else { return nil }
    return Int64((seconds * 1000).rounded())
}

/// JSON text for list columns. Non-finite numbers become strings so one odd measurement cannot fail a recording.
func json<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.nonConformingFloatEncodingStrategy = .convertToString(
        positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

func decodeJSON<T: Decodable>(_ type: T.Type, from text: String) -> T? {
    let decoder = JSONDecoder()
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(
        positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    return try? decoder.decode(type, from: Data(text.utf8))
}
