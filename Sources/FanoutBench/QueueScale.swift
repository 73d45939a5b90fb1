import ArgumentParser
import FanoutCore
import FanoutQueue
import Foundation

/// Queue mode's cost at scale: many simulated CI jobs against a real PostgreSQL server (scripts/bench.sh --queue
/// starts a private one). One job seeds the build with `--items` work items (longest first); then `--jobs` jobs, each
/// with its own connection, reserve an item and record one result for it, as fast as they can, until the queue is
/// drained: what the queue itself costs, with no test running. Every item must be done exactly once.
struct QueueScale: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Queue mode at scale: seeding, reservations per second and reservation latency on a real PostgreSQL.")

    @Option(help: "The queue (postgres://USER@HOST:PORT/DATABASE); the password comes from PGPASSWORD or PGPASSFILE.")
    var url: String
    @Option(help: "Work items in the build.")
    var items = 100_000
    @Option(help: "Simulated jobs taking work at once.")
    var jobs = 32
    @Option(help: "Rounds (each a build of its own); figures are medians with their ranges.")
    var `repeat` = 3

    struct Round {
        var seedSeconds: Double
        var wall: Double
        var reserveLatencies: [Double]
        var completeLatencies: [Double]
        var done: Int
        var duplicates: Int
    }

    func run() async throws {
        let location = try QueueLocation(url)
        var rounds: [Round] = []
        for round in 1...max(1, self.repeat) {
            let r = try await one(location, round: round)
            guard r.done == items, r.duplicates == 0 else {
                throw ValidationError("round \(round): \(r.done) of \(items) items done, \(r.duplicates) twice: the queue lost or repeated work")
            }
            rounds.append(r)
            print(String(format: "round %d: seeded %d items in %.2f s; %d jobs drained it in %.2f s (%.0f items/s); reserve p50 %.2f ms, p99 %.2f ms; complete p99 %.2f ms",
                         round, items, r.seedSeconds, jobs, r.wall, Double(items) / r.wall,
                         (Statistics.percentile(r.reserveLatencies, 0.5) ?? 0) * 1000,
                         (Statistics.percentile(r.reserveLatencies, 0.99) ?? 0) * 1000,
                         (Statistics.percentile(r.completeLatencies, 0.99) ?? 0) * 1000))
        }
        func spread(_ f: (Round) -> Double, _ format: String) -> String {
            Spread(rounds.map(f))!.text { String(format: format, $0) }
        }
        print("""

            Queue mode at scale: \(items) items, \(jobs) jobs, \(rounds.count) rounds (median (min–max))
              seeding (one transaction)   \(spread({ $0.seedSeconds }, "%.2f")) s
              drained in                  \(spread({ $0.wall }, "%.2f")) s
              items reserved per second   \(spread({ Double(items) / $0.wall }, "%.0f"))
              reserve latency p50         \(spread({ (Statistics.percentile($0.reserveLatencies, 0.5) ?? 0) * 1000 }, "%.2f")) ms
              reserve latency p99         \(spread({ (Statistics.percentile($0.reserveLatencies, 0.99) ?? 0) * 1000 }, "%.2f")) ms
              complete latency p99        \(spread({ (Statistics.percentile($0.completeLatencies, 0.99) ?? 0) * 1000 }, "%.2f")) ms
            """)
    }

    private func one(_ location: QueueLocation, round: Int) async throws -> Round {
        let build = QueueBuild(id: "bench-\(round)-\(UUID().uuidString.prefix(8))", fingerprint: "bench")
        let seeder = PostgresQueue(location)
        try await seeder.open()
        let plan = (0..<items).map { QueueItem(payload: "Module.Class\($0)", estimate: Double(items - $0)) }
        let seedStart = ContinuousClock.now
        _ = try await seeder.join(build, as: QueueWorker(name: "seeder", session: "seeder"), items: plan, within: 120)
        let seedSeconds = (ContinuousClock.now - seedStart).seconds
        let start = ContinuousClock.now
        let perJob = try await withThrowingTaskGroup(of: ([Double], [Double], [String]).self) { group in
            for job in 0..<jobs {
                group.addTask {
                    let q = PostgresQueue(location)
                    try await q.open()
                    let me = QueueWorker(name: "job-\(job)", session: "job-\(job)-\(round)")
                    _ = try await q.join(build, as: me, items: [], within: 120)
                    var reserve: [Double] = [], complete: [Double] = [], taken: [String] = []
                    while true {
                        let t0 = ContinuousClock.now
                        guard let r = try await q.reserve(build, for: me, lease: 60) else { break }
                        let t1 = ContinuousClock.now
                        let c = try await q.complete(r, of: build, by: me, results: [
                            QueuedResult(test: r.payload + "/test", failed: false, payload: "{}")], retry: nil)
                        complete.append((ContinuousClock.now - t1).seconds)
                        reserve.append((t1 - t0).seconds)
                        if c.accepted { taken.append(r.payload) }
                    }
                    await q.close()
                    return (reserve, complete, taken)
                }
            }
            return try await group.reduce(into: [([Double], [Double], [String])]()) { $0.append($1) }
        }
        let wall = (ContinuousClock.now - start).seconds
        let taken = perJob.flatMap(\.2)
        let state = try await seeder.state(build)
        await seeder.close()
        return Round(seedSeconds: seedSeconds, wall: wall, reserveLatencies: perJob.flatMap(\.0),
                     completeLatencies: perJob.flatMap(\.1), done: state.done, duplicates: taken.count - Set(taken).count)
    }
}
