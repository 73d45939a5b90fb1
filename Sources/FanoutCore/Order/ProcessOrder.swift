/// Where each test ran in its process: its unit and its position there (the nth test the process started). What ran
/// before a test in the same process is what may have left state behind for it: `fanout bisect` replays it, and an
/// order check (`OrderCheckPolicy`) runs a failed test again after it.
public struct ProcessOrder: Sendable, Hashable {
    /// One attempt of one test, placed in its process.
    public struct Entry: Sendable, Hashable {
        public var test: TestID
        public var framework: Framework
        public var destination: String
        public var unit: Int
        /// 1-based; nil when the run did not keep order data.
        public var position: Int?
        public var outcome: Outcome
        /// The message of its first failing issue, if any.
        public var failure: String?
        /// Seconds it took, and the FANOUT_SEED its process had (a replay gives it the same).
        public var duration: Double?
        public var seed: Int?

        public init(test: TestID, framework: Framework, destination: String, unit: Int, position: Int?,
                    outcome: Outcome, failure: String? = nil, duration: Double? = nil, seed: Int? = nil) {
            self.duration = duration
            self.seed = seed
            self.test = test
            self.framework = framework
            self.destination = destination
            self.unit = unit
            self.position = position
            self.outcome = outcome
            self.failure = failure
        }
    }

    public var entries: [Entry]
    /// Units whose process ran tests at the same time (Swift Testing).
    public var concurrentUnits: Set<Int>

    public init(entries: [Entry], concurrentUnits: Set<Int> = []) {
        self.entries = entries
        self.concurrentUnits = concurrentUnits
    }

    /// The order of a run's report: every attempt of every result (order checks left out: their predecessors'
    /// results are not part of the report).
    public init(report: RunReport) {
        var entries: [Entry] = []
        for result in report.results {
            for attempt in result.attempts where attempt.replayOf == nil {
                entries.append(Entry(test: result.id, framework: result.framework, destination: result.destination,
                                     unit: attempt.unit, position: attempt.position, outcome: attempt.outcome,
                                     failure: attempt.issues.first(where: \.isFailure)?.message,
                                     duration: attempt.duration, seed: attempt.seed))
            }
        }
        self.init(entries: entries, concurrentUnits: Set(report.units.filter { $0.concurrent == true }.map(\.id)))
    }

    /// The tests that ran before `test` in `unit`'s process on `destination`, in the order they started.
    public func predecessors(of test: TestID, unit: Int, destination: String) -> [TestID] {
        guard let mine = entries.first(where: { $0.test == test && $0.unit == unit && $0.destination == destination }),
              let position = mine.position else { return [] }
        return entries.filter { $0.unit == unit && $0.destination == destination && $0.test != test }
            .compactMap { e in e.position.flatMap { $0 < position ? (e.test, $0) : nil } }
            .sorted { $0.1 < $1.1 }.map(\.0)
    }

    /// The tests whose name `text` names: `Module.Class/test`, `Class/test`, `Class.test` (XCTest's form), or a bare
    /// test name when only one test has it. Sorted, distinct.
    public func tests(named text: String) -> [TestID] {
        let all = Set(entries.map(\.test))
        let exact = all.filter { $0.description == text }
        if !exact.isEmpty { return exact.sorted() }
        return all.filter { id in
            "\(id.suite.name)/\(id.name)" == text || "\(id.suite.name).\(id.name)" == text
                || "\(id.suite).\(id.name)" == text || id.name == text
        }.sorted()
    }

    /// What `fanout bisect` replays for `test`: its first failing attempt (on `destination` when given) and the
    /// tests that ran before it in that process.
    public func replay(of text: String, destination: String? = nil, run: String) throws(OrderError) -> Replay {
        let named = tests(named: text)
        guard !named.isEmpty else {
            let near = Set(entries.map(\.test)).filter { $0.description.lowercased().contains(text.lowercased()) }
                .sorted().prefix(3).map(\.description)
            throw OrderError("run \(run) has no test named \(text)",
                             hint: near.isEmpty ? "Name it as the report does: Module.Class/test."
                                 : "Did you mean \(near.joined(separator: ", "))?")
        }
        guard named.count == 1, let test = named.first else {
            throw OrderError("\(text) names \(named.count) tests of run \(run): \(named.prefix(4).map(\.description).joined(separator: ", "))",
                             hint: "Name one as Module.Class/test.")
        }
        let mine = entries.filter { $0.test == test && (destination == nil || $0.destination == destination) }
        guard !mine.isEmpty else {
            throw OrderError("\(test) did not run on \(destination ?? "any destination") in run \(run)",
                             hint: "Its destinations there: \(Set(entries.filter { $0.test == test }.map(\.destination)).sorted().joined(separator: ", ")).")
        }
        guard let failing = mine.first(where: { $0.outcome.isFailure }) else {
            throw OrderError("\(test) did not fail in run \(run) (\(mine.map(\.outcome.rawValue).joined(separator: ", "))): there is no failure to bisect",
                             hint: "Bisect a test that failed in the run; `fanout report` or report.json lists them.")
        }
        guard let position = failing.position else {
            throw OrderError("run \(run) holds no order data for \(test): it was recorded before Fanout kept the order of tests in their process",
                             hint: "Run the suite again (`fanout run`), then bisect the failure of that run.")
        }
        let process = entries.filter { $0.unit == failing.unit && $0.destination == failing.destination }
        let positions = process.compactMap(\.position)
        guard Set(positions).count == positions.count else {
            throw OrderError("run \(run)'s order data for unit \(failing.unit) is ambiguous: several processes of it share that "
                                + "number (a queue-mode build merges its jobs' units)",
                             hint: "Bisect from the report of the job that ran it: fanout bisect '\(test)' --report <job's report.json>.")
        }
        let before = predecessors(of: test, unit: failing.unit, destination: failing.destination)
        let beforeSet = Set(before)
        var replay = Replay(test: test, framework: failing.framework, destination: failing.destination, unit: failing.unit,
                            position: position, predecessors: before, outcome: failing.outcome, failure: failing.failure,
                            concurrent: concurrentUnits.contains(failing.unit))
        replay.seconds = process.filter { beforeSet.contains($0.test) || $0.test == test }.reduce(0) { $0 + ($1.duration ?? 0) }
        replay.seed = failing.seed
        return replay
    }
}

/// A failing test and the tests that ran before it in its process, in their order.
public struct Replay: Sendable, Hashable, Codable {
    public var test: TestID
    public var framework: Framework
    public var destination: String
    public var unit: Int
    public var position: Int
    public var predecessors: [TestID]
    /// How it ended there, and its first failure message.
    public var outcome: Outcome
    public var failure: String?
    /// Its process ran tests at the same time (Swift Testing): "before" is the order they started.
    public var concurrent: Bool
    /// Seconds the predecessors and the test took in the run (what a step of the replay should take), and the
    /// FANOUT_SEED of the failing process (nil: it had none).
    public var seconds: Double = 0
    public var seed: Int?

    public init(test: TestID, framework: Framework, destination: String, unit: Int, position: Int,
                predecessors: [TestID], outcome: Outcome, failure: String?, concurrent: Bool) {
        self.test = test
        self.framework = framework
        self.destination = destination
        self.unit = unit
        self.position = position
        self.predecessors = predecessors
        self.outcome = outcome
        self.failure = failure
        self.concurrent = concurrent
    }
}

/// Bad input to an order replay: what was wrong and how to fix it.
public struct OrderError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var hint: String

    public init(_ message: String, hint: String) {
        self.message = message
        self.hint = hint
    }

    public var description: String { "\(message)\n  hint: \(hint)" }
}

/// A test found order-dependent in a run (`--retries`): it failed in its process, passed when run again without
/// the tests before it, and failed again after them, in their order, in a fresh process. Not flaky: its failure
/// depends on what ran before it, which leaks state to it.
public struct OrderDependence: Sendable, Hashable, Codable {
    /// The unit whose process it failed in, and the tests that ran before it there, in order: the suspects.
    public var unit: Int
    public var suspects: [TestID]
    /// The order check that failed again after them; nil when a `--repeat` hunt found it (`OrderHunt`).
    public var checkUnit: Int?
    /// The polluters the run's own bisection named (nil: not narrowed down; see `search`), in their order.
    public var polluters: [TestID]?
    /// How the narrowing ended (`found`, `out-of-budget`, …) and what it says; nil when none was tried (one
    /// suspect is the polluter by itself, or bisection was off).
    public var search: String?

    public init(unit: Int, suspects: [TestID], checkUnit: Int?, polluters: [TestID]? = nil, search: String? = nil) {
        self.unit = unit
        self.suspects = suspects
        self.checkUnit = checkUnit
        self.polluters = polluters
        self.search = search
    }

    /// The polluters when known, else the suspects.
    public var blamed: [TestID] { polluters ?? suspects }

    /// One line for a person: what it fails after.
    public var summary: String {
        if let polluters, !polluters.isEmpty {
            return "order-dependent: fails after \(polluters.map(\.description).joined(separator: " + ")) ran before it in its process"
        }
        let shown = suspects.suffix(3).map(\.description).joined(separator: ", ")
        return "order-dependent: fails after the \(suspects.count) test\(suspects.count == 1 ? "" : "s") that ran before it in its process (unit \(unit)"
            + (suspects.count > 3 ? ", the last: \(shown))" : ": \(shown))")
            + (search.map { "; bisection: \($0)" } ?? "")
    }
}

extension WorkItem {
    /// The items that run these tests in one process, one per class in the order its first test comes (a replay:
    /// XCTest runs them in the binary's order, which a subset of one process keeps). Never cut, never stolen from.
    public static func replaying(_ tests: [TestID], framework: Framework, destination: String) -> [WorkItem] {
        var items: [WorkItem] = []
        for id in tests {
            if let i = items.firstIndex(where: { $0.suite == id.suite }) {
                if !items[i].tests.contains(id.name) { items[i].tests.append(id.name) }
            } else {
                var item = WorkItem(suite: id.suite, framework: framework, destination: destination, tests: [id.name],
                                    isWholeSuite: false, estimate: 0.01, source: .history(samples: 0))
                item.keepWhole = true
                items.append(item)
            }
        }
        return items
    }
}
