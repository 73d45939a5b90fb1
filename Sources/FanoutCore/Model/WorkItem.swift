/// Where an estimate came from: shown by `fanout plan` so a user can tell history from a guess.
public enum EstimateSource: Hashable, Codable, Sendable, CustomStringConvertible {
    /// A percentile of this class's own recent durations on this destination.
    case history(samples: Int)
    /// Never seen here: its test count times the mean seconds per test on this destination.
    case testCount(secondsPerTest: Double)
    /// No history at all on this destination: its test count times a nominal time per test.
    case noHistory(secondsPerTest: Double)
    /// Never seen on this destination: its time on another destination, scaled by the speed ratio of the two.
    case borrowed(from: String, ratio: Double)
    /// A piece of a class split by methods: method history where known, the class mean per test elsewhere.
    case methods(known: Int, of: Int)
    /// No whole run of the class here (it was killed, split, or cut by stealing), or one of its tests was killed
    /// past the class's estimate: the sum over its tests of their own history (a killed test counts at least the time
    /// it had run: `censored` of them), tests never seen at the mean seconds per test.
    case tests(known: Int, of: Int, censored: Int)

    public var description: String {
        switch self {
        case .history(let n): "history (\(n) run\(n == 1 ? "" : "s"))"
        case .testCount(let s): "test count × \(formatSeconds(s))/test"
        case .noHistory(let s): "no history: test count × \(formatSeconds(s))/test"
        case .borrowed(let d, let r): "borrowed from \(d) × \(String(format2: r))"
        case .methods(let k, let n): "method history (\(k)/\(n))"
        case .tests(let k, let n, let c): "test history (\(k)/\(n)\(c > 0 ? ", \(c) timed out" : ""))"
        }
    }

    /// True when no time was ever measured for this work, here or elsewhere: the estimate only follows test counts.
    public var isGuess: Bool {
        switch self {
        case .noHistory, .testCount: true
        case .methods(let known, _), .tests(let known, _, _): known == 0
        case .history, .borrowed: false
        }
    }
}

/// One schedulable piece of work: a whole class, or some of its tests, on one destination, with its estimate.
public struct WorkItem: Hashable, Codable, Sendable {
    public var suite: SuiteID
    public var framework: Framework
    public var destination: String
    /// The tests to run, in binary order.
    public var tests: [String]
    /// True when `tests` is every test the class had at discovery: the runner may then select the class by name.
    public var isWholeSuite: Bool
    public var estimate: Double
    public var source: EstimateSource
    /// How many times this work went back to the queue after its agent was lost (bounded by the re-queue budget).
    public var requeues: Int
    /// How many times its agent was lost before its process started any test (nil: never): the agent was gone, not
    /// the work's doing, so it spends ``RequeuePolicy/lossBudget`` rather than the re-queue budget. When the agents
    /// behind one bastion are lost at once, work handed to each of them in turn is not given up.
    public var lostBeforeStart: Int?
    /// For a retry of failed tests: which retry (1 = the first re-run), and the agent it should avoid if it can.
    public var retry: Int
    public var avoidAgent: String?
    /// Runs alone on its agent (performance tests): nothing else runs there meanwhile, so nothing distorts it.
    public var exclusive: Bool = false
    /// `not_exclusive`: not a performance class whatever it prints: its measurements neither hold its agent nor
    /// run again alone.
    public var shared: Bool = false
    /// Never cut (`keep_whole`: the class's set-up is expensive): not split by methods, never stolen from.
    public var keepWhole: Bool = false
    /// Cores its class used while it ran, from history (CPU seconds / wall seconds; nil: never measured), and the
    /// peak memory of the processes that ran it: what CPU-aware packing weighs (see `CapacityPolicy`).
    public var cpuShare: Double?
    public var peakMemory: Int64?
    /// Which repetition of a `--repeat` run this is (1...N); nil in an ordinary run. Two repetitions of one class
    /// never share a unit: each runs in a process of its own.
    public var repetition: Int?
    /// `feedback_first`: what a change most likely broke (its target changed, or the class failed recently) starts
    /// before everything else, longest first among themselves. nil: an ordinary item.
    public var startsFirst: Bool?
    /// Queue mode: the number of the item of the build's shared queue this work came from (its leftovers, retries and
    /// stolen parts keep it), so the job knows when everything of that item has its verdict. nil: not from a queue.
    public var queueItem: Int?
    /// `--shuffle`: the process this item was dealt to (`ShuffleDeal`). Items of one batch run together in one unit,
    /// and with nothing else. nil: the scheduler packs it as usual.
    public var batch: Int?

    public init(suite: SuiteID, framework: Framework, destination: String, tests: [String], isWholeSuite: Bool,
                estimate: Double, source: EstimateSource, requeues: Int = 0, retry: Int = 0, avoidAgent: String? = nil) {
        self.suite = suite
        self.framework = framework
        self.destination = destination
        self.tests = tests
        self.isWholeSuite = isWholeSuite
        self.estimate = estimate
        self.source = source
        self.requeues = requeues
        self.retry = retry
        self.avoidAgent = avoidAgent
    }

    public var testIDs: [TestID] { tests.map { TestID(suite: suite, name: $0) } }

    /// Whether its tests may be shared out between processes at test boundaries (work stealing): XCTest only (a
    /// Swift Testing suite runs its tests in parallel inside one process), never keep-whole or exclusive work.
    public var canBeCut: Bool { framework == .xctest && !keepWhole && !exclusive }
}

/// What one test process runs: one or more work items of one framework and destination.
/// Two XCTest classes with the same name from different modules never share a unit (Linux console lines carry no module).
public struct WorkUnit: Hashable, Codable, Sendable, Identifiable {
    public var id: Int
    public var framework: Framework
    public var destination: String
    public var items: [WorkItem]

    public init(id: Int, items: [WorkItem]) {
        precondition(!items.isEmpty, "a unit holds at least one item")
        self.id = id
        self.framework = items[0].framework
        self.destination = items[0].destination
        self.items = items
    }

    public var estimate: Double { items.reduce(0) { $0 + $1.estimate } }
    public var testIDs: [TestID] { items.flatMap(\.testIDs) }

    /// The same unit without these tests (handed over to other units), items' estimates scaled to what is left;
    /// nil when no test is left.
    public func removing(_ tests: Set<TestID>) -> WorkUnit? {
        let kept = items.compactMap { item -> WorkItem? in
            var rest = item
            rest.tests = item.tests.filter { !tests.contains(TestID(suite: item.suite, name: $0)) }
            guard !rest.tests.isEmpty else { return nil }
            if rest.tests.count < item.tests.count {
                rest.isWholeSuite = false
                rest.estimate = item.estimate * Double(rest.tests.count) / Double(max(1, item.tests.count))
            }
            return rest
        }
        return kept.isEmpty ? nil : WorkUnit(id: id, items: kept)
    }
    public var testCount: Int { items.reduce(0) { $0 + $1.tests.count } }

    /// The `FANOUT_SEED` of this unit's process in a run seeded with `run`: its items share a repetition and a retry
    /// (`Scheduler.canShareUnit`).
    public func seed(run: Int) -> Int {
        RepeatReport.seed(run: run, repetition: items[0].repetition ?? 0, retry: items[0].retry)
    }

    /// The repetition (`--repeat`) in which this unit runs `test`; nil in an ordinary run.
    public func repetition(of test: TestID) -> Int? {
        items.first { $0.suite == test.suite && $0.tests.contains(test.name) }?.repetition
    }
}
