import FanoutCore
import GRDB

extension HistoryStore {
    /// SQL condition (on `class_runs c`) for a class run whose time may teach the estimator: the whole class ran in
    /// one process and ended normally. Skipped, crashed, timed-out and not-run classes would drag estimates towards
    /// zero or towards a time limit, so they never count. A flaky class counts: its first attempt ran the whole class,
    /// and retries are not part of the class time when `timing_complete` is set.
    static let countedClassRun = """
        c.timing_complete AND c.actual IS NOT NULL AND c.actual >= 0 AND c.outcome IN ('passed', 'failed', 'flaky')
        """

    /// What the estimator needs to know about `destination`'s past.
    ///
    /// - Parameters:
    ///   - window: samples kept per class (its newest counted runs) and per test (its newest passed or failed
    ///     attempts among the newest `3 × window` runs on this destination: bounded, because per-test rows are
    ///     tests × runs and reading all of them would make every run start slower as history grows).
    ///   - runsForMean: `secondsPerTest` is averaged over the counted classes of the newest `runsForMean` runs that
    ///     taught this destination something.
    public func timingHistory(destination: String, window: Int = 10, runsForMean: Int = 10)
        throws(HistoryError) -> TimingHistory
    {
        try read("read the timing history of \(destination)") { db in
            TimingHistory(
                destination: destination,
                classes: try Self.classSamples(db, destination: destination, window: window),
                tests: try Self.testDurations(db, destination: destination, window: window),
                secondsPerTest: try Self.secondsPerTest(db, destination: destination, runs: runsForMean))
        }
    }

    private static func classSamples(_ db: Database, destination: String, window: Int) throws
        -> [SuiteID: [ClassSample]]
    {
        let rows = try Row.fetchCursor(db, sql: """
            SELECT module, suite, actual, test_count FROM (
                SELECT c.module, c.suite, c.actual, c.test_count,
                    ROW_NUMBER() OVER (PARTITION BY c.module, c.suite
                                       ORDER BY r.started_at DESC, r.run_id DESC, c.rowid DESC) AS recency
                FROM class_runs c JOIN runs r ON r.id = c.run
                WHERE c.destination = ? AND \(countedClassRun))
            WHERE recency <= ?
            ORDER BY module, suite, recency
            """, arguments: [destination, window])
        var samples: [SuiteID: [ClassSample]] = [:]
        while let row = try rows.next() {
            let suite = SuiteID(module: row["module"], name: row["suite"])
            samples[suite, default: []].append(ClassSample(duration: row["actual"], testCount: row["test_count"]))
        }
        return samples
    }

    /// Only attempts that ran to a pass or a failure: a crash or time-out stops the clock at an arbitrary point.
    private static func testDurations(_ db: Database, destination: String, window: Int) throws -> [TestID: [Double]] {
        let rows = try Row.fetchCursor(db, sql: """
            WITH recent AS (
                SELECT id, started_at, run_id FROM runs
                WHERE EXISTS (SELECT 1 FROM json_each(runs.destinations) WHERE json_each.value = ?1)
                ORDER BY started_at DESC, run_id DESC LIMIT ?2 * 3),
            samples AS (
                SELECT a.test, a.duration,
                    ROW_NUMBER() OVER (PARTITION BY a.test
                                       ORDER BY recent.started_at DESC, recent.run_id DESC, a.attempt DESC) AS recency
                FROM test_attempts a JOIN recent ON recent.id = a.run
                WHERE a.destination = ?1 AND a.outcome IN ('passed', 'failed') AND a.duration >= 0)
            SELECT t.module, t.suite, t.name, samples.duration
            FROM samples JOIN tests t ON t.id = samples.test
            WHERE samples.recency <= ?2
            ORDER BY samples.test, samples.recency
            """, arguments: [destination, window])
        var durations: [TestID: [Double]] = [:]
        while let row = try rows.next() {
            let test = TestID(module: row["module"], suite: row["suite"], name: row["name"])
            durations[test, default: []].append(row["duration"])
        }
        return durations
    }

    /// Runs are chosen among those with counted classes here, so a streak of crashed runs cannot hide the
    /// destination's older, usable history.
    private static func secondsPerTest(_ db: Database, destination: String, runs: Int) throws -> Double? {
        let row = try Row.fetchOne(db, sql: """
            WITH recent AS (
                SELECT r.id FROM runs r
                WHERE r.id IN (SELECT c.run FROM class_runs c WHERE c.destination = ? AND \(countedClassRun))
                ORDER BY r.started_at DESC, r.run_id DESC LIMIT ?)
            SELECT SUM(c.actual) AS seconds, SUM(c.test_count) AS tests
            FROM class_runs c JOIN recent ON recent.id = c.run
            WHERE c.destination = ? AND \(countedClassRun)
            """, arguments: [destination, runs, destination])
        guard let row, let seconds: Double = row["seconds"], let tests: Int = row["tests"], tests > 0 else {
            return nil
        }
        return seconds / Double(tests)
    }
}
