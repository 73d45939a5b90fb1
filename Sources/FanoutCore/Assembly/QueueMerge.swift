import struct Foundation.Date

/// The merged report of a queue-mode build (`fanout queue report`): the queue's results are the truth (each item's
/// results counted once, from the reservation that completed it), the jobs' own reports add what the queue does not
/// keep (agents, units, measurements, timings). Every test the build's items ask for is in it once: a test whose
/// failure was queued again has the attempts of every job that ran it, in the order they were recorded (flaky when a
/// retry passed), and a test no job completed is not run, with the state of its item, and fails the build (exit 3).
public enum QueueMerge {
    /// An item of the build as the queue has it.
    public struct Item: Sendable {
        public var number: Int
        public var work: WorkItem
        /// "queued", "reserved" or "done".
        public var state: String
        public var worker: String?
        /// Set for an item that retries another's failed tests.
        public var retryOf: Int?

        public init(number: Int, work: WorkItem, state: String, worker: String?, retryOf: Int?) {
            self.number = number
            self.work = work
            self.state = state
            self.worker = worker
            self.retryOf = retryOf
        }
    }

    public struct Merged: Sendable {
        public var report: RunReport
        /// Tests of the build that no job completed ("destination Module.Class/test: why").
        public var missing: [String]
    }

    /// `results` in the order the queue recorded them; `jobReports` as the jobs kept them; `unreadable` items the
    /// caller could not decode (each a problem: its tests cannot even be named).
    public static func merge(build: String, items: [Item], results: [TestResult], jobReports: [RunReport],
                             unreadable: [Int] = [], drained: Bool, finishedAt: Date) -> Merged {
        var base = ReportMerger.merge(jobReports.map { report in
            var r = report
            r.results = [] // the queue's results replace the jobs' (which may hold a lapsed item's second run)
            r.classes = []
            return r
        }).report

        struct Key: Hashable { var destination: String, test: TestID }
        var attempts: [Key: [Attempt]] = [:]
        var framework: [Key: Framework] = [:]
        for r in results {
            let key = Key(destination: r.destination, test: r.id)
            attempts[key, default: []] += r.attempts
            framework[key] = r.framework
        }
        // What the build asks for: the tests of its first items (retries ask for them again).
        var asked: [Key: Item] = [:]
        var order: [Key] = []
        for item in items where item.retryOf == nil {
            for test in item.work.testIDs {
                let key = Key(destination: item.work.destination, test: test)
                if asked[key] == nil { order.append(key) }
                asked[key] = item
                framework[key] = framework[key] ?? item.work.framework
            }
        }
        var merged: [TestResult] = []
        var missing: [String] = []
        for key in order + attempts.keys.filter({ asked[$0] == nil }).sorted(by: { ($0.destination, $0.test) < ($1.destination, $1.test) }) {
            var tries = attempts[key] ?? []
            if tries.isEmpty {
                let why = asked[key].map(Self.why) ?? "no job completed it"
                tries = [Attempt(outcome: .notRun, duration: 0, issues: [Issue(kind: .other, message: why)], unit: 0, agent: "")]
                missing.append("\(key.test) on \(key.destination): \(why)")
            }
            merged.append(TestResult(id: key.test, framework: framework[key] ?? .xctest, destination: key.destination,
                                     outcome: Verdict.test(tries), attempts: tries))
        }
        // The quarantine as the jobs applied it (one fanout-quarantine.yml for the build): a muted test's failure does
        // not fail the build, and the tests it kept from running are in the report, skipped.
        var index: [Key: Int] = [:]
        for (i, r) in merged.enumerated() { index[Key(destination: r.destination, test: r.id)] = i }
        for report in jobReports {
            for r in report.results where r.quarantine != nil {
                let key = Key(destination: r.destination, test: r.id)
                if let i = index[key] {
                    merged[i].quarantine = r.quarantine
                } else {
                    index[key] = merged.count
                    merged.append(r)
                }
            }
        }
        merged.sort { ($0.destination, $0.id) < ($1.destination, $1.id) }

        let firstItems = items.filter { $0.retryOf == nil }.map(\.work)
        var classes = RunReportAssembly.classReports(items: firstItems, finished: [], results: merged)
        // A class's time from the jobs that ran it: complete when one job ran it whole, or its pieces all were.
        var timed: [String: [ClassReport]] = [:]
        for report in jobReports {
            for c in report.classes { timed["\(c.destination)|\(c.suite)", default: []].append(c) }
        }
        for i in classes.indices {
            guard let pieces = timed["\(classes[i].destination)|\(classes[i].suite)"], !pieces.isEmpty else { continue }
            let actuals = pieces.compactMap(\.actual)
            classes[i].actual = actuals.count == pieces.count ? actuals.reduce(0, +) : nil
            classes[i].timingIsComplete = pieces.count == 1 && pieces[0].timingIsComplete
            classes[i].agent = pieces.last?.agent
            let cpu = pieces.compactMap(\.cpuSeconds)
            classes[i].cpuSeconds = cpu.count == pieces.count ? cpu.reduce(0, +) : classes[i].cpuSeconds
        }

        var problems: [String] = []
        if !missing.isEmpty {
            problems.append("\(missing.count) test\(missing.count == 1 ? "" : "s") of build \(build) never completed"
                + (drained ? "" : " (the queue was not drained when the report was made)") + ": "
                + missing.prefix(20).joined(separator: "; ") + (missing.count > 20 ? "; and \(missing.count - 20) more" : ""))
        }
        if !unreadable.isEmpty {
            problems.append("queue item\(unreadable.count == 1 ? "" : "s") \(unreadable.map(String.init).joined(separator: ", ")) "
                + "could not be read (written by another Fanout version?): \(unreadable.count == 1 ? "its" : "their") tests are not in this report")
        }
        base.results = merged
        base.classes = classes
        base.runID = "queue-\(build)"
        // A job that was interrupted gave its work back to the others: the build is whole unless tests are missing.
        base.interrupted = false
        base.finishedAt = RunReportAssembly.milliseconds(finishedAt)
        if jobReports.isEmpty { base.startedAt = base.finishedAt }
        base.warnings = problems + base.warnings
        // Never completed, or unreadable: the build cannot vouch for its tests (3), failures or not.
        let code = Verdict.exitCode(base.counts)
        base.exitCode = problems.isEmpty ? code.rawValue : RunExitCode.infrastructure.rawValue
        return Merged(report: base, missing: missing)
    }

    static func why(_ item: Item) -> String {
        switch item.state {
        case "reserved": "never completed: queue item \(item.number) is still held by job \(item.worker ?? "?")"
        case "queued": "never completed: queue item \(item.number) was never taken by a job"
        default: "never completed: queue item \(item.number) is done without a result for it"
        }
    }
}
