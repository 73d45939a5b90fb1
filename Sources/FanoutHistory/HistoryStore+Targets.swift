import FanoutCore
import Foundation
import GRDB

extension HistoryStore {
    /// How many verdicts are kept per test target and destination: the newest decide, and a target that changes
    /// back and forth between a few states still finds its pass.
    public static let targetRunsKept = 50

    /// Keeps what a run did with its test targets (``SelectivePolicy/verdicts(fingerprints:catalog:results:interrupted:runID:commit:at:)``).
    /// A row already stored for the same run, destination and target is replaced.
    public func recordTargets(_ rows: [TargetRun]) throws(HistoryError) {
        guard !rows.isEmpty else { return }
        _ = try write("record \(rows.count) test target verdicts") { db in
            try Self.insertTargets(rows, replace: true, db)
        }
    }

    /// Every verdict on record for these destinations: destination → target → rows, newest first.
    public func targetRuns(destinations: [String]) throws(HistoryError) -> [String: [String: [TargetRun]]] {
        try read("read test target verdicts") { db in
            var out: [String: [String: [TargetRun]]] = [:]
            for destination in destinations {
                let rows = try Row.fetchAll(db, sql: """
                    SELECT * FROM target_runs WHERE destination = ? ORDER BY recorded_at DESC, id DESC
                    """, arguments: [destination])
                for row in rows {
                    let run = try Self.targetRun(row)
                    out[destination, default: [:]][run.target, default: []].append(run)
                }
            }
            return out
        }
    }

    /// Every verdict in the store, oldest first (what an export carries).
    public func allTargetRuns() throws(HistoryError) -> [TargetRun] {
        try read("export test target verdicts") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM target_runs ORDER BY recorded_at, id").map(Self.targetRun)
        }
    }

    /// Adds the verdicts of an import; a row the store already has (same run, destination and target) stays.
    /// Returns how many were new.
    @discardableResult
    public func importTargetRuns(_ rows: [TargetRun]) throws(HistoryError) -> Int {
        guard !rows.isEmpty else { return 0 }
        return try write("import \(rows.count) test target verdicts") { db in
            try Self.insertTargets(rows, replace: false, db)
        }
    }

    @discardableResult
    static func insertTargets(_ rows: [TargetRun], replace: Bool, _ db: Database) throws -> Int {
        let statement = try db.cachedStatement(sql: """
            INSERT OR \(replace ? "REPLACE" : "IGNORE") INTO target_runs (run_id, destination, target, fingerprint,
                parts, verdict, reason, commit_id, recorded_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        var added = 0
        for row in rows {
            try statement.execute(arguments: [row.runID, row.destination, row.target, row.fingerprint, try json(row.parts),
                                              row.verdict.rawValue, row.reason, row.commit, row.recordedAt])
            added += db.changesCount
        }
        // The newest rows of each target and destination stay.
        try db.execute(sql: """
            DELETE FROM target_runs WHERE id IN (
                SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY destination, target
                                                             ORDER BY recorded_at DESC, id DESC) AS n
                                FROM target_runs) WHERE n > ?)
            """, arguments: [targetRunsKept])
        return added
    }

    private static func targetRun(_ row: Row) throws -> TargetRun {
        let text: String = row["verdict"]
        guard let verdict = TargetVerdict(rawValue: text) else {
            throw DatabaseError(message: "target_runs has an unknown verdict '\(text)'")
        }
        return TargetRun(target: row["target"], destination: row["destination"], fingerprint: row["fingerprint"],
                         parts: decodeJSON([String: String].self, from: row["parts"]) ?? [:], verdict: verdict,
                         reason: row["reason"], runID: row["run_id"], commit: row["commit_id"],
                         recordedAt: row["recorded_at"])
    }
}

extension HistoryStore {
    /// Classes with a test that failed, crashed, timed out or passed only on a retry on `destination` in any of the
    /// newest `runs` runs that targeted it: what `feedback_first` starts early.
    public func recentlyFailedClasses(destination: String, runs: Int) throws(HistoryError) -> Set<SuiteID> {
        try read("read the recently failed classes of \(destination)") { db in
            let rows = try Row.fetchAll(db, sql: """
                WITH newest AS (SELECT id FROM runs ORDER BY started_at DESC, run_id DESC LIMIT ?)
                SELECT DISTINCT t.module, t.suite FROM test_results r JOIN tests t ON t.id = r.test
                WHERE r.run IN (SELECT id FROM newest) AND r.destination = ?
                  AND r.outcome IN ('failed', 'crashed', 'timed-out', 'flaky')
                """, arguments: [runs, destination])
            return Set(rows.map { SuiteID(module: $0["module"], name: $0["suite"]) })
        }
    }
}
