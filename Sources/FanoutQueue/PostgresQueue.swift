import Foundation

/// The shared queue of CI builds on a PostgreSQL server (libpq). Leases are on the server's clock (`now()`), so jobs
/// on machines whose clocks disagree still agree on when a lease lapsed; reservations take the next item with
/// `FOR UPDATE SKIP LOCKED`, so jobs never wait on each other's reservations.
///
/// One connection, used by one statement at a time. A connection that breaks is opened again with back-off (0.5 s
/// doubling to 8 s, about 30 s in all) before an operation gives up; `notice` says so each time.
public actor PostgresQueue: WorkQueue {
    public let location: QueueLocation
    private var connection: PostgresConnection?
    private let notice: @Sendable (String) -> Void
    /// Seconds to wait for a connection before an attempt counts as failed.
    private let connectTimeout: Int
    /// Back-off between attempts to open the connection again.
    private let backoff: [Double]
    /// The tables exist (made by the first `open`; a connection opened again does not lock them again).
    private var schemaReady = false
    /// An operation spent the whole back-off on a server that did not answer: the next ones try once each (a job
    /// that gave up on the queue gives its work back and leaves without waiting half a minute at every step).
    private var exhausted = false

    public init(_ location: QueueLocation, connectTimeout: Int = 10, backoff: [Double] = [0.5, 1, 2, 4, 8, 8, 8],
                notice: @escaping @Sendable (String) -> Void = { _ in }) {
        self.location = location
        self.connectTimeout = connectTimeout
        self.backoff = backoff
        self.notice = notice
    }

    /// Opens the connection and makes the tables (once per server; concurrent jobs take turns).
    public func open() async throws(QueueError) {
        let c = try await PostgresConnection.connect(location, timeout: connectTimeout)
        if !schemaReady {
            try await c.session { s throws(QueueError) in
                try s.transaction { () throws(QueueError) in
                    _ = try s.query("SELECT pg_advisory_xact_lock(7436110)") // only one job creates the tables
                    for statement in PostgresSchema.statements { _ = try s.query(statement) }
                }
            }
            schemaReady = true
        }
        connection = c
    }

    /// Whether the connection is encrypted (TLS).
    public var usesTLS: Bool {
        get async { await connection?.usesTLS ?? false }
    }

    public func close() async {
        await connection?.close()
        connection = nil
    }

    /// Runs `body` on the connection, opening it again (with back-off) when it broke or was never opened.
    private func run<T: Sendable>(_ what: String, _ body: @escaping @Sendable (PostgresConnection.Session) throws(QueueError) -> T)
        async throws(QueueError) -> T {
        var attempt = 0
        while true {
            do throws(QueueError) {
                if connection == nil { try await open() }
                guard let c = connection else { throw QueueError.connectionLost(location.url, message: "not open") }
                let value = try await c.session(body)
                exhausted = false
                return value
            } catch {
                switch error {
                case .connectionLost, .unreachable:
                    connection = nil
                    // A run that is stopping does not wait for a server that does not answer.
                    guard attempt < backoff.count, !Task.isCancelled, !exhausted else {
                        exhausted = true
                        throw error
                    }
                    notice("queue: \(what): \(error); trying again in \(formatted(backoff[attempt])) s")
                    try? await Task.sleep(for: .seconds(backoff[attempt]))
                    attempt += 1
                default:
                    throw error
                }
            }
        }
    }

    private func formatted(_ seconds: Double) -> String { String(format: "%g", seconds) }

    // MARK: - WorkQueue

    public func join(_ build: QueueBuild, as worker: QueueWorker, items: [QueueItem], within seconds: Double, alive: Double)
        async throws(QueueError) -> QueueRole {
        let seed = try Self.json(items.map { ["payload": $0.payload, "estimate": $0.estimate] as [String: Any] })
        let location = location.url
        return try await run("joining build \(build.id)") { s throws(QueueError) in
            try s.transaction { () throws(QueueError) -> QueueRole in
                // The wait for another job's seed is bounded by `seconds`; the seed itself (up to 100,000 rows) by
                // the same and a margin, not by the session's 30 s statement limit.
                _ = try s.query("SET LOCAL lock_timeout = '\(Int(max(1, seconds) * 1000))ms'")
                _ = try s.query("SET LOCAL statement_timeout = '\(Int((max(1, seconds) + 30) * 1000))ms'")
                _ = try s.query("DELETE FROM fanout_queue_builds WHERE expires_at < now()")
                let claimed: PostgresConnection.Rows
                do throws(QueueError) {
                    claimed = try s.query("""
                        INSERT INTO fanout_queue_builds (build_id, fingerprint, seeder, requeues_left, next_item, expires_at)
                        VALUES ($1, $2, $3, $4::int, $5::int, now() + make_interval(secs => $6::float8))
                        ON CONFLICT (build_id) DO NOTHING RETURNING seeder
                        """, [build.id, build.fingerprint, worker.name, String(build.requeueBudget), String(items.count),
                              String(build.expiresAfter)])
                } catch .statement(_, .some("55P03"), _) {
                    // The seeding job's transaction still holds the build's row: it did not commit in time. (Its row is
                    // not visible before it commits: the seeder cannot be named.)
                    throw QueueError.notSeeded(build: build.id, seeder: "another job", seconds: seconds)
                }
                let role: QueueRole
                if claimed.isEmpty {
                    let row = try s.query("SELECT fingerprint, seeder FROM fanout_queue_builds WHERE build_id = $1", [build.id])
                    guard let found = row.first, let theirs = found[0] else {
                        throw QueueError.statement(location, state: nil, message: "build \(build.id) vanished while joining it")
                    }
                    guard theirs == build.fingerprint else {
                        throw QueueError.differentBuild(build: build.id, ours: build.fingerprint, theirs: theirs)
                    }
                    role = .follower(seeder: found[1] ?? "?")
                } else {
                    _ = try s.query("""
                        INSERT INTO fanout_queue_items (build_id, item, payload, estimate)
                        SELECT $1, t.n::int, t.e->>'payload', (t.e->>'estimate')::float8
                        FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS t(e, n)
                        """, [build.id, seed])
                    role = .seeder
                }
                if alive > 0 {
                    // Two joins of one name at once: the second waits for the first's commit, then sees it.
                    _ = try s.query("SELECT pg_advisory_xact_lock(hashtext($1 || '/' || $2))", [build.id, worker.name])
                    let live = try s.query("""
                        SELECT extract(epoch FROM now() - max(last_seen)) FROM fanout_queue_workers
                        WHERE build_id = $1 AND name = $2 AND session <> $3 AND NOT finished
                          AND last_seen > now() - make_interval(secs => $4::float8)
                        """, [build.id, worker.name, worker.session, String(alive)])
                    if let ago = live.first?.first ?? nil, let seconds = Double(ago) {
                        throw QueueError.workerTaken(build: build.id, worker: worker.name, seenSecondsAgo: seconds)
                    }
                }
                _ = try s.query("""
                    INSERT INTO fanout_queue_workers (build_id, session, name) VALUES ($1, $2, $3)
                    ON CONFLICT (build_id, session) DO UPDATE SET last_seen = now(), finished = false
                    """, [build.id, worker.session, worker.name])
                return role
            }
        }
    }

    public func reserve(_ build: QueueBuild, for worker: QueueWorker, lease: Double) async throws(QueueError) -> Reservation? {
        try await run("reserving work of build \(build.id)") { s throws(QueueError) in
            _ = try s.query("UPDATE fanout_queue_workers SET last_seen = now() WHERE build_id = $1 AND session = $2",
                            [build.id, worker.session])
            // First an item whose holder let its lease lapse (the oldest work; few rows: at most one a slot), then
            // the next queued one. Each is one index range scan in (build, state, priority, item) order that stops at
            // the first row no other job holds: a reservation costs the same at item 1 and at item 100,000. An
            // item queued again for its failures avoids the job that failed it while another job of the build is
            // alive (seen within a lease) and not finished.
            // (Never this session's own lapsed item: it still runs it, and renewing gives the lease back.)
            for candidates in ["state = 'reserved' AND lease_until < now() AND session IS DISTINCT FROM $3", "state = 'queued'"] {
                let rows = try s.query("""
                    WITH next AS (
                      SELECT item FROM fanout_queue_items
                      WHERE build_id = $1 AND \(candidates)
                        AND (avoid_worker IS DISTINCT FROM $2 OR NOT EXISTS (
                          SELECT 1 FROM fanout_queue_workers w
                          WHERE w.build_id = $1 AND w.name <> $2 AND NOT w.finished
                            AND w.last_seen > now() - make_interval(secs => $4::float8)))
                      ORDER BY priority, item
                      LIMIT 1
                      FOR UPDATE SKIP LOCKED)
                    UPDATE fanout_queue_items i
                    SET state = 'reserved', token = i.token + 1, worker = $2, session = $3,
                        lease_until = now() + make_interval(secs => $4::float8), first_worker = COALESCE(i.first_worker, $2)
                    FROM next WHERE i.build_id = $1 AND i.item = next.item
                    RETURNING i.item, i.token, i.payload, i.estimate, i.retry_of
                    """, [build.id, worker.name, worker.session, String(lease)])
                if let row = rows.first { return try Self.reservation(row) }
            }
            return nil
        }
    }

    public func renew(_ build: QueueBuild, for worker: QueueWorker, lease: Double) async throws(QueueError) -> Set<Int> {
        try await run("renewing leases of build \(build.id)") { s throws(QueueError) in
            _ = try s.query("UPDATE fanout_queue_workers SET last_seen = now() WHERE build_id = $1 AND session = $2",
                            [build.id, worker.session])
            let rows = try s.query("""
                UPDATE fanout_queue_items SET lease_until = now() + make_interval(secs => $3::float8)
                WHERE build_id = $1 AND session = $2 AND state = 'reserved' RETURNING item
                """, [build.id, worker.session, String(lease)])
            return Set(rows.compactMap { $0.first.flatMap { $0 }.flatMap { Int($0) } })
        }
    }

    public func complete(_ reservation: Reservation, of build: QueueBuild, by worker: QueueWorker,
                         results: [QueuedResult], retry: QueueItem?) async throws(QueueError) -> Completion {
        let encoded = try Self.json(results.map { ["test": $0.test, "failed": $0.failed, "payload": $0.payload] as [String: Any] })
        let keys = [build.id, String(reservation.item), String(reservation.token), worker.session]
        return try await run("recording results of build \(build.id)") { s throws(QueueError) in
            // Sent again after a connection broke: the first attempt may have committed.
            let already = try s.query("""
                SELECT 1 FROM fanout_queue_items
                WHERE build_id = $1 AND item = $2::int AND token = $3::int AND session = $4 AND state = 'done'
                """, keys)
            if !already.isEmpty { return Completion(accepted: true, retryQueued: false) }
            return try s.transaction { () throws(QueueError) -> Completion in
                let held = try s.query("""
                    UPDATE fanout_queue_items SET state = 'done', lease_until = NULL
                    WHERE build_id = $1 AND item = $2::int AND token = $3::int AND session = $4 AND state = 'reserved'
                    RETURNING item
                    """, keys)
                guard !held.isEmpty else { return Completion(accepted: false, retryQueued: false) }
                _ = try s.query("""
                    INSERT INTO fanout_queue_results (build_id, item, token, test, failed, payload, worker)
                    SELECT $1, $2::int, $3::int, r->>'test', (r->>'failed')::boolean, r->>'payload', $5
                    FROM jsonb_array_elements($4::jsonb) r
                    ON CONFLICT DO NOTHING
                    """, [build.id, String(reservation.item), String(reservation.token), encoded, worker.name])
                guard let retry else { return Completion(accepted: true, retryQueued: false) }
                let numbered = try s.query("""
                    UPDATE fanout_queue_builds SET requeues_left = requeues_left - 1, next_item = next_item + 1
                    WHERE build_id = $1 AND requeues_left > 0 RETURNING next_item
                    """, [build.id])
                guard let number = numbered.first?.first ?? nil else { return Completion(accepted: true, retryQueued: false) }
                _ = try s.query("""
                    INSERT INTO fanout_queue_items (build_id, item, priority, payload, estimate, avoid_worker, retry_of)
                    VALUES ($1, $2::int, -1, $3, $4::float8, $5, $6::int)
                    """, [build.id, number, retry.payload, String(retry.estimate), worker.name, String(reservation.item)])
                return Completion(accepted: true, retryQueued: true)
            }
        }
    }

    public func release(_ reservations: [Reservation], of build: QueueBuild, by worker: QueueWorker) async throws(QueueError) {
        guard !reservations.isEmpty else { return }
        let tokens = try Self.json(reservations.map { ["item": $0.item, "token": $0.token] })
        _ = try await run("giving back work of build \(build.id)") { s throws(QueueError) in
            try s.query("""
                UPDATE fanout_queue_items i SET state = 'queued', lease_until = NULL, worker = NULL, session = NULL
                FROM jsonb_array_elements($3::jsonb) r
                WHERE i.build_id = $1 AND i.item = (r->>'item')::int AND i.token = (r->>'token')::int
                  AND i.session = $2 AND i.state = 'reserved'
                """, [build.id, worker.session, tokens])
        }
    }

    public func state(_ build: QueueBuild) async throws(QueueError) -> QueueState {
        try await run("reading the state of build \(build.id)") { s throws(QueueError) in
            let row = try s.query("""
                SELECT count(*) FILTER (WHERE state = 'queued'), count(*) FILTER (WHERE state = 'reserved'),
                       count(*) FILTER (WHERE state = 'done')
                FROM fanout_queue_items WHERE build_id = $1
                """, [build.id]).first ?? []
            let n = row.map { $0.flatMap { Int($0) } ?? 0 }
            return QueueState(queued: n.count > 0 ? n[0] : 0, reserved: n.count > 1 ? n[1] : 0, done: n.count > 2 ? n[2] : 0)
        }
    }

    public func firstShare(_ build: QueueBuild, for worker: QueueWorker, onlyFailures: Bool, lease: Double)
        async throws(QueueError) -> [Reservation] {
        try await run("taking the first share of \(worker.name) in build \(build.id)") { s throws(QueueError) in
            try s.query("""
                WITH mine AS (
                  SELECT i.item FROM fanout_queue_items i
                  WHERE i.build_id = $1 AND i.first_worker = $2 AND i.state = 'done'
                    AND (NOT $5::boolean OR EXISTS (SELECT 1 FROM fanout_queue_results r
                         WHERE r.build_id = $1 AND r.item = i.item AND r.token = i.token AND r.failed))
                  FOR UPDATE SKIP LOCKED)
                UPDATE fanout_queue_items i
                SET state = 'reserved', token = i.token + 1, worker = $2, session = $3,
                    lease_until = now() + make_interval(secs => $4::float8)
                FROM mine WHERE i.build_id = $1 AND i.item = mine.item
                RETURNING i.item, i.token, i.payload, i.estimate, i.retry_of
                """, [build.id, worker.name, worker.session, String(lease), onlyFailures ? "true" : "false"])
                .map(Self.reservation).sorted { $0.item < $1.item }
        }
    }

    public func results(_ build: QueueBuild) async throws(QueueError) -> [StoredResult] {
        try await run("reading the results of build \(build.id)") { s throws(QueueError) in
            // Only the results of each item's current reservation, once it is done (an item a retried job took again
            // counts with its new results).
            try s.query("""
                SELECT r.item, r.test, r.failed, r.payload, r.worker FROM fanout_queue_results r
                JOIN fanout_queue_items i ON i.build_id = r.build_id AND i.item = r.item AND i.token = r.token
                WHERE r.build_id = $1 AND i.state = 'done' ORDER BY r.seq
                """, [build.id]).map { row in
                StoredResult(item: Int(row[0] ?? "") ?? 0, test: row[1] ?? "", failed: row[2] == "t", payload: row[3] ?? "",
                             worker: row[4] ?? "")
            }
        }
    }

    public func leave(_ build: QueueBuild, as worker: QueueWorker) async throws(QueueError) {
        _ = try await run("leaving build \(build.id)") { s throws(QueueError) in
            try s.query("UPDATE fanout_queue_workers SET finished = true WHERE build_id = $1 AND session = $2",
                        [build.id, worker.session])
        }
    }

    public func lookup(_ id: String) async throws(QueueError) -> QueueBuild {
        let rows = try await run("looking up build \(id)") { s throws(QueueError) in
            try s.query("""
                SELECT fingerprint, requeues_left, extract(epoch FROM expires_at - created_at) FROM fanout_queue_builds
                WHERE build_id = $1 AND expires_at >= now()
                """, [id])
        }
        guard let row = rows.first, row.count == 3, let fingerprint = row[0] else { throw .unknownBuild(id) }
        return QueueBuild(id: id, fingerprint: fingerprint, expiresAfter: row[2].flatMap { Double($0) } ?? 86_400,
                          requeueBudget: row[1].flatMap { Int($0) } ?? 0)
    }

    public func items(_ build: QueueBuild) async throws(QueueError) -> [QueuedItemState] {
        try await run("reading the items of build \(build.id)") { s throws(QueueError) in
            try s.query("""
                SELECT item, payload, state, worker, retry_of FROM fanout_queue_items WHERE build_id = $1 ORDER BY item
                """, [build.id]).map { row in
                QueuedItemState(item: Int(row[0] ?? "") ?? 0, payload: row[1] ?? "", state: row[2] ?? "",
                                worker: row[3], retryOf: row[4].flatMap { Int($0) })
            }
        }
    }

    public func keepReport(_ report: String, of build: QueueBuild, by worker: QueueWorker) async throws(QueueError) {
        _ = try await run("keeping the report of \(worker.name) in build \(build.id)") { s throws(QueueError) in
            try s.query("""
                INSERT INTO fanout_queue_reports (build_id, session, name, report) VALUES ($1, $2, $3, $4)
                ON CONFLICT (build_id, session) DO UPDATE SET report = excluded.report, sent_at = now()
                """, [build.id, worker.session, worker.name, report])
        }
    }

    public func liveJobs(_ build: QueueBuild, seenWithin seconds: Double) async throws(QueueError) -> [String] {
        try await run("reading the jobs of build \(build.id)") { s throws(QueueError) in
            try s.query("""
                SELECT name FROM fanout_queue_workers
                WHERE build_id = $1 AND NOT finished AND last_seen > now() - make_interval(secs => $2::float8) ORDER BY name
                """, [build.id, String(seconds)]).compactMap { $0.first ?? nil }
        }
    }

    public func reports(_ build: QueueBuild) async throws(QueueError) -> [(worker: String, report: String)] {
        try await run("reading the reports of build \(build.id)") { s throws(QueueError) in
            try s.query("SELECT name, report FROM fanout_queue_reports WHERE build_id = $1 ORDER BY sent_at, session",
                        [build.id]).map { (worker: $0[0] ?? "", report: $0[1] ?? "") }
        }
    }

    // MARK: - Rows

    private static func reservation(_ row: [String?]) throws(QueueError) -> Reservation {
        guard row.count == 5, let item = row[0].flatMap({ Int($0) }), let token = row[1].flatMap({ Int($0) }),
              let payload = row[2], let estimate = row[3].flatMap({ Double($0) }) else {
            throw .statement("", state: nil, message: "a reservation row of an unexpected shape: \(row)")
        }
        return Reservation(item: item, token: token, payload: payload, estimate: estimate, retryOf: row[4].flatMap { Int($0) })
    }

    private static func json(_ value: Any) throws(QueueError) -> String {
        do {
            return String(decoding: try JSONSerialization.data(withJSONObject: value), as: UTF8.self)
        } catch {
            throw .statement("", state: nil, message: "could not encode \(type(of: value)) as JSON: \(error)")
        }
    }
}
