import FanoutCore
import FanoutQueue
import Foundation

/// Queue mode's side of a run: joins the CI build's shared queue (seeding it, when this job is the first, with its own
/// plan, longest first), takes its first share again when the CI retried this job, reserves an item whenever a slot
/// waits with nothing queued here, renews the leases of what it holds, completes each item once every test of it has
/// its verdict here (queueing its failed tests again, for another job, within `--retries` and the build's budget), and
/// closes the dispatcher's feed once the queue is drained. Items held by other jobs keep it waiting: if such a job
/// dies, its leases lapse and this job takes the items over, so nothing a dead job held is lost.
struct QueueFeed: Sendable {
    let job: QueueJob
    let queue: PostgresQueue
    let build: QueueBuild
    let worker: QueueWorker
    let role: QueueRole
    let retries: Int
    let progress: ProgressHandler

    /// What the feed did, for the job's report.
    struct Summary: Sendable {
        /// Failed tests queued again for another job: this job's exit code does not count them (the build's verdict
        /// is `fanout queue report`'s).
        var requeued: Set<RunLedger.ResultKey> = []
        /// Items taken again as a CI retry of this job.
        var retaken = 0
        var warnings: [String] = []
    }

    /// How often the feed looks at the dispatcher and the queue while it holds work; twice as often as it asks the
    /// server whether a build it waits on is drained.
    static let interval = Duration.milliseconds(200)
    static let idleInterval = Duration.seconds(1)

    /// What the queue knows this job as: the Fanout version and encoding of its work items are in the fingerprint,
    /// so jobs that would read each other's items differently never share a build.
    static let itemFormat = "fanout \(Coordinator.version) work-item v1"

    /// Whether the queue answers at all (before anything is built): nil when it does, else why not.
    static func probe(_ job: QueueJob) async -> QueueError? {
        guard let location = try? QueueLocation(job.url) else { return nil } // a bad URL is said at join
        let queue = PostgresQueue(location, connectTimeout: 10, backoff: [1, 2, 4])
        defer { Task { await queue.close() } }
        do {
            try await queue.open()
            return nil
        } catch {
            switch error {
            case .unreachable, .connectionLost: return error
            default: return nil // refused, statement errors: said at join, not a reason to fall back
            }
        }
    }

    /// Connects and joins the build, offering `items` (the job's plan in the order it would run it).
    static func join(_ job: QueueJob, items: [WorkItem], retries: Int, progress: @escaping ProgressHandler) async throws(FanoutError) -> QueueFeed {
        let location: QueueLocation
        do {
            location = try QueueLocation(job.url)
        } catch {
            throw FanoutError("\(error)", hint: "Give --queue (or queue: url in fanout.yml) as postgres://USER@HOST:PORT/DATABASE.")
        }
        let queue = PostgresQueue(location) { progress(.warning($0)) }
        let tests = items.reduce(0) { $0 + $1.tests.count }
        let budget = job.requeueBudget ?? (retries > 0 ? max(1, items.count / 20) : 0)
        let build = QueueBuild(id: job.build, fingerprint: fingerprint(items), expiresAfter: job.expiresAfter,
                               requeueBudget: budget)
        let worker = QueueWorker(name: job.worker, session: "\(job.worker)-\(UUID().uuidString.prefix(8).lowercased())")
        let offered = items.compactMap { item in encode(item).map { QueueItem(payload: $0, estimate: item.estimate) } }
        do {
            try await queue.open()
            // A CI retry of a job that died may start before its leases lapse: it waits for them, no longer.
            let deadline = ContinuousClock.now + .seconds(job.lease + 2)
            var role: QueueRole
            while true {
                do throws(QueueError) {
                    role = try await queue.join(build, as: worker, items: offered, within: job.seedWait, alive: job.lease)
                    break
                } catch .workerTaken(let b, let w, let ago) where ContinuousClock.now < deadline {
                    progress(.phase("queue: another job named \(w) was seen in build \(b) \(Int(ago)) s ago; waiting for its lease to lapse"))
                    try? await Task.sleep(for: .seconds(1))
                }
            }
            switch role {
            case .seeder: progress(.phase("queue: this job (\(job.worker)) seeded build \(job.build) with \(items.count) items (\(tests) tests)"))
            case .follower(let seeder): progress(.phase("queue: joined build \(job.build) as \(job.worker), seeded by \(seeder)"))
            }
            return QueueFeed(job: job, queue: queue, build: build, worker: worker, role: role, retries: retries, progress: progress)
        } catch {
            await queue.close()
            throw FanoutError("\(error)", exitCode: .infrastructure)
        }
    }

    /// The build's fingerprint: every test of the plan on its destination, and the format of its items, so jobs of
    /// one build that would run different tests (another commit, another filter) are refused rather than mixed.
    static func fingerprint(_ items: [WorkItem]) -> String {
        let lines = items.flatMap { item in item.testIDs.map { "\(item.destination) \($0)" } }.sorted()
        return String(SHA256.hex(([itemFormat] + lines).joined(separator: "\n")).prefix(16))
    }

    static func encode(_ item: WorkItem) -> String? {
        let encoder = JSONConventions.encoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(item)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// An item reserved here, and the work it stands for.
    private struct Held {
        var reservation: Reservation
        var work: WorkItem
    }

    /// Feeds `dispatcher` until the queue is drained (or the run stops); completes what settles on the way. The
    /// connection stays open for `keep(_:)`.
    func run(_ dispatcher: Dispatcher) async -> Summary {
        var held: [Int: Held] = [:]
        var summary = Summary()
        var lastRenewal = ContinuousClock.now
        let decoder = JSONConventions.decoder()
        /// Queues what a reservation stands for here, or gives it back when this Fanout cannot read it.
        func take(_ r: Reservation) async throws(QueueError) -> Bool {
            guard var item = try? decoder.decode(WorkItem.self, from: Data(r.payload.utf8)) else {
                try await queue.release([r], of: build, by: worker)
                progress(.warning("queue item \(r.item) is not work this Fanout can read: given back"))
                return false
            }
            item.queueItem = r.item
            held[r.item] = Held(reservation: r, work: item)
            await dispatcher.offer([item])
            return true
        }
        do throws(QueueError) {
            // A CI retry of this job (same build and name): what it took the first time runs again, all of it or
            // only its failures, whatever the queue still holds.
            let again = try await queue.firstShare(build, for: worker, onlyFailures: job.retryFailures, lease: job.lease)
            for r in again {
                if try await take(r) { summary.retaken += 1 }
            }
            if !again.isEmpty {
                progress(.phase("queue: job \(job.worker) ran in build \(job.build) before (a CI retry): running "
                    + "\(job.retryFailures ? "the items it failed" : "what it ran") again, \(again.count) item\(again.count == 1 ? "" : "s")"))
            }
            while !Task.isCancelled {
                if await dispatcher.stopped { break }
                try await complete(await dispatcher.takeSettled(), held: &held, summary: &summary)
                if !held.isEmpty, ContinuousClock.now - lastRenewal >= .seconds(job.lease / 3) {
                    let still = try await queue.renew(build, for: worker, lease: job.lease)
                    lastRenewal = .now
                    for lost in held.keys.sorted() where !still.contains(lost) {
                        held[lost] = nil // another job runs it now: nothing of it is this job's to complete
                        let text = "queue item \(lost): its lease lapsed and another job holds it now; what runs here of it does not count in the build's results"
                        progress(.warning(text))
                        summary.warnings.append(text)
                    }
                }
                let want = await dispatcher.demand
                var got = 0
                while got < want, let r = try await queue.reserve(build, for: worker, lease: job.lease) {
                    guard try await take(r) else { break } // given back: it would come straight back now
                    got += 1
                }
                var pause = Self.interval
                if want > 0, got == 0, held.isEmpty {
                    // Nothing to reserve: done when nothing is queued or held anywhere; else another job holds work
                    // that comes back here if its lease lapses.
                    if try await queue.state(build).drained { break }
                    pause = Self.idleInterval
                }
                try? await Task.sleep(for: pause)
            }
        } catch {
            let text = "queue mode stopped taking work: \(error). What this job held went back to the queue, or goes "
                + "once its leases lapse."
            progress(.warning(text))
            summary.warnings.append(text)
        }
        // Stopped (interrupted, or the queue failed): what this job holds and has not finished goes back to the queue
        // at once, for the other jobs, rather than after its leases lapse. One attempt: a stopping run does not wait.
        if !held.isEmpty {
            try? await queue.release(held.values.map(\.reservation), of: build, by: worker)
            progress(.phase("queue: gave \(held.count) unfinished item\(held.count == 1 ? "" : "s") back to build \(job.build)"))
        }
        await dispatcher.closeFeed()
        return summary
    }

    /// Keeps the job's report for the build's merged report, says the job is done, and closes the connection.
    func keep(_ report: RunReport) async {
        let encoder = JSONConventions.encoder()
        if let data = try? encoder.encode(report) {
            do {
                try await queue.keepReport(String(decoding: data, as: UTF8.self), of: build, by: worker)
            } catch {
                progress(.warning("queue: this job's report was not kept for the build's merged report: \(error)"))
            }
        }
        try? await queue.leave(build, as: worker)
        await queue.close()
    }

    /// The feed's part of the job's report: its warnings, and failures queued again for another job, which do not
    /// fail this job (the build's verdict, retries included, is `fanout queue report`'s).
    static func account(_ summary: Summary, in report: inout RunReport, build: String) {
        report.warnings += summary.warnings
        guard !summary.requeued.isEmpty else { return }
        let requeued = report.results.filter {
            $0.outcome.isFailure && summary.requeued.contains(RunLedger.ResultKey(destination: $0.destination, test: $0.id))
        }
        report.warnings.append("\(requeued.count) failed test\(requeued.count == 1 ? " was" : "s were") queued again for "
            + "another job of build \(build) (--retries): this job's exit code does not count \(requeued.count == 1 ? "it" : "them"); "
            + "`fanout queue report` gives the build's verdict")
        if report.exitCode == RunExitCode.testFailures.rawValue {
            let rest = report.results.filter {
                !($0.outcome.isFailure && summary.requeued.contains(RunLedger.ResultKey(destination: $0.destination, test: $0.id)))
            }
            report.exitCode = Verdict.exitCode(Counts(results: rest)).rawValue
        }
    }

    /// Records the results of settled items (exactly once: a reservation that lost its item is refused and said so),
    /// and queues their failed tests again (`--retries`, within the build's budget).
    private func complete(_ settled: [(item: Int, results: [TestResult])], held: inout [Int: Held],
                          summary: inout Summary) async throws(QueueError) {
        let encoder = JSONConventions.encoder()
        encoder.outputFormatting = .sortedKeys
        for (number, results) in settled {
            guard let h = held.removeValue(forKey: number) else { continue }
            let queued = results.map { result in
                QueuedResult(test: "\(result.destination) \(result.id)", failed: result.outcome.isFailure,
                             payload: (try? encoder.encode(result)).map { String(decoding: $0, as: UTF8.self) } ?? "{}")
            }
            let retry = retryItem(of: h.work, results: results)
            let c = try await queue.complete(h.reservation, of: build, by: worker, results: queued,
                                             retry: retry.flatMap { item in Self.encode(item).map { QueueItem(payload: $0, estimate: item.estimate) } })
            if !c.accepted {
                let text = "queue item \(number): its lease lapsed and another job took it; its results here do not count in the build's results"
                progress(.warning(text))
                summary.warnings.append(text)
                continue
            }
            // A failure counts against this job unless it went back to the queue this time (a test queued again
            // earlier that failed here once more, with no retry left, counts).
            let queuedAgain = c.retryQueued ? Set(retry?.testIDs ?? []) : []
            for result in results where result.outcome.isFailure && !queuedAgain.contains(result.id) {
                summary.requeued.remove(RunLedger.ResultKey(destination: result.destination, test: result.id))
            }
            if c.retryQueued, let retry {
                summary.requeued.formUnion(retry.testIDs.map { RunLedger.ResultKey(destination: retry.destination, test: $0) })
                progress(.phase("queue: \(retry.tests.count) failed test\(retry.tests.count == 1 ? "" : "s") of \(retry.suite) queued again for another job (retry \(retry.retry) of \(retries))"))
            }
        }
    }

    /// The failed tests of an item, as the work of its next retry; nil without failures or retries left.
    private func retryItem(of work: WorkItem, results: [TestResult]) -> WorkItem? {
        guard work.retry < retries else { return nil }
        let failed = results.filter { $0.outcome.isFailure && $0.destination == work.destination && $0.id.suite == work.suite }
        guard !failed.isEmpty else { return nil }
        let names = Set(failed.map(\.id.name))
        var retry = work
        retry.tests = work.tests.filter { names.contains($0) }
        guard !retry.tests.isEmpty else { return nil }
        retry.isWholeSuite = retry.tests.count == work.tests.count && work.isWholeSuite
        retry.retry = work.retry + 1
        retry.estimate = max(failed.reduce(0) { $0 + $1.duration }, 0.001)
        retry.queueItem = nil
        retry.requeues = 0
        retry.lostBeforeStart = nil
        retry.avoidAgent = nil // another job's agents: the queue steers the retry away from this job instead
        return retry
    }
}
