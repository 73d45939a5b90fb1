import FanoutCore
import FanoutQueue
import Foundation

/// Queue mode's side of a run: joins the CI build's shared queue (seeding it, when this job is the first, with its own
/// plan, longest first), reserves an item whenever a slot waits with nothing queued here, renews the leases of what
/// it holds, completes each item once every test of it has its verdict here, and closes the dispatcher's feed once
/// the queue is drained. Items held by other jobs keep it waiting: if such a job dies, its leases lapse and this job
/// takes the items over, so nothing a dead job held is lost.
struct QueueFeed: Sendable {
    let job: QueueJob
    let queue: PostgresQueue
    let build: QueueBuild
    let worker: QueueWorker
    let role: QueueRole
    let progress: ProgressHandler

    /// How often the feed looks at the dispatcher and the queue.
    static let interval = Duration.milliseconds(200)

    /// Connects and joins the build, offering `items` (the job's plan in the order it would run it).
    static func join(_ job: QueueJob, items: [WorkItem], progress: @escaping ProgressHandler) async throws(FanoutError) -> QueueFeed {
        let location: QueueLocation
        do {
            location = try QueueLocation(job.url)
        } catch {
            throw FanoutError("\(error)", hint: "Give --queue (or queue: url in fanout.yml) as postgres://USER@HOST:PORT/DATABASE.")
        }
        let queue = PostgresQueue(location) { progress(.warning($0)) }
        let build = QueueBuild(id: job.build, fingerprint: fingerprint(items), expiresAfter: job.expiresAfter)
        let worker = QueueWorker(name: job.worker, session: "\(job.worker)-\(UUID().uuidString.prefix(8).lowercased())")
        let encoder = JSONConventions.encoder()
        encoder.outputFormatting = .sortedKeys
        var offered: [QueueItem] = []
        for item in items {
            guard let data = try? encoder.encode(item) else { continue }
            offered.append(QueueItem(payload: String(decoding: data, as: UTF8.self), estimate: item.estimate))
        }
        do {
            try await queue.open()
            let role = try await queue.join(build, as: worker, items: offered, within: job.seedWait)
            switch role {
            case .seeder: progress(.phase("queue: this job (\(job.worker)) seeded build \(job.build) with \(items.count) items"))
            case .follower(let seeder): progress(.phase("queue: joined build \(job.build) as \(job.worker), seeded by \(seeder)"))
            }
            return QueueFeed(job: job, queue: queue, build: build, worker: worker, role: role, progress: progress)
        } catch {
            throw FanoutError("\(error)", exitCode: .infrastructure)
        }
    }

    /// The build's fingerprint: every test of the plan on its destination, so jobs of one build that would run
    /// different tests (another commit, another filter) are refused rather than mixed.
    static func fingerprint(_ items: [WorkItem]) -> String {
        let lines = items.flatMap { item in item.testIDs.map { "\(item.destination) \($0)" } }.sorted()
        return String(SHA256.hex(lines.joined(separator: "\n")).prefix(16))
    }

    /// Feeds `dispatcher` until the queue is drained (or the run stops); completes what settles on the way.
    func run(_ dispatcher: Dispatcher) async {
        var held: [Int: Reservation] = [:]
        var lastRenewal = ContinuousClock.now
        let decoder = JSONConventions.decoder()
        do throws(QueueError) {
            while !Task.isCancelled {
                if await dispatcher.stopped { break }
                try await complete(await dispatcher.takeSettled(), held: &held)
                if !held.isEmpty, ContinuousClock.now - lastRenewal >= .seconds(job.lease / 3) {
                    let still = try await queue.renew(build, for: worker, lease: job.lease)
                    lastRenewal = .now
                    for lost in held.keys.sorted() where !still.contains(lost) {
                        held[lost] = nil // another job runs it now: nothing of it is this job's to complete
                        progress(.warning("queue item \(lost): its lease lapsed and another job holds it now; what runs here of it will not count in the build's results"))
                    }
                }
                let want = await dispatcher.demand
                var got = 0
                while got < want, let r = try await queue.reserve(build, for: worker, lease: job.lease) {
                    guard var item = try? decoder.decode(WorkItem.self, from: Data(r.payload.utf8)) else {
                        progress(.warning("queue item \(r.item) is not work this Fanout can read: skipped"))
                        continue
                    }
                    item.queueItem = r.item
                    held[r.item] = r
                    got += 1
                    await dispatcher.offer([item])
                }
                if want > 0, got == 0, held.isEmpty {
                    // Nothing to reserve: done when nothing is queued or held anywhere; else another job holds work
                    // that comes back here if its lease lapses.
                    if try await queue.state(build).drained { break }
                }
                try? await Task.sleep(for: Self.interval)
            }
        } catch {
            progress(.warning("queue mode stopped taking work: \(error). What this job holds is left to the other jobs "
                + "once its leases lapse."))
        }
        // Stopped (interrupted, or the queue failed): what this job holds and has not finished goes back to the queue
        // at once, for the other jobs, rather than after its leases lapse. One attempt: a stopping run does not wait.
        if !held.isEmpty {
            try? await queue.release(Array(held.values), of: build, by: worker)
            progress(.phase("queue: gave \(held.count) unfinished item\(held.count == 1 ? "" : "s") back to build \(job.build)"))
        }
        await dispatcher.closeFeed()
        try? await queue.leave(build, as: worker)
        await queue.close()
    }

    /// Records the results of settled items (exactly once: a reservation that lost its item is refused and said so).
    private func complete(_ settled: [(item: Int, results: [TestResult])], held: inout [Int: Reservation]) async throws(QueueError) {
        let encoder = JSONConventions.encoder()
        encoder.outputFormatting = .sortedKeys
        for (number, results) in settled {
            guard let r = held.removeValue(forKey: number) else { continue }
            let queued = results.map { result in
                QueuedResult(test: "\(result.destination) \(result.id)", failed: result.outcome.isFailure,
                             payload: (try? encoder.encode(result)).map { String(decoding: $0, as: UTF8.self) } ?? "{}")
            }
            let c = try await queue.complete(r, of: build, by: worker, results: queued, retry: nil)
            if !c.accepted {
                progress(.warning("queue item \(number): its lease lapsed and another job took it; its results here do not count in the build's results"))
            }
        }
    }
}
