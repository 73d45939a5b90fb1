/// How a test's repetitions ended in a `--repeat` run: each repetition is one attempt (retries are off while
/// hunting flakes), so its pass rate is the share of repetitions that passed.
public struct RepeatStats: Codable, Sendable, Hashable {
    /// Repetitions that ran (passed, failed, crashed or timed out; skipped and not-run ones aside).
    public var ran: Int
    public var passed: Int
    /// Repetitions that failed, crashed or timed out.
    public var failed: Int
    /// The first repetition that failed, if any.
    public var firstFailure: Int?

    public init(ran: Int, passed: Int, failed: Int, firstFailure: Int? = nil) {
        self.ran = ran
        self.passed = passed
        self.failed = failed
        self.firstFailure = firstFailure
    }

    /// The repetitions' attempts of one test; nil when none carries a repetition (an ordinary run).
    public init?(_ attempts: [Attempt]) {
        let repeated = attempts.filter { $0.repetition != nil }
        guard !repeated.isEmpty else { return nil }
        var ran = 0, passed = 0, failed = 0
        var first: Int?
        for a in repeated {
            switch a.outcome {
            case .passed: ran += 1; passed += 1
            case .failed, .crashed, .timedOut:
                ran += 1
                failed += 1
                first = min(first ?? Int.max, a.repetition ?? Int.max)
            case .flaky, .skipped, .notRun: break
            }
        }
        self.init(ran: ran, passed: passed, failed: failed, firstFailure: first)
    }

    /// Passes per repetition that ran, 0...1.
    public var passRate: Double { ran > 0 ? Double(passed) / Double(ran) : 0 }
    /// Wilson's 95 % interval of the pass rate.
    public var interval: ClosedRange<Double> { FlakeScore.wilson(passed, of: ran) }

    /// `passed 17 of 20 repetitions (85.0 %, 95 % interval 64.0-94.8 %); first failed in repetition 4`.
    public var summary: String {
        let i = interval
        func pct(_ x: Double) -> String { String(format1: x * 100) }
        var text = "passed \(passed) of \(ran) repetition\(ran == 1 ? "" : "s") (\(pct(passRate)) %, 95 % interval "
            + "\(pct(i.lowerBound))-\(pct(i.upperBound)) %)"
        if let firstFailure { text += "; first failed in repetition \(firstFailure)" }
        return text
    }

    /// The outcome of a repeated test: failed (crashed, timed out) when any repetition did, as its worst one;
    /// else passed when one passed; else skipped or not run.
    public static func outcome(_ attempts: [Attempt]) -> Outcome {
        if let worst = attempts.map(\.outcome).filter(\.isFailure).max() { return worst }
        if attempts.contains(where: { $0.outcome == .passed }) { return .passed }
        if attempts.contains(where: { $0.outcome == .skipped }) { return .skipped }
        return .notRun
    }
}

/// A `--repeat` run: how many repetitions, whether it stopped at the first failure, and where that was.
public struct RepeatReport: Codable, Sendable, Hashable {
    /// Repetitions asked for (with `untilFailure`, the most that could run).
    public var repetitions: Int
    public var untilFailure: Bool
    /// The run's seed: each process's `FANOUT_SEED` is derived from it, the repetition and the retry
    /// (``seed(run:repetition:retry:)``).
    public var seed: Int
    /// The first failure (lowest repetition, then test), when some repetition failed.
    public var firstFailure: FirstFailure?

    public init(repetitions: Int, untilFailure: Bool, seed: Int, firstFailure: FirstFailure? = nil) {
        self.repetitions = repetitions
        self.untilFailure = untilFailure
        self.seed = seed
        self.firstFailure = firstFailure
    }

    public struct FirstFailure: Codable, Sendable, Hashable {
        public var test: TestID
        public var destination: String
        public var repetition: Int
        public var agent: String
        public var unit: Int
        public var seed: Int?
        public var outcome: Outcome

        public init(test: TestID, destination: String, repetition: Int, agent: String, unit: Int, seed: Int?,
                    outcome: Outcome) {
            self.test = test
            self.destination = destination
            self.repetition = repetition
            self.agent = agent
            self.unit = unit
            self.seed = seed
            self.outcome = outcome
        }
    }

    /// The earliest failing repetition among the results (then the first test by name): with `untilFailure`, every
    /// repetition before it ran and passed, because repetitions start in order and the run waits for those running.
    public static func firstFailure(in results: [TestResult]) -> FirstFailure? {
        var best: FirstFailure?
        for r in results {
            for a in r.attempts where a.outcome.isFailure {
                guard let rep = a.repetition else { continue }
                if let b = best, (b.repetition, b.test) <= (rep, r.id) { continue }
                best = FirstFailure(test: r.id, destination: r.destination, repetition: rep, agent: a.agent, unit: a.unit,
                                    seed: a.seed, outcome: a.outcome)
            }
        }
        return best
    }

    /// The `FANOUT_SEED` of every process of one repetition (0 outside `--repeat`) and retry: a SplitMix64 step of
    /// the run's seed mixed with both, kept to 31 bits so that every JSON reader and shell reads it exactly. It
    /// depends on nothing the schedule decides (not the unit, slot or agent), so `--seed S` gives every test the
    /// same seed again, however the run is planned; tests that draw from it stay independent by their own names.
    public static func seed(run: Int, repetition: Int, retry: Int) -> Int {
        let mixed = UInt64(truncatingIfNeeded: repetition) &* 0x9E37_79B9_7F4A_7C15
            &+ UInt64(truncatingIfNeeded: retry) &* 0xD1B5_4A32_D192_ED03
        var z = UInt64(truncatingIfNeeded: run) &+ mixed
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Int(z & 0x7FFF_FFFF)
    }
}
