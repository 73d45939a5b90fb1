import FanoutCore

/// What a run has produced so far: every attempt of every test asked for, the units that ended, measurements,
/// start-up overheads, warnings, and the counts the progress line shows. The `Dispatcher` owns one and writes to it
/// as units end; nothing here decides what runs next.
struct RunLedger: Sendable {
    struct ResultKey: Hashable, Sendable {
        var destination: String
        var test: TestID
    }

    private var expected: [ResultKey: (TestID, Framework)]
    /// Test runs the run asks for: every test once, or once per repetition under `--repeat`.
    private var expectedRuns: Int
    /// The hardware class of each destination that runs on a device (its model and OS), whatever agent runs it.
    private let deviceClasses: [String: String]
    /// `--repeat`: the run's seed (each unit's `FANOUT_SEED` derives from it).
    private let runSeed: Int?
    let progress: ProgressHandler

    private var attempts: [ResultKey: [Attempt]] = [:]
    private var overheads: [String: (sum: Double, count: Int)] = [:]
    private var failures = 0
    private var doneCount = 0
    private(set) var finished: [UnitRecord] = []
    private(set) var warnings: [String] = []
    /// Every hook that ran or was due, in the order they ended.
    private(set) var hooks: [HookReport] = []
    private(set) var measurements: [MeasurementRecord] = []
    /// Tests an order check found order-dependent (Dispatcher+OrderChecks.swift).
    var orderDependence: [ResultKey: OrderDependence] = [:]

    init(items: [WorkItem], deviceClasses: [String: String], runSeed: Int?, progress: @escaping ProgressHandler) {
        var expected: [ResultKey: (TestID, Framework)] = [:]
        for item in items {
            for id in item.testIDs { expected[ResultKey(destination: item.destination, test: id)] = (id, item.framework) }
        }
        self.expected = expected
        expectedRuns = items.reduce(0) { $0 + $1.tests.count }
        self.deviceClasses = deviceClasses
        self.runSeed = runSeed
        self.progress = progress
    }

    /// Queue mode: work taken from the build's queue adds its tests to those the run asks for.
    mutating func expect(_ items: [WorkItem]) {
        for item in items {
            for id in item.testIDs where expected.updateValue((id, item.framework), forKey: ResultKey(destination: item.destination, test: id)) == nil {
                expectedRuns += 1
            }
        }
    }

    /// A hook ended: kept for the report, and one that did not pass is a warning.
    mutating func hookEnded(_ hook: HookReport) {
        hooks.append(hook)
        if let warning = hook.warning { warn(warning) }
    }

    mutating func warn(_ text: String) {
        warnings.append(text)
        progress(.warning(text))
    }

    /// A test ended (live, as its line arrived; or when its unit ended, for crashes, time-outs and tests not run).
    mutating func testEnded(_ id: TestID, _ attempt: Attempt, destination: String) {
        if attempt.outcome.isFailure { failures += 1 }
        doneCount += 1
        progress(.testEnded(id, destination: destination, outcome: attempt.outcome, duration: attempt.duration,
                            issues: attempt.issues))
    }

    /// A unit whose twin finished first: kept for the report, its results not counted.
    mutating func superseded(_ unit: UnitRecord) {
        var lost = unit
        lost.superseded = true
        finished.append(lost)
        progress(.unitEnded(unit: unit.unit.id, agent: unit.agent, ending: "stopped: its twin finished first",
                            duration: unit.endedAt - unit.startedAt))
    }

    /// A unit that ended and counts: its attempts, its start-up overhead, its measurements and its problem.
    mutating func record(_ done: UnitRecord, agentHardwareClass: String?, measuredAlone: [TestID: Bool] = [:],
                         contended: Set<TestID> = []) {
        if case .exited = done.ending, !done.result.suiteDurations.isEmpty {
            let start = max(0, (done.endedAt - done.startedAt) - done.result.suiteDurations.values.reduce(0, +))
            overheads[done.agent, default: (0, 0)].sum += start
            overheads[done.agent, default: (0, 0)].count += 1
        }
        finished.append(done)
        let destination = done.unit.destination
        for (id, found) in done.result.attempts.sorted(by: { $0.key < $1.key }) {
            var found = found
            if contended.contains(id) {
                found.contended = "its measurement failed XCTest's deviation rule while other work shared its agent: "
                    + "it ran again alone, and that run is its verdict"
            }
            let attempt = add(found, of: id, in: done)
            // Ended tests were reported live as their lines arrived; crashes and time-outs are known only now.
            if attempt.outcome == .crashed || attempt.outcome == .timedOut {
                testEnded(id, attempt, destination: destination)
            }
        }
        // A contended test's measurement (taken beside other work, failed, run again alone) is not kept: the
        // alone run's is, and baselines and trends see only that one. Its numbers stay in the attempt's issue.
        for m in done.result.measurements where !contended.contains(m.test) {
            // A measurement whose arrival the dispatcher did not see is not claimed to have been taken alone.
            measurements.append(MeasurementRecord(destination: destination, agent: done.agent, measurement: m,
                                                  hardwareClass: deviceClasses[destination] ?? agentHardwareClass,
                                                  measuredAlone: measuredAlone[m.test] ?? false))
        }
        if let problem = done.result.problem { warn("unit \(done.unit.id) on \(done.agent): \(problem)") }
    }

    /// What the unit left behind and will not run again: tests missing from its output (reported now) and tests
    /// abandoned past the re-queue budget.
    mutating func record(_ after: UnitAftermath, of done: UnitRecord) {
        for n in after.missing {
            testEnded(n.test, add(n.attempt, of: n.test, in: done), destination: done.unit.destination)
        }
        for n in after.abandoned { add(n.attempt, of: n.test, in: done) }
    }

    /// Keeps an attempt, stamped with its repetition and seed; returns it as kept.
    @discardableResult
    private mutating func add(_ attempt: Attempt, of id: TestID, in done: UnitRecord) -> Attempt {
        var a = attempt
        a.repetition = done.unit.repetition(of: id)
        a.seed = runSeed.map { done.unit.seed(run: $0) }
        attempts[ResultKey(destination: done.unit.destination, test: id), default: []].append(a)
        return a
    }

    /// Mean start-up cost of a test process measured on this agent (unit time minus the suites' own time).
    func overhead(on agent: String) -> Double? {
        guard let o = overheads[agent], o.count > 0 else { return nil }
        return o.sum / Double(o.count)
    }

    var measuredOverheads: [String: Double] {
        overheads.compactMapValues { $0.count > 0 ? $0.sum / Double($0.count) : nil }
    }

    /// The progress line: tests done of those asked for, failures, and the time left, `work` seconds of estimates
    /// (queued and running) shared by the run's slots.
    func status(work: Double, slots: Int) -> ProgressEvent {
        .status(done: min(doneCount, expectedRuns), total: expectedRuns, failures: failures,
                eta: work / Double(max(1, slots)))
    }

    /// Every test that was asked for, exactly once, with all of its attempts and its verdict (`Verdict.test`). Tests
    /// that never got an attempt are not run, with the reason.
    /// How many attempts of this test the run has made so far.
    func attemptCount(of key: ResultKey) -> Int { attempts[key]?.count ?? 0 }

    func results(reasonForMissing reason: String) -> [TestResult] {
        results(of: Array(expected.keys), reasonForMissing: reason)
    }

    /// The results of these tests (as `results(reasonForMissing:)`), those the run asks for.
    func results(of keys: [ResultKey], reasonForMissing reason: String) -> [TestResult] {
        keys.compactMap { key in expected[key].map { (key, $0) } }.map { key, value -> TestResult in
            var tries = attempts[key] ?? []
            if tries.isEmpty {
                tries = [Attempt(outcome: .notRun, duration: 0, issues: [Issue(kind: .other, message: reason)],
                                 unit: 0, agent: "")]
            }
            // A `--repeat` run's attempts in repetition order.
            let stats = RepeatStats(tries)
            if stats != nil { tries.sort { ($0.repetition ?? 0) < ($1.repetition ?? 0) } }
            var result = TestResult(id: value.0, framework: value.1, destination: key.destination,
                                    outcome: Verdict.test(tries), attempts: tries)
            result.repeats = stats
            result.orderDependence = orderDependence[key]
            return result
        }.sorted { ($0.destination, $0.id) < ($1.destination, $1.id) }
    }

    // MARK: - Order checks

    /// The attempts made so far of this test.
    func attempts(of key: ResultKey) -> [Attempt] { attempts[key] ?? [] }

    /// The tests that ran before `position` in `unit`'s process, in order (from the units that ended).
    func predecessors(inUnit unit: Int, before position: Int) -> [TestID] {
        guard let done = finished.last(where: { $0.unit.id == unit && !$0.superseded }) else { return [] }
        return done.result.attempts.compactMap { id, a in a.position.flatMap { $0 < position ? (id, $0) : nil } }
            .sorted { $0.1 < $1.1 }.map(\.0)
    }

    /// An order check ended: the unit is kept for the report, without results: its tests ran as context (their
    /// results, times and measurements are not the run's). Returns `victim`'s attempt there, stamped as a replay of
    /// `replayOf` (with its repetition and seed), for the dispatcher to judge and, if it finds the test
    /// order-dependent, to `count`.
    mutating func recordCheck(_ done: UnitRecord, victim: TestID, replayOf: Int) -> Attempt? {
        var kept = done
        var victimAttempt = done.result.attempts[victim]
        victimAttempt?.replayOf = replayOf
        victimAttempt?.repetition = done.unit.repetition(of: victim)
        victimAttempt?.seed = runSeed.map { done.unit.seed(run: $0) }
        kept.result.attempts = [:]
        kept.result.leftovers = []
        kept.result.missing = []
        kept.result.measurements = []
        kept.result.suiteDurations = [:]
        kept.result.completeSuites = []
        kept.result.problem = nil
        kept.replayOf = victim
        finished.append(kept)
        return victimAttempt
    }

    /// The failing order check of a test found order-dependent: its last attempt (it decides the failure).
    mutating func count(_ attempt: Attempt, of victim: TestID, destination: String) {
        attempts[ResultKey(destination: destination, test: victim), default: []].append(attempt)
    }
}
