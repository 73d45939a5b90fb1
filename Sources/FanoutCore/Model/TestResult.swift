/// One run of one test: which unit, where, how it ended, and what it reported.
public struct Attempt: Hashable, Codable, Sendable {
    public var outcome: Outcome
    public var duration: Double
    public var issues: [Issue]
    public var skipReason: String?
    public var unit: Int
    public var agent: String
    /// The tail of the unit's standard error (the backtrace) when the test crashed or timed out.
    public var diagnostics: String?
    /// Files the test attached (screenshots of a failed UI test), copied back from the agent: paths relative to
    /// the report folder.
    public var attachments: [String]?
    /// CPU seconds its process consumed while this test ran (sampled: a share of the unit's CPU time, so short tests
    /// may show 0); absent when the agent could not measure it.
    public var cpuSeconds: Double?
    /// Under `--repeat`: the repetition this attempt belongs to (1...N), and the `FANOUT_SEED` its process was
    /// given (a test that draws random input from it replays it with `FANOUT_SEED=<seed>`).
    public var repetition: Int?
    public var seed: Int?
    /// Why this attempt is not the test's verdict although it ran: its measurement failed XCTest's deviation rule
    /// while other work shared its agent, and the test ran again alone (README "Performance tests"). Kept as
    /// context; nil for every other attempt.
    public var contended: String?
    /// Its place in its process: the nth test the process started (1-based). The tests of the same unit with a lower
    /// position ran before it in that process (see `UnitReport.concurrent` for Swift Testing); nil when unknown.
    public var position: Int?
    /// An order check (`--retries`): this attempt ran after the same tests that preceded its failing attempt, in
    /// the same order, in a fresh process; their results are not counted. nil for every other attempt.
    public var replayOf: Int?

    public init(outcome: Outcome, duration: Double, issues: [Issue] = [], skipReason: String? = nil, unit: Int,
                agent: String, diagnostics: String? = nil) {
        self.outcome = outcome
        self.duration = duration
        self.issues = issues
        self.skipReason = skipReason
        self.unit = unit
        self.agent = agent
        self.diagnostics = diagnostics
    }
}

/// Everything known about one test on one destination after the run.
public struct TestResult: Hashable, Codable, Sendable {
    public var id: TestID
    public var framework: Framework
    public var destination: String
    public var outcome: Outcome
    public var attempts: [Attempt]
    /// Its flake score on this destination over the recent runs, this one included, when they hold evidence of a
    /// flake (a failure on a build it also passed on); nil otherwise, or when the run kept no history.
    public var flakeScore: FlakeScore?
    /// The quarantine entry in force for it in this run (`mute`: its failure does not fail the run; `skip`: it
    /// did not run); nil when it is not quarantined.
    public var quarantine: QuarantineEntry?
    /// Under `--repeat`: how its repetitions ended, with the pass rate's interval.
    public var repeats: RepeatStats?
    /// `--retries`: it failed after the tests before it in its process, passed without them, and failed again
    /// after them (an order check): order-dependent, not flaky. nil otherwise.
    public var orderDependence: OrderDependence?

    public init(id: TestID, framework: Framework, destination: String, outcome: Outcome, attempts: [Attempt]) {
        self.id = id
        self.framework = framework
        self.destination = destination
        self.outcome = outcome
        self.attempts = attempts
    }

    /// Duration of the attempt that decided the outcome.
    public var duration: Double { attempts.last?.duration ?? 0 }
    /// Every issue of every attempt, in order.
    public var issues: [Issue] { attempts.flatMap(\.issues) }
}
