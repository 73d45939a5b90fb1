import FanoutCore
import FanoutHistory
import FanoutQueue
import FanoutReports
import Foundation

/// `fanout queue report`: waits until a queue-mode build is drained (or a deadline passes), then writes the build's
/// merged report (`QueueMerge`) in every format and records it in a timing history, for the next build's plan.
public struct QueueReportStep: Sendable {
    public var url: String
    public var build: String
    /// Seconds to wait for the build to appear, be drained and its jobs to send their reports, in all.
    public var wait: Double
    /// Where the report goes.
    public var directory: String
    /// The history the merged report is recorded in (nil: not recorded).
    public var historyPath: String?
    /// Seconds a job that has not left counts as alive since it was last seen (two of its leases).
    public var alive: Double = 60
    /// How often the queue is asked.
    public var poll: Double = 1

    public init(url: String, build: String, wait: Double, directory: String, historyPath: String?) {
        self.url = url
        self.build = build
        self.wait = wait
        self.directory = directory
        self.historyPath = historyPath
    }

    public struct Written: Sendable {
        public var report: RunReport
        public var missing: [String]
        public var files: [String]
        public var exitCode: Int32
    }

    public func run(progress: @escaping @Sendable (String) -> Void) async throws(FanoutError) -> Written {
        let location: QueueLocation
        do {
            location = try QueueLocation(url)
        } catch {
            throw FanoutError("\(error)", hint: "Give --queue (or queue: url in fanout.yml) as postgres://USER@HOST:PORT/DATABASE.")
        }
        let out = URL(fileURLWithPath: directory, isDirectory: true)
        try Coordinator.checkWritable(out)
        let queue = PostgresQueue(location) { progress("warning: \($0)") }
        do {
            let merged = try await gather(queue, progress: progress)
            await queue.close()
            return try write(merged, to: out, progress: progress)
        } catch {
            await queue.close()
            throw FanoutError("\(error)", exitCode: .infrastructure)
        }
    }

    private func gather(_ queue: PostgresQueue, progress: @escaping @Sendable (String) -> Void) async throws(QueueError) -> QueueMerge.Merged {
        let deadline = ContinuousClock.now + .seconds(wait)
        try await queue.open()
        // The build appears once a job joined it (the report step may start first).
        var found: QueueBuild?
        while found == nil {
            do throws(QueueError) {
                found = try await queue.lookup(build)
            } catch .unknownBuild(let id) where ContinuousClock.now < deadline {
                _ = id
                try? await Task.sleep(for: .seconds(poll))
            }
        }
        guard let b = found else { throw QueueError.unknownBuild(build) }
        // Drained, then the jobs still alive send their reports as they end.
        var said = ContinuousClock.now - .seconds(60)
        var state = try await queue.state(b)
        while !state.drained, ContinuousClock.now < deadline {
            if ContinuousClock.now - said >= .seconds(10) {
                progress("waiting for build \(build): \(state.done) of \(state.total) items done, \(state.reserved) running, \(state.queued) queued")
                said = .now
            }
            try? await Task.sleep(for: .seconds(poll))
            state = try await queue.state(b)
        }
        if state.drained {
            while ContinuousClock.now < deadline, !(try await queue.liveJobs(b, seenWithin: alive)).isEmpty {
                try? await Task.sleep(for: .seconds(poll))
            }
        } else {
            progress("build \(build) is not drained after \(Int(wait)) s: \(state.reserved) items running, \(state.queued) queued")
        }

        let decoder = JSONConventions.decoder()
        var items: [QueueMerge.Item] = []
        var unreadable: [Int] = []
        for i in try await queue.items(b) {
            guard let work = try? decoder.decode(WorkItem.self, from: Data(i.payload.utf8)) else {
                unreadable.append(i.item)
                continue
            }
            items.append(QueueMerge.Item(number: i.item, work: work, state: i.state, worker: i.worker, retryOf: i.retryOf))
        }
        let results = try await queue.results(b).compactMap { try? decoder.decode(TestResult.self, from: Data($0.payload.utf8)) }
        let reports = try await queue.reports(b).compactMap { try? decoder.decode(RunReport.self, from: Data($0.report.utf8)) }
        return QueueMerge.merge(build: build, items: items, results: results, jobReports: reports, unreadable: unreadable,
                                drained: state.drained, finishedAt: Date())
    }

    private func write(_ merged: QueueMerge.Merged, to out: URL, progress: @escaping @Sendable (String) -> Void) throws(FanoutError) -> Written {
        var report = merged.report
        if let historyPath {
            do {
                let (store, notes) = try HistoryStore.open(at: historyPath)
                report.warnings += notes
                try store.record(report)
            } catch {
                report.warnings.append("the merged report was not recorded in the timing history \(historyPath): \(error)")
                progress("warning: the merged report was not recorded in the timing history \(historyPath): \(error)")
            }
        }
        do {
            let files = try ReportWriter().write(report, to: out)
            if let problem = JobSummary.publish(from: files, environment: ProcessInfo.processInfo.environment) {
                progress("warning: \(problem)")
            }
            return Written(report: report, missing: merged.missing, files: files.map(\.path), exitCode: report.exitCode)
        } catch {
            throw FanoutError("the merged report could not be written: \(error)", hint: "Choose another folder with --out.",
                              exitCode: .infrastructure)
        }
    }
}
