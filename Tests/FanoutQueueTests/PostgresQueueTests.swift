import FanoutQueue
import FanoutTestSupport
import Foundation
import Synchronization
import Testing

/// One private PostgreSQL server for every queue test (started once, stopped when the test process exits), with
/// passwords in a libpq password file as a user would keep them.
enum QueueServer {
    static let shared = Task { () throws -> PrivatePostgres in
        let server = try await PrivatePostgres.start()
        _ = try server.passwordFile() // sets PGPASSFILE
        return server
    }

    /// A queue opened on the shared server as `queue_user`.
    static func queue(notice: @escaping @Sendable (String) -> Void = { _ in }) async throws -> PostgresQueue {
        let server = try await shared.value
        let q = PostgresQueue(try QueueLocation(server.url()), notice: notice)
        try await q.open()
        return q
    }

    /// A build id no other test uses.
    static func build(_ label: String, fingerprint: String = "f1", budget: Int = 0, expiresAfter: Double = 3600) -> QueueBuild {
        QueueBuild(id: label + "-" + UUID().uuidString.prefix(8), fingerprint: fingerprint, expiresAfter: expiresAfter,
                   requeueBudget: budget)
    }

    static func items(_ n: Int, prefix: String = "item") -> [QueueItem] {
        (1...n).map { QueueItem(payload: "\(prefix)-\($0)", estimate: Double(n - $0 + 1)) }
    }

    static func worker(_ name: String) -> QueueWorker {
        QueueWorker(name: name, session: name + "-" + UUID().uuidString.prefix(6))
    }
}

/// A value shared by concurrent tasks.
final class Locked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<T>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct PostgresQueueTests {
    /// Polls `body` every 50 ms until it returns a value, at most `seconds`.
    func eventually<T>(_ seconds: Double = 15, _ body: () async throws -> T?) async throws -> T {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let value = try await body() { return value }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw PrivatePostgres.Failure(description: "not within \(seconds) s")
    }

    @Test func ofManyJobsJoiningAtOnceExactlyOneSeedsAndTheOthersUseItsItems() async throws {
        let build = QueueServer.build("seed-race")
        let roles = try await withThrowingTaskGroup(of: (String, QueueRole).self) { group in
            for job in 1...12 {
                group.addTask {
                    let q = try await QueueServer.queue()
                    // Each job offers its own plan: only the seeder's may end up in the queue.
                    let role = try await q.join(build, as: QueueServer.worker("job-\(job)"),
                                                items: QueueServer.items(5 + job, prefix: "job-\(job)"), within: 30)
                    await q.close()
                    return ("job-\(job)", role)
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        let seeders = roles.filter { $0.value == .seeder }.map(\.key)
        try #require(seeders.count == 1, "exactly one seeder: \(roles)")
        let seeder = seeders[0]
        for (job, role) in roles where job != seeder { #expect(role == .follower(seeder: seeder), "\(job): \(role)") }
        let q = try await QueueServer.queue()
        let state = try await q.state(build)
        let n = Int(seeder.dropFirst(4))! + 5
        #expect(state == QueueState(queued: n, reserved: 0, done: 0), "the seeder's \(n) items, once: \(state)")
        let first = try #require(try await q.reserve(build, for: QueueServer.worker("late"), lease: 30))
        #expect(first.payload == "\(seeder)-1", "longest first, from the seeder's plan: \(first)")
    }

    @Test func everyItemIsReservedAndCompletedByExactlyOneOfManyConcurrentJobs() async throws {
        let build = QueueServer.build("exactly-once")
        let seed = try await QueueServer.queue()
        #expect(try await seed.join(build, as: QueueServer.worker("seeder"), items: QueueServer.items(400), within: 30) == .seeder)
        let done = Locked<[String: [String]]>([:])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for job in 1...8 {
                group.addTask {
                    let q = try await QueueServer.queue()
                    let me = QueueServer.worker("job-\(job)")
                    _ = try await q.join(build, as: me, items: [], within: 30)
                    while let r = try await q.reserve(build, for: me, lease: 60) {
                        let c = try await q.complete(r, of: build, by: me, results: [
                            QueuedResult(test: r.payload + "/t", failed: false, payload: "{}")], retry: nil)
                        #expect(c.accepted)
                        done.withLock { $0[r.payload, default: []].append(me.name) }
                    }
                    await q.close()
                }
            }
            try await group.waitForAll()
        }
        let runs = done.withLock { $0 }
        #expect(runs.count == 400, "every item ran")
        #expect(runs.values.allSatisfy { $0.count == 1 }, "none ran twice: \(runs.filter { $0.value.count > 1 })")
        #expect(Set(runs.values.flatMap { $0 }).count > 1, "the jobs shared the work")
        #expect(try await seed.state(build) == QueueState(queued: 0, reserved: 0, done: 400))
        let results = try await seed.results(build)
        #expect(results.count == 400 && Set(results.map(\.test)).count == 400, "each result recorded once")
    }

    @Test func aLapsedLeaseGoesBackToTheQueueAndTheLateResultOfItsFirstHolderIsRefused() async throws {
        let build = QueueServer.build("lease")
        let q = try await QueueServer.queue()
        let dead = QueueServer.worker("dead"), alive = QueueServer.worker("alive")
        _ = try await q.join(build, as: dead, items: QueueServer.items(1), within: 30)
        let first = try #require(try await q.reserve(build, for: dead, lease: 1))
        #expect(try await q.reserve(build, for: alive, lease: 30) == nil, "held while its lease runs")
        // The holder never renews: once its lease lapsed (the server's clock), the other job gets the item.
        let second = try await eventually { try await q.reserve(build, for: alive, lease: 30) }
        #expect(second.item == first.item && second.token == first.token + 1)
        let late = try await q.complete(first, of: build, by: dead, results: [QueuedResult(test: "t", failed: true, payload: "late")], retry: nil)
        #expect(!late.accepted, "the first holder's late result does not count")
        let onTime = try await q.complete(second, of: build, by: alive, results: [QueuedResult(test: "t", failed: false, payload: "on time")], retry: nil)
        #expect(onTime.accepted)
        #expect(try await q.results(build).map(\.payload) == ["on time"], "one result for the test: the holder's")
    }

    @Test func aStoppingJobGivesItsWorkBackAtOnceAndItsLateResultIsRefused() async throws {
        let build = QueueServer.build("release")
        let q = try await QueueServer.queue()
        let stopping = QueueServer.worker("stopping"), other = QueueServer.worker("other")
        _ = try await q.join(build, as: stopping, items: QueueServer.items(2), within: 30)
        let held = try #require(try await q.reserve(build, for: stopping, lease: 600))
        try await q.release([held], of: build, by: stopping)
        // Back at once (its 600 s lease did not have to lapse), and first in line again.
        let taken = try #require(try await q.reserve(build, for: other, lease: 30))
        #expect(taken.item == held.item && taken.token == held.token + 1)
        #expect(!(try await q.complete(held, of: build, by: stopping, results: [], retry: nil)).accepted)
        #expect(try await q.complete(taken, of: build, by: other, results: [], retry: nil).accepted)
        // Giving back what another job holds changes nothing.
        let second = try #require(try await q.reserve(build, for: other, lease: 30))
        try await q.release([second], of: build, by: stopping)
        #expect(try await q.state(build) == QueueState(queued: 0, reserved: 1, done: 1))
    }

    @Test func renewingKeepsTheLeaseAndALapsedOneNobodyTookStillCounts() async throws {
        let build = QueueServer.build("renew")
        let q = try await QueueServer.queue()
        let a = QueueServer.worker("a"), b = QueueServer.worker("b")
        _ = try await q.join(build, as: a, items: QueueServer.items(2), within: 30)
        let held = try #require(try await q.reserve(build, for: a, lease: 1))
        // For 2.5 s (more than two leases), `a` renews every 0.3 s: `b` gets the other item, never this one.
        let until = Date().addingTimeInterval(2.5)
        var seenByB: [Int] = []
        while Date() < until {
            #expect(try await q.renew(build, for: a, lease: 1) == [held.item])
            if let r = try await q.reserve(build, for: b, lease: 30) { seenByB.append(r.item) }
            try await Task.sleep(for: .milliseconds(300))
        }
        #expect(seenByB == [2], "b took only the free item: \(seenByB)")
        #expect(try await q.complete(held, of: build, by: a, results: [], retry: nil).accepted)

        // A lease that lapsed while nobody wanted the item: its holder's result still counts (the item ran once).
        let build2 = QueueServer.build("lapsed")
        _ = try await q.join(build2, as: a, items: QueueServer.items(1), within: 30)
        let r = try #require(try await q.reserve(build2, for: a, lease: 0.2))
        _ = try await eventually { try await q.renew(build2, for: b, lease: 1).isEmpty ? true : nil }
        try await Task.sleep(for: .milliseconds(300)) // past the lease, by the server's clock
        #expect(try await q.complete(r, of: build2, by: a, results: [], retry: nil).accepted)
    }

    @Test func failuresAreQueuedAgainForAnotherJobWithinTheBuildsBudget() async throws {
        let build = QueueServer.build("requeue", budget: 1)
        let q = try await QueueServer.queue()
        let a = QueueServer.worker("a"), b = QueueServer.worker("b")
        _ = try await q.join(build, as: a, items: QueueServer.items(3), within: 30)
        _ = try await q.join(build, as: b, items: [], within: 30)
        let first = try #require(try await q.reserve(build, for: a, lease: 30))
        let retry = QueueItem(payload: "retry of \(first.payload)", estimate: 1)
        let c = try await q.complete(first, of: build, by: a, results: [QueuedResult(test: "t1", failed: true, payload: "")], retry: retry)
        #expect(c.accepted && c.retryQueued)
        // `a` failed it and `b` is alive: `a` gets the next plain item, `b` the retry (retries go first).
        let nextForA = try #require(try await q.reserve(build, for: a, lease: 30))
        #expect(nextForA.retryOf == nil && nextForA.payload == "item-2")
        let forB = try #require(try await q.reserve(build, for: b, lease: 30))
        #expect(forB.payload == retry.payload && forB.retryOf == first.item)
        // The budget (1) is spent: the next failure is not queued again.
        let again = try await q.complete(forB, of: build, by: b, results: [QueuedResult(test: "t1", failed: true, payload: "")],
                                         retry: QueueItem(payload: "retry 2", estimate: 1))
        #expect(again.accepted && !again.retryQueued)
        // Once `b` left, a retry that avoids `a` is `a`'s to run: nothing is left behind.
        let second = try await q.complete(nextForA, of: build, by: a, results: [], retry: nil)
        #expect(second.accepted)
        let build2 = QueueServer.build("requeue-alone", budget: 2)
        _ = try await q.join(build2, as: a, items: QueueServer.items(1), within: 30)
        let only = try #require(try await q.reserve(build2, for: a, lease: 30))
        _ = try await q.complete(only, of: build2, by: a, results: [], retry: QueueItem(payload: "again", estimate: 1))
        #expect(try await q.reserve(build2, for: a, lease: 30)?.payload == "again", "no other job alive: a runs its own retry")
    }

    @Test func aRetriedJobTakesItsFirstShareAgainOrOnlyItsFailures() async throws {
        let build = QueueServer.build("retried-job")
        let q = try await QueueServer.queue()
        let first = QueueServer.worker("2"), other = QueueServer.worker("1")
        _ = try await q.join(build, as: first, items: QueueServer.items(6), within: 30)
        var mine: [Int] = []
        for i in 0..<6 {
            let who = i % 2 == 0 ? first : other
            let r = try #require(try await q.reserve(build, for: who, lease: 30))
            _ = try await q.complete(r, of: build, by: who, results: [QueuedResult(test: r.payload, failed: r.item == 3, payload: "")], retry: nil)
            if who == first { mine.append(r.item) }
        }
        #expect(try await q.state(build).drained)
        // The CI runs job "2" again: a new process of the same name.
        let retry = QueueWorker(name: "2", session: "2-second-attempt")
        _ = try await q.join(build, as: retry, items: [], within: 30)
        let failures = try await q.firstShare(build, for: retry, onlyFailures: true, lease: 30)
        #expect(failures.map(\.item) == [3], "only its failed item: \(failures)")
        for r in failures { _ = try await q.complete(r, of: build, by: retry, results: [], retry: nil) }
        let again = try await q.firstShare(build, for: retry, onlyFailures: false, lease: 30)
        #expect(again.map(\.item) == mine, "its whole first share: \(again.map(\.item)) vs \(mine)")
        #expect(try await q.firstShare(build, for: QueueWorker(name: "3", session: "x"), onlyFailures: false, lease: 30).isEmpty)
    }

    @Test func aLiveJobsNameIsRefusedToAnotherProcessUntilItLeftOrWentQuiet() async throws {
        let build = QueueServer.build("names")
        let q = try await QueueServer.queue()
        let first = QueueServer.worker("1")
        _ = try await q.join(build, as: first, items: QueueServer.items(2), within: 30, alive: 30)
        let twin = QueueWorker(name: "1", session: "1-twin")
        await #expect(throws: QueueError.self) { try await q.join(build, as: twin, items: [], within: 30, alive: 30) }
        #expect(try await q.liveJobs(build, seenWithin: 30) == ["1"])
        // Quiet for longer than `alive`: a job that died; its CI retry may join.
        try await Task.sleep(for: .milliseconds(1200))
        _ = try await q.join(build, as: twin, items: [], within: 30, alive: 1)
        try await q.leave(build, as: first)
        try await q.leave(build, as: twin)
        #expect(try await q.liveJobs(build, seenWithin: 30).isEmpty)
    }

    @Test func theReportStepLooksTheBuildUpAndReadsItsItemsAndTheJobsReports() async throws {
        let build = QueueServer.build("lookup", fingerprint: "fp-9", budget: 3)
        let q = try await QueueServer.queue()
        await #expect(throws: QueueError.unknownBuild(build.id)) { try await q.lookup(build.id) }
        let w = QueueServer.worker("1")
        _ = try await q.join(build, as: w, items: QueueServer.items(3), within: 30)
        let found = try await q.lookup(build.id)
        #expect(found.fingerprint == "fp-9" && found.requeueBudget == 3)
        let r = try #require(try await q.reserve(build, for: w, lease: 30))
        let items = try await q.items(found)
        #expect(items.map(\.item) == [1, 2, 3])
        #expect(items.map(\.state) == ["reserved", "queued", "queued"] && items[0].worker == "1" && items[0].payload == r.payload)
        try await q.keepReport("{\"first\": 1}", of: build, by: w)
        try await q.keepReport("{\"again\": 2}", of: build, by: w) // sent again: replaces
        try await q.keepReport("{\"other\": 3}", of: build, by: QueueServer.worker("2"))
        let reports = try await q.reports(found)
        #expect(reports.map(\.report) == ["{\"again\": 2}", "{\"other\": 3}"], "\(reports)")
    }

    @Test func buildsAreApartAnotherFingerprintIsRefusedAndExpiredBuildsGo() async throws {
        let q = try await QueueServer.queue()
        let one = QueueServer.build("apart"), two = QueueServer.build("apart")
        _ = try await q.join(one, as: QueueServer.worker("a"), items: QueueServer.items(3, prefix: "one"), within: 30)
        #expect(try await q.join(two, as: QueueServer.worker("a"), items: QueueServer.items(2, prefix: "two"), within: 30) == .seeder)
        #expect(try await q.reserve(two, for: QueueServer.worker("b"), lease: 30)?.payload == "two-1")
        let (stateOne, stateTwo) = (try await q.state(one), try await q.state(two))
        #expect(stateOne.queued == 3 && stateTwo.queued == 1)

        var other = one
        other.fingerprint = "another product"
        await #expect(throws: QueueError.differentBuild(build: one.id, ours: "another product", theirs: "f1")) {
            try await q.join(other, as: QueueServer.worker("c"), items: [], within: 30)
        }
        // A build that expired is gone at the next join, and its id can start afresh.
        let short = QueueServer.build("expiring", expiresAfter: 0.5)
        _ = try await q.join(short, as: QueueServer.worker("a"), items: QueueServer.items(2), within: 30)
        try await Task.sleep(for: .milliseconds(700)) // past its expiry, by the server's clock
        _ = try await q.join(QueueServer.build("sweeper"), as: QueueServer.worker("a"), items: [], within: 30)
        #expect(try await q.state(short) == QueueState(queued: 0, reserved: 0, done: 0))
        var fresh = short
        fresh.fingerprint = "new"
        #expect(try await q.join(fresh, as: QueueServer.worker("b"), items: QueueServer.items(1), within: 30) == .seeder)
    }

    @Test func aBuildWhoseSeedIsNotCommittedInTimeSaysWhoHoldsIt() async throws {
        let server = try await QueueServer.shared.value
        let build = QueueServer.build("slow-seed")
        let q = try await QueueServer.queue()
        // Another job claimed the build in a transaction it has not committed (it is still inserting, or hung).
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: (PrivatePostgres.binaries ?? "") + "/psql")
        holder.arguments = ["-X", "-q", "-h", "127.0.0.1", "-p", String(server.port), "-U", "queue_user", "-d", "queue", "-c",
                            "BEGIN; INSERT INTO fanout_queue_builds (build_id, fingerprint, seeder, requeues_left, next_item, expires_at) "
                            + "VALUES ('\(build.id)', 'f1', 'job-7', 0, 0, now() + interval '1 hour'); SELECT pg_sleep(20); COMMIT;"]
        try holder.run()
        defer { holder.terminate() }
        _ = try await eventually {
            try await q.state(build) == QueueState(queued: 0, reserved: 0, done: 0) ? true : nil // the queue answers
        }
        try await Task.sleep(for: .milliseconds(500)) // psql's insert is in
        let started = Date()
        await #expect(throws: QueueError.self) {
            try await q.join(build, as: QueueServer.worker("a"), items: QueueServer.items(1), within: 1)
        }
        #expect(Date().timeIntervalSince(started) < 15, "the wait has a deadline")
        do {
            _ = try await q.join(build, as: QueueServer.worker("a"), items: QueueServer.items(1), within: 1)
        } catch {
            #expect("\(error)".contains("did not fill it within 1 s"), "\(error)")
        }
    }

    @Test func credentialsComeFromThePasswordFileAndStayOutOfMessages() async throws {
        let server = try await QueueServer.shared.value
        // A wrong password: refused, saying where a password goes, and never showing one.
        let wrong = PostgresQueue(try QueueLocation(server.url(user: "wrong_user")), backoff: [])
        do {
            try await wrong.open()
            Issue.record("a wrong password was accepted")
        } catch {
            #expect(error.description.contains("PGPASSWORD") && error.description.contains("password authentication failed"), "\(error)")
            #expect(!error.description.contains(PrivatePostgres.queuePassword), "no password in: \(error)")
        }
        // A password in the URL is refused before any connection, and not echoed.
        do {
            _ = try QueueLocation("postgres://queue_user:hunter2@127.0.0.1:\(server.port)/queue")
            Issue.record("a URL with a password was taken")
        } catch {
            #expect(error.description.contains("PGPASSWORD") && !error.description.contains("hunter2"), "\(error)")
        }
        for leaky in ["postgres://queue_user@127.0.0.1:\(server.port)/queue?sslmode=disable&password=hunter2",
                      "postgres://queue_user@127.0.0.1/queue?PASSWORD=hunter2", "queue_user:hunter2@127.0.0.1 not a url"] {
            do {
                _ = try QueueLocation(leaky)
                Issue.record("taken: \(leaky)")
            } catch {
                #expect(!error.description.contains("hunter2"), "\(error)")
            }
        }
        #expect(throws: QueueError.self) { try QueueLocation("redis://127.0.0.1:6379") }
        // The TLS-only user: refused in clear text, accepted over TLS with the server's certificate verified.
        let clear = PostgresQueue(try QueueLocation(server.url(user: "tls_user")), backoff: [])
        await #expect(throws: QueueError.self) { try await clear.open() }
        let tls = PostgresQueue(try QueueLocation(server.url(user: "tls_user", tls: "verify-full")), backoff: [])
        try await tls.open()
        #expect(await tls.usesTLS)
        let build = QueueServer.build("tls")
        #expect(try await tls.join(build, as: QueueServer.worker("a"), items: QueueServer.items(1), within: 30) == .seeder)
        await tls.close()
    }

    @Test func aServerThatIsNotThereIsSaidSoAfterTheBackOff() async throws {
        // A port nothing listens on (the shared server's, plus one, checked free).
        let server = try await QueueServer.shared.value
        let notices = Locked<[String]>([])
        let q = PostgresQueue(try QueueLocation("postgres://queue_user@127.0.0.1:\(server.port + 1)/queue"), connectTimeout: 2,
                              backoff: [0.1, 0.2]) { line in notices.withLock { $0.append(line) } }
        do {
            _ = try await q.state(QueueServer.build("nowhere"))
            Issue.record("a queue with no server answered")
        } catch {
            guard case .unreachable = error else { Issue.record("not 'unreachable': \(error)"); return }
            #expect(error.description.contains("Is the server running"), "\(error)")
        }
        #expect(notices.withLock { $0.count } == 2, "each retry was said: \(notices.withLock { $0 })")
    }
}
