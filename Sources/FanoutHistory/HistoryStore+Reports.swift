import FanoutCore
import GRDB

extension HistoryStore {
    /// The newest `limit` runs, newest first.
    public func recentRuns(limit: Int = 20) throws(HistoryError) -> [RunSummary] {
        try read("list recent runs") { db in
            try Row.fetchAll(db, sql: """
                SELECT * FROM runs ORDER BY started_at DESC, run_id DESC LIMIT ?
                """, arguments: [limit]).map { row in
                RunSummary(
                    runID: row["run_id"], startedAt: row["started_at"], finishedAt: row["finished_at"],
                    destinations: decodeJSON([String].self, from: row["destinations"]) ?? [],
                    counts: Self.counts(of: row), slots: row["slots"], wall: row["wall"], makespan: row["makespan"],
                    lowerBound: row["lower_bound"], predictedMakespan: row["predicted_makespan"],
                    exitCode: Int32(truncatingIfNeeded: row["exit_code"] as Int), interrupted: row["interrupted"])
            }
        }
    }

    /// The outcome counts of a `runs` row.
    static func counts(of row: Row) -> Counts {
        var counts = Counts()
        counts.total = row["total"]
        counts.passed = row["passed"]
        counts.flaky = row["flaky"]
        counts.failed = row["failed"]
        counts.skipped = row["skipped"]
        counts.crashed = row["crashed"]
        counts.timedOut = row["timed_out"]
        counts.notRun = row["not_run"]
        return counts
    }

    /// Per class and destination, the figures of its newest `window` counted runs (the samples estimates use),
    /// slowest first by p80 and cut to `limit` classes.
    ///
    /// - Parameter destination: one destination, or nil for all of them.
    public func classStats(destination: String? = nil, window: Int = 10, limit: Int = 50)
        throws(HistoryError) -> [ClassStat]
    {
        try read("compute class statistics") { db in
            let rows = try Row.fetchCursor(db, sql: """
                SELECT destination, module, suite, actual, test_count FROM (
                    SELECT c.destination, c.module, c.suite, c.actual, c.test_count,
                        ROW_NUMBER() OVER (PARTITION BY c.destination, c.module, c.suite
                                           ORDER BY r.started_at DESC, r.run_id DESC, c.rowid DESC) AS recency
                    FROM class_runs c JOIN runs r ON r.id = c.run
                    WHERE (?1 IS NULL OR c.destination = ?1) AND \(Self.countedClassRun))
                WHERE recency <= ?2
                ORDER BY destination, module, suite, recency
                """, arguments: [destination, window])
            struct Key: Hashable { var destination: String, suite: SuiteID }
            var order: [Key] = []
            var samples: [Key: (durations: [Double], lastTestCount: Int)] = [:]
            while let row = try rows.next() {
                let suite = SuiteID(module: row["module"], name: row["suite"])
                let key = Key(destination: row["destination"], suite: suite)
                if samples[key] == nil {
                    order.append(key)
                    samples[key] = ([], row["test_count"])  // rows come newest first
                }
                samples[key]?.durations.append(row["actual"])
            }
            let stats = order.compactMap { key -> ClassStat? in
                guard let entry = samples[key], let last = entry.durations.first,
                      let p50 = Statistics.percentile(entry.durations, 0.5), let p80 = Statistics.percentile(entry.durations, 0.8),
                      let max = entry.durations.max() else { return nil }
                return ClassStat(suite: key.suite, destination: key.destination, runs: entry.durations.count,
                                 last: last, p50: p50, p80: p80, max: max, testCount: entry.lastTestCount)
            }
            // Slowest p80 first; ties by name, so the listing is stable from one call to the next.
            let slowestFirst = stats.sorted {
                ($0.p80, $1.suite, $1.destination) > ($1.p80, $0.suite, $0.destination)
            }
            return Array(slowestFirst.prefix(limit))
        }
    }

    /// Tests with evidence of a flake in the newest `runs` runs, per destination: a failed attempt on a product they
    /// also passed on (a fail then a pass within a run, or two runs of one product, by its SHA-256, with different
    /// verdicts; a run of unknown product is a product of its own). Highest ``FlakeScore/rate`` first.
    public func flakyTests(runs: Int = 20) throws(HistoryError) -> [FlakyStat] {
        try read("find flaky tests") { db in
            try Row.fetchAll(db, sql: """
                WITH recent AS (
                    SELECT id, started_at, COALESCE(product, 'run:' || id) AS product FROM runs
                    ORDER BY started_at DESC, run_id DESC LIMIT ?),
                -- Only a test that failed in these runs can have a score: the rest is counted for those alone (most
                -- runs have few or none, and counting every attempt of every test made this a quarter of a second
                -- of every run of 3,000 tests).
                failing AS (
                    SELECT DISTINCT a.destination, a.test FROM test_attempts a JOIN recent ON recent.id = a.run
                    WHERE a.outcome IN ('failed', 'crashed', 'timed-out')),
                attempts AS (
                    SELECT a.destination, a.test, a.run, recent.product, recent.started_at,
                        a.outcome IN ('failed', 'crashed', 'timed-out') AS bad, a.outcome = 'passed' AS good
                    FROM failing f JOIN test_attempts a ON a.destination = f.destination AND a.test = f.test
                        JOIN recent ON recent.id = a.run
                        JOIN test_results r ON r.run = a.run AND r.destination = a.destination AND r.test = a.test
                    -- An order-dependent result's attempts say how it depends on order, not that it is flaky.
                    WHERE a.outcome IN ('passed', 'failed', 'crashed', 'timed-out') AND r.order_dependent IS NULL),
                products AS (
                    SELECT destination, test, product, MAX(good) AS passed_on, MAX(bad) AS failed_on
                    FROM attempts GROUP BY destination, test, product),
                counted AS (
                    SELECT a.destination, a.test, COUNT(*) AS counted_attempts, SUM(a.bad) AS failures,
                        COUNT(DISTINCT a.run) AS counted_runs,
                        MIN(CASE WHEN a.bad THEN a.started_at END) AS first_seen,
                        MAX(CASE WHEN a.bad THEN a.started_at END) AS last_seen
                    FROM attempts a JOIN products p
                        ON p.destination = a.destination AND p.test = a.test AND p.product = a.product
                    WHERE p.passed_on
                    GROUP BY a.destination, a.test
                    HAVING failures > 0),
                mixed AS (
                    SELECT destination, test, COUNT(*) AS mixed_products FROM products
                    WHERE passed_on AND failed_on GROUP BY destination, test),
                results AS (
                    SELECT r.destination, r.test, COUNT(*) AS runs, SUM(r.outcome = 'flaky') AS flaky_runs,
                        SUM(r.attempt_count) AS attempts
                    FROM failing f JOIN test_results r ON r.destination = f.destination AND r.test = f.test
                        JOIN recent ON recent.id = r.run
                    GROUP BY r.destination, r.test)
                SELECT counted.*, mixed.mixed_products, results.runs, results.flaky_runs, results.attempts,
                    t.module, t.suite, t.name
                FROM counted
                    JOIN mixed ON mixed.destination = counted.destination AND mixed.test = counted.test
                    JOIN results ON results.destination = counted.destination AND results.test = counted.test
                    JOIN tests t ON t.id = counted.test
                ORDER BY CAST(failures AS REAL) / counted_attempts DESC, failures DESC,
                    t.module, t.suite, t.name, counted.destination
                """, arguments: [runs]).map { row in
                FlakyStat(test: TestID(module: row["module"], suite: row["suite"], name: row["name"]),
                          destination: row["destination"], runs: row["runs"], attempts: row["attempts"],
                          score: FlakeScore(attempts: row["counted_attempts"], failures: row["failures"],
                                            runs: row["counted_runs"], flakyRuns: row["flaky_runs"],
                                            mixedProducts: row["mixed_products"], firstSeen: row["first_seen"],
                                            lastSeen: row["last_seen"]))
            }
        }
    }
}

extension HistoryStore {
    /// The tests that produced measurements in any run on any destination, by class: they measure, and are measured
    /// alone from then on, whatever their class's name.
    public func measuringTests() throws(HistoryError) -> [SuiteID: Set<String>] {
        try read("read the tests that measure") { db in
            let rows = try Row.fetchAll(db, sql: "SELECT DISTINCT module, suite, name FROM measurements")
            var out: [SuiteID: Set<String>] = [:]
            for row in rows { out[SuiteID(module: row["module"], name: row["suite"]), default: []].insert(row["name"]) }
            return out
        }
    }

    /// The newest `limit` measurements of `test` on `destination` (every metric), newest first.
    public func measurements(of test: TestID, destination: String, limit: Int = 10)
        throws(HistoryError) -> [PastMeasurement]
    {
        try read("read the measurements of \(test)") { db in
            try Row.fetchAll(db, sql: """
                SELECT m.*, r.run_id, r.started_at AS run_started_at FROM measurements m JOIN runs r ON r.id = m.run
                WHERE m.destination = ? AND m.module = ? AND m.suite = ? AND m.name = ?
                ORDER BY r.started_at DESC, r.run_id DESC, m.rowid
                LIMIT ?
                """, arguments: [destination, test.suite.module, test.suite.name, test.name, limit])
                .map { Self.pastMeasurement(test, $0) }
        }
    }

    /// The trend of one metric: its result in each of the newest `limit` runs that measured `test` on
    /// `destination` with an agent of `hardwareClass` (nil: a class that could not be read), newest first, one per
    /// run (the run's last, as the verdict and baselines take it). `metric` is the key baselines use (the metric's
    /// identifier, or its name when it has none). Runs recorded before hardware classes were kept are left out,
    /// and so is `excludingRun`: a run is never part of its own past.
    public func measurementTrend(of test: TestID, metric: String, destination: String, hardwareClass: String?,
                                 excludingRun: String, limit: Int = 10) throws(HistoryError) -> [PastMeasurement]
    {
        try read("read the trend of \(test)") { db in
            try Row.fetchAll(db, sql: """
                SELECT * FROM (
                    SELECT m.*, r.run_id, r.started_at AS run_started_at,
                        ROW_NUMBER() OVER (PARTITION BY m.run ORDER BY m.rowid DESC) AS newest_in_run
                    FROM measurements m JOIN runs r ON r.id = m.run
                    WHERE m.destination = ? AND m.module = ? AND m.suite = ? AND m.name = ?
                        AND (CASE WHEN m.identifier = '' THEN m.metric ELSE m.identifier END) = ?
                        AND m.hardware_class = ? AND r.run_id <> ?)
                WHERE newest_in_run = 1
                ORDER BY run_started_at DESC, run_id DESC
                LIMIT ?
                """, arguments: [destination, test.suite.module, test.suite.name, test.name, metric,
                                 hardwareClass ?? Baseline.unknownHardwareClass, excludingRun, limit])
                .map { Self.pastMeasurement(test, $0) }
        }
    }

    private static func pastMeasurement(_ test: TestID, _ row: Row) -> PastMeasurement {
        // NaN was stored as NULL by SQLite; give it back as NaN rather than inventing a number.
        let measurement = Measurement(
            test: test, metric: row["metric"], unit: row["unit"], identifier: row["identifier"],
            values: decodeJSON([Double].self, from: row["samples"]) ?? [],
            average: row["average"] ?? .nan, relativeStandardDeviation: row["rsd"] ?? .nan,
            maxPercentRelativeStandardDeviation: row["max_rsd"], maxStandardDeviation: row["max_std"])
        return PastMeasurement(runID: row["run_id"], startedAt: row["run_started_at"], agent: row["agent"],
                               measurement: measurement, hardwareClass: row["hardware_class"],
                               baseline: row["baseline"])
    }

    /// Rows per table, for diagnostics and tests.
    func tableSizes() throws(HistoryError) -> [String: Int] {
        try read("count rows") { db in
            var sizes: [String: Int] = [:]
            for table in ["runs", "unit_runs", "class_runs", "tests", "test_results", "test_attempts", "measurements"] {
                sizes[table] = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0
            }
            return sizes
        }
    }
}

extension HistoryStore {
    /// The final outcomes of the tests a quarantine entry names, in each of the newest `runs` runs that ran any of
    /// them, newest run first: `name` nil names every test of the class, `destination` nil every destination. What
    /// `fanout history flaky --propose` reads to tell a muted test that has passed cleanly for a while.
    public func recentOutcomes(module: String, suite: String, name: String?, destination: String?, runs: Int)
        throws(HistoryError) -> [[Outcome]]
    {
        try read("read the recent outcomes of \(module).\(suite)") { db in
            let rows = try Row.fetchAll(db, sql: """
                WITH mine AS (
                    SELECT r.run, r.outcome FROM test_results r JOIN tests t ON t.id = r.test
                    WHERE t.module = ? AND t.suite = ? AND (? IS NULL OR t.name = ?) AND (? IS NULL OR r.destination = ?)),
                newest AS (
                    SELECT DISTINCT runs.id, runs.started_at, runs.run_id FROM runs JOIN mine ON mine.run = runs.id
                    ORDER BY runs.started_at DESC, runs.run_id DESC LIMIT ?)
                SELECT newest.id AS run, mine.outcome FROM newest JOIN mine ON mine.run = newest.id
                ORDER BY newest.started_at DESC, newest.run_id DESC
                """, arguments: [module, suite, name, name, destination, destination, runs])
            var order: [Int64] = []
            var byRun: [Int64: [Outcome]] = [:]
            for row in rows {
                let run: Int64 = row["run"]
                if byRun[run] == nil { order.append(run) }
                byRun[run, default: []].append(Outcome(rawValue: row["outcome"]) ?? .notRun)
            }
            return order.map { byRun[$0] ?? [] }
        }
    }

    /// Tests found order-dependent (`--retries` order checks) in the recent runs, newest first: how often, and the
    /// polluters the newest such run named.
    public func orderDependentTests(runs: Int = 20) throws(HistoryError) -> [OrderDependentStat] {
        try read("find order-dependent tests") { db in
            var found: [String: OrderDependentStat] = [:]
            var order: [String] = []
            let rows = try Row.fetchAll(db, sql: """
                WITH recent AS (SELECT id, started_at, run_id FROM runs ORDER BY started_at DESC, run_id DESC LIMIT ?)
                SELECT r.destination, r.order_dependent, recent.started_at, recent.run_id, t.module, t.suite, t.name
                FROM test_results r JOIN recent ON recent.id = r.run JOIN tests t ON t.id = r.test
                WHERE r.order_dependent IS NOT NULL
                ORDER BY recent.started_at DESC, recent.run_id DESC, t.module, t.suite, t.name
                """, arguments: [runs])
            for row in rows {
                let test = TestID(module: row["module"], suite: row["suite"], name: row["name"])
                let destination: String = row["destination"]
                let key = "\(destination)|\(test)"
                if var stat = found[key] {
                    stat.runs += 1
                    found[key] = stat
                    continue
                }
                let text: String = row["order_dependent"]
                found[key] = OrderDependentStat(test: test, destination: destination, runs: 1,
                                                polluters: text.split(separator: "\n").map(String.init),
                                                lastRun: row["run_id"], lastSeen: row["started_at"])
                order.append(key)
            }
            return order.compactMap { found[$0] }
        }
    }
}
