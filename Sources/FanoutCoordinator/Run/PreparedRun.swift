import FanoutAgents
import FanoutCore

/// Everything known before the first unit runs: `fanout plan` and `fanout list` stop here.
public struct PreparedRun: Sendable {
    public var destinations: [DestinationSpec]
    /// The built product of each destination (destinations with the same build setting share one).
    public var products: [String: TestProduct]
    /// What each destination has, after the filters (with `--shard`, the other shards' tests too).
    public var catalogs: [String: Catalog]
    /// What this run runs (with `--shard`, this shard's part).
    public var items: [WorkItem]
    /// With `--shard`: every shard's items, in shard order (what the other CI jobs run).
    public var shards: [[WorkItem]]?
    public var plan: Plan
    /// Every test's stall window and ceiling.
    public var timeLimits: TimeLimitBook
    public var warnings: [String]
    /// What the quarantine file did: muted tests, and results for the tests it kept from running.
    public var quarantine = QuarantineEffect()
    /// `--selective`: each test target's inputs and decision; nil when the run is not selective.
    var selective: SelectivePlan?
    /// What selective testing decided, for `fanout plan --selective` and the report.
    public var selectiveReport: SelectiveReport? { selective?.report }
    /// The run's seed (`--seed`, or drawn for a `--repeat` run): each unit's FANOUT_SEED derives from it; nil when
    /// the tests get none.
    public var seed: Int?
    public var slots: Int
    /// Seconds spent building and discovering.
    public var preparation: Double
    /// The run's phases so far, on the run's clock (``PhaseTimeline``): the checks before the preparation, then its
    /// stages (`selective`, `build`, `discover`, `history`, `estimate`, `plan`, those that ran).
    public var timeline = PhaseTimeline()

    public var testCount: Int { items.reduce(0) { $0 + $1.tests.count } }
    public func spec(_ destination: String) -> DestinationSpec? { destinations.first { $0.name == destination } }
}
