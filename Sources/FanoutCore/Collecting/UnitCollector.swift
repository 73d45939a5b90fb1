/// What one unit produced once it ended.
public struct UnitResult: Sendable, Hashable {
    /// One attempt for every test that ran (or was running when the process died).
    public var attempts: [TestID: Attempt]
    /// Tests that did not get to run because the process died or was stopped: they go back to the queue,
    /// one item per class, so nothing asked for is lost.
    public var leftovers: [WorkItem]
    /// Tests the binary was asked for and did not run although it ended normally: re-running cannot help.
    public var missing: [TestID]
    public var measurements: [Measurement]
    /// Time of each class as the framework measured it (suite time), or the sum of its tests' times.
    public var suiteDurations: [SuiteID: Double]
    /// Classes (or pieces of classes) of the unit whose every selected test ended normally: their time may teach
    /// the history.
    public var completeSuites: Set<SuiteID>
    /// Why the unit is an error although it may have reported tests (zero tests selected, odd exit).
    public var problem: String?
    /// Its process ran tests at the same time (Swift Testing runs a suite's tests concurrently): the order of its
    /// attempts (`Attempt.position`) is the order they started, not one after another.
    public var concurrent: Bool = false
}

/// Assembles the events of one running unit into attempts, and decides at the end what happened to every test
/// the unit was asked to run: ended, crashed, timed out, left over for another unit, or missing.
public struct UnitCollector: Sendable {
    /// The unit as it ran, less the tests it handed over to other units (work stealing).
    public private(set) var unit: WorkUnit
    public let agent: String
    /// Tests in the order their process started them (the order `Attempt.position` keeps), and how many run now.
    private var started: [TestID] = []
    private var startedSet: Set<TestID> = []
    private var runningNow = 0
    private var concurrent = false
    private var ended: [TestID: Attempt] = [:]
    private var issues: [TestID: [Issue]] = [:]
    private var measurements: [Measurement] = []
    private var suiteTimes: [SuiteID: Double] = [:]
    private var expected: Set<TestID>
    /// Events about tests this unit was not asked to run (a framework surprise); kept so nothing is silently dropped.
    public private(set) var strays: [TestID] = []

    public init(unit: WorkUnit, agent: String) {
        self.unit = unit
        self.agent = agent
        expected = Set(unit.testIDs)
    }

    /// Tests that other units took over (work stealing): they are no longer this unit's to run or to account for,
    /// whatever this process did with them (it is stopped as it starts the first of them).
    public mutating func release(_ tests: Set<TestID>) {
        guard !tests.isEmpty else { return }
        expected.subtract(tests)
        if let rest = unit.removing(tests) { unit = rest } else { unit.items = [] }
    }

    /// Tests that have ended so far.
    public var endedCount: Int { ended.count }
    public var failedSoFar: Int { ended.values.filter { $0.outcome.isFailure }.count }

    /// Takes one event; returns the attempt when the event ended a test (for live progress).
    @discardableResult
    public mutating func consume(_ event: TestEvent) -> (TestID, Attempt)? {
        switch event {
        case .started(let id):
            if !expected.contains(id) { strays.append(id) }
            if startedSet.insert(id).inserted {
                started.append(id)
                runningNow += 1
                if runningNow > 1 { concurrent = true }
            }
        case .issue(let id, let issue):
            issues[id, default: []].append(issue)
        case .ended(let id, let status, let duration, let reason):
            if startedSet.insert(id).inserted { started.append(id) } else if ended[id] == nil { runningNow -= 1 }
            let again = ended[id] != nil
            var recorded = issues[id] ?? []
            if again {
                // A correction (an xcodebuild result bundle after the console): its verdict is the framework's last
                // word. Corrected to passed, the earlier issues were known ones (a retried or expected failure).
                if status == .passed { recorded = recorded.map { var i = $0; i.isFailure = false; return i } }
            } else if status == .passed {
                // A test that passed by itself did not crash: a crash issue seen before its end (a trap it caught
                // and survived) is no verdict. The framework's own end line and its own issues decide.
                recorded = recorded.filter { $0.kind != .crash }
            }
            var outcome: Outcome = switch status {
            case .passed: .passed
            case .failed: .failed
            case .skipped: .skipped
            }
            // A framework that says "passed" after recording a failing issue is trusted less than the issue.
            if outcome == .passed, recorded.contains(where: \.isFailure) { outcome = .failed }
            let attempt = Attempt(outcome: outcome, duration: max(0, duration), issues: recorded, skipReason: reason,
                                  unit: unit.id, agent: agent)
            // A second end of the same test is a correction (an xcodebuild result bundle read after the console
            // lines): it replaces the attempt, but the test was already reported live once.
            ended[id] = attempt
            return again ? nil : (id, attempt)
        case .measured(let m):
            measurements.append(m)
        case .suiteEnded(let suite, let duration):
            suiteTimes[suite, default: 0] += duration
        }
        return nil
    }

    public mutating func consume(_ events: [TestEvent]) {
        for e in events { consume(e) }
    }

    /// Decides the fate of every expected test. `diagnostics` is the tail of the process's standard error;
    /// `runningFor` says how long each test still running had run when the unit ended (a test Fanout stopped at a
    /// time limit keeps it as its duration: a censored observation, it takes at least that long).
    public func finish(_ ending: UnitEnding, diagnostics: String, runningFor: [TestID: Double] = [:]) -> UnitResult {
        var attempts: [TestID: Attempt] = [:]
        for (id, a) in ended where expected.contains(id) { attempts[id] = a }
        let running = started.filter { expected.contains($0) && ended[$0] == nil }
        var problem: String?

        switch ending {
        case .timedOut(let hit):
            for id in running {
                let message = switch hit.kind {
                case .stalled, .ceiling: "Fanout stopped the test: \(hit.reason)"
                case .unit: "Fanout stopped the test: its unit ran past its time limit (\(ending))"
                }
                attempts[id] = Attempt(
                    outcome: .timedOut, duration: max(0, runningFor[id] ?? (hit.test == id ? hit.elapsed ?? 0 : 0)),
                    issues: (issues[id] ?? []) + [Issue(kind: .timeout, message: message)],
                    unit: unit.id, agent: agent, diagnostics: diagnostics.isEmpty ? nil : diagnostics)
            }
        case .agentLost, .cancelled, .failedToStart:
            break // nothing ran to completion here; the running tests go back with the rest
        case .handedOver:
            break // it was stopped between tests; what it had not reached goes back to the queue
        case .exited, .signaled:
            let what = ending.crashSignal.map { "the test process crashed (\(signalName($0)))" }
                ?? "the test process ended (\(ending)) while the test was running"
            let note = running.count > 1 ? " — \(running.count) tests were running at the time" : ""
            for id in running {
                attempts[id] = Attempt(
                    outcome: .crashed, duration: 0,
                    issues: (issues[id] ?? []) + [Issue(kind: .crash, message: what + note)],
                    unit: unit.id, agent: agent, diagnostics: diagnostics.isEmpty ? nil : diagnostics)
            }
        }

        // Abnormal: the process died or was stopped, so the tests it did not reach may still pass elsewhere.
        // A normal exit with any status (0, 1, 69 for Swift Testing's "nothing matched") means what it did not run,
        // it never will: re-queueing it would loop.
        let abnormal: Bool = switch ending {
        case .exited(let code):
            ending.crashSignal != nil || !running.isEmpty
                // xcodebuild that gives up (exit 65/70: no runner, no simulator, a runner that crashed for good)
                // left tests it never reached: they may still run elsewhere (bounded by the re-queue budget).
                || (unit.framework == .xcodebuild && code != 0 && !expected.isSubset(of: Set(attempts.keys)))
        case .signaled, .timedOut, .agentLost, .cancelled, .failedToStart: true
        // Stopped as it reached the tests it handed over: normal when it had run all the rest.
        case .handedOver: !running.isEmpty || !expected.isSubset(of: Set(attempts.keys))
        }
        // A unit that died before finishing a single test made no progress: its leftovers spend the re-queue
        // budget, so a binary that crashes at start-up cannot cycle forever. One whose agent was lost before its
        // process started any test spends the loss budget instead (`RequeuePolicy`): the agent was gone already.
        let madeProgress = !attempts.isEmpty

        var leftovers: [WorkItem] = []
        var missing: [TestID] = []
        for item in unit.items {
            let notRun = item.tests.filter { name in
                attempts[TestID(suite: item.suite, name: name)] == nil
            }
            guard !notRun.isEmpty else { continue }
            if abnormal {
                var rest = item
                rest.tests = notRun
                rest.isWholeSuite = item.isWholeSuite && notRun.count == item.tests.count
                rest.estimate = item.estimate * Double(notRun.count) / Double(max(1, item.tests.count))
                if case .agentLost = ending, started.isEmpty {
                    rest.lostBeforeStart = (rest.lostBeforeStart ?? 0) + 1
                } else if !madeProgress {
                    rest.requeues += 1
                }
                leftovers.append(rest)
            } else {
                missing.append(contentsOf: notRun.map { TestID(suite: item.suite, name: $0) })
            }
        }

        if case .exited(let code) = ending, !abnormal {
            if attempts.isEmpty {
                problem = "the unit selected zero tests (exit \(code)): the selector matched nothing in the binary"
            } else if !missing.isEmpty {
                problem = "the test binary did not run \(missing.count) of the \(expected.count) tests it was asked for (exit \(code))"
            } else if code != 0, !attempts.values.contains(where: { $0.outcome.isFailure }) {
                problem = "the test process exited \(code) although no test failed (a failure outside any test?)"
            }
        }

        var durations: [SuiteID: Double] = [:]
        var complete: Set<SuiteID> = []
        for item in unit.items {
            let ids = item.testIDs
            let mine = ids.compactMap { attempts[$0] }
            guard !mine.isEmpty else { continue }
            durations[item.suite] = suiteTimes[item.suite] ?? mine.reduce(0) { $0 + $1.duration }
            // Skips are normal endings, but a class that only skipped says nothing about its time.
            let normal = mine.count == ids.count
                && mine.allSatisfy { [.passed, .failed, .skipped].contains($0.outcome) }
                && mine.contains { $0.outcome != .skipped }
            if normal, !abnormal { complete.insert(item.suite) }
        }

        // Where each test stood in its process: what ran before it there is what `fanout bisect` replays.
        for (index, id) in started.enumerated() where attempts[id] != nil {
            attempts[id]?.position = index + 1
        }
        var result = UnitResult(attempts: attempts, leftovers: leftovers, missing: missing, measurements: measurements,
                                suiteDurations: durations, completeSuites: complete, problem: problem)
        result.concurrent = concurrent
        return result
    }
}
