import FanoutCore
import Foundation
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
    ///   - window: samples kept per class (its newest counted runs; for `cpuShare` its newest runs that measured
    ///     CPU) and per test (its newest passed or failed attempts, and its newest timed-out ones for `censored`,
    ///     among the newest `3 × window` runs on this destination: bounded, because per-test rows are tests × runs
    ///     and reading all of them would make every run start slower as history grows). `peakMemory` looks at the
    ///     units of each class's newest `window` runs among those.
    ///   - runsForMean: `secondsPerTest` is averaged over the counted classes of the newest `runsForMean` runs that
    ///     taught this destination something.
    public func timingHistory(destination: String, window: Int = 10, runsForMean: Int = 10)
        throws(HistoryError) -> TimingHistory
    {
        try read("read the timing history of \(destination)") { db in
            let tests = try Self.testTimes(db, destination: destination, window: window)
            return TimingHistory(
                destination: destination,
                classes: try Self.classSamples(db, destination: destination, window: window),
                tests: tests.durations,
                censored: tests.censored,
                secondsPerTest: try Self.secondsPerTest(db, destination: destination, runs: runsForMean),
                cpuShare: try Self.cpuShares(db, destination: destination, window: window),
                peakMemory: try Self.peakMemory(db, destination: destination, window: window))
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

    /// The newest `3 × window` runs that targeted destination `?1`, as `recent (id, started_at, run_id)`.
    private static let recentRuns = """
        recent AS (
            SELECT id, started_at, run_id FROM runs
            WHERE EXISTS (SELECT 1 FROM json_each(runs.destinations) WHERE json_each.value = ?1)
            ORDER BY started_at DESC, run_id DESC LIMIT ?2 * 3)
        """

    /// Durations from attempts that ran to a pass or a failure: a crash stops the clock at an arbitrary point. A
    /// time-out stops it at a known one (the test takes at least that long): the longest of a test's newest time-outs
    /// is its censored value. Time-outs recorded before Fanout kept their elapsed time have 0 and are left out.
    ///
    /// Per-test rows are tests × runs (90,000 for 3,000 tests over 30 runs): they are read run by run, newest first,
    /// along the table's key, and each test keeps its first `window` samples of each kind as they come, with its name
    /// read once. Ranking them in SQL instead (a window function over all of them) sorted every row and took a
    /// quarter of a second at the start of every run of such a suite once its history was full.
    private static func testTimes(_ db: Database, destination: String, window: Int) throws
        -> (durations: [TestID: [Double]], censored: [TestID: Double])
    {
        let runs = try Int64.fetchAll(db, sql: """
            SELECT id FROM runs
            WHERE EXISTS (SELECT 1 FROM json_each(runs.destinations) WHERE json_each.value = ?)
            ORDER BY started_at DESC, run_id DESC LIMIT ?
            """, arguments: [destination, window * 3])
        // In key order: a test's attempts in a run come together, oldest first; the newest counts first.
        let attempts = try db.cachedStatement(sql: """
            SELECT test, duration, outcome = 'timed-out' FROM test_attempts
            WHERE run = ? AND destination = ?
                AND ((outcome IN ('passed', 'failed') AND duration >= 0) OR (outcome = 'timed-out' AND duration > 0))
            ORDER BY test, attempt
            """)
        var durations: [Int64: [Double]] = [:]
        var killed: [Int64: (count: Int, longest: Double)] = [:]
        func keep(_ test: Int64, _ samples: [(duration: Double, killed: Bool)]) {
            for sample in samples.reversed() {
                if sample.killed {
                    var k = killed[test] ?? (0, 0)
                    guard k.count < window else { continue }
                    k = (k.count + 1, max(k.longest, sample.duration))
                    killed[test] = k
                } else if durations[test, default: []].count < window {
                    durations[test, default: []].append(sample.duration)
                }
            }
        }
        for run in runs {
            let rows = try Row.fetchCursor(attempts, arguments: [run, destination])
            var current: Int64?
            var pending: [(duration: Double, killed: Bool)] = []
            while let row = try rows.next() {
                let test: Int64 = row[0]
                if test != current {
                    if let current { keep(current, pending) }
                    current = test
                    pending.removeAll(keepingCapacity: true)
                }
                pending.append((row[1], row[2]))
            }
            if let current { keep(current, pending) }
        }
        guard !durations.isEmpty || !killed.isEmpty else { return ([:], [:]) }
        var names: [Int64: TestID] = [:]
        let rows = try Row.fetchCursor(db, sql: "SELECT id, module, suite, name FROM tests")
        while let row = try rows.next() {
            let id: Int64 = row[0]
            guard durations[id] != nil || killed[id] != nil else { continue }
            names[id] = TestID(module: row[1], suite: row[2], name: row[3])
        }
        var byName: [TestID: [Double]] = [:]
        for (id, samples) in durations { if let name = names[id] { byName[name] = samples } }
        var censored: [TestID: Double] = [:]
        for (id, k) in killed { if let name = names[id] { censored[name] = k.longest } }
        return (byName, censored)
    }

    /// CPU seconds over wall seconds of each class's newest runs that measured both (whatever their outcome: a
    /// killed class burned its CPU too), the median of them. Skipped and not-run classes did no work to measure.
    private static func cpuShares(_ db: Database, destination: String, window: Int) throws -> [SuiteID: Double] {
        let rows = try Row.fetchCursor(db, sql: """
            SELECT module, suite, share FROM (
                SELECT c.module, c.suite, c.cpu_seconds / c.actual AS share,
                    ROW_NUMBER() OVER (PARTITION BY c.module, c.suite
                                       ORDER BY r.started_at DESC, r.run_id DESC, c.rowid DESC) AS recency
                FROM class_runs c JOIN runs r ON r.id = c.run
                WHERE c.destination = ? AND c.cpu_seconds >= 0 AND c.actual > 0
                    AND c.outcome NOT IN ('skipped', 'not-run'))
            WHERE recency <= ?
            """, arguments: [destination, window])
        var shares: [SuiteID: [Double]] = [:]
        while let row = try rows.next() {
            shares[SuiteID(module: row["module"], name: row["suite"]), default: []].append(row["share"])
        }
        return shares.mapValues { Estimator.percentile($0, 0.5) }
    }

    /// The largest peak memory of the units that ran each class in its newest `window` runs among the recent ones.
    private static func peakMemory(_ db: Database, destination: String, window: Int) throws -> [SuiteID: Int64] {
        let rows = try Row.fetchCursor(db, sql: """
            WITH \(recentRuns)
            SELECT u.run, u.suites, u.peak_memory
            FROM unit_runs u JOIN recent ON recent.id = u.run
            WHERE u.destination = ?1 AND u.peak_memory >= 0
            ORDER BY recent.started_at DESC, recent.run_id DESC
            """, arguments: [destination, window])
        var peak: [SuiteID: Int64] = [:]
        var runsSeen: [SuiteID: (last: Int64, count: Int)] = [:]
        // Units of different runs often hold the same classes: each distinct list is decoded once, by one decoder.
        let decoder = JSONDecoder()
        var classes: [String: Set<SuiteID>] = [:]
        while let row = try rows.next() {
            let run: Int64 = row["run"], bytes: Int64 = row["peak_memory"]
            let text: String = row["suites"]
            let suites = classes[text] ?? {
                let decoded = Set(((try? decoder.decode([String].self, from: Data(text.utf8))) ?? []).compactMap(suiteID(unitEntry:)))
                classes[text] = decoded
                return decoded
            }()
            for suite in suites {
                var seen = runsSeen[suite] ?? (last: -1, count: 0)
                if seen.last != run {
                    guard seen.count < window else { continue }
                    seen = (run, seen.count + 1)
                    runsSeen[suite] = seen
                }
                peak[suite] = max(peak[suite] ?? 0, bytes)
            }
        }
        return peak
    }

    /// The class of an entry of a unit's `suites`: `Module.Class`, with ` (3 tests)` when only some of its tests
    /// ran. Module names hold no dot; class names may (`Outer/Inner`, `(top level)` have none, but stay safe).
    static func suiteID(unitEntry entry: String) -> SuiteID? {
        var text = Substring(entry)
        if text.hasSuffix(" tests)"), let open = text.range(of: " (", options: .backwards) {
            let count = text[open.upperBound...].dropLast(" tests)".count)
            if !count.isEmpty, count.allSatisfy(\.isNumber) { text = text[..<open.lowerBound] }
        }
        guard let dot = text.firstIndex(of: "."), dot != text.startIndex, text.index(after: dot) != text.endIndex
        else { return nil }
        return SuiteID(module: String(text[..<dot]), name: String(text[text.index(after: dot)...]))
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
