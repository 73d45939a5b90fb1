/// The final outcome of one test in a run (after all of its attempts).
public enum Outcome: String, Codable, Sendable, Hashable, CaseIterable, Comparable {
    case passed
    /// Failed at least once, then passed on a retry. Counted once, as a pass with flakes.
    case flaky
    case skipped
    case failed
    /// The test process died (signal, trap, fatalError) while this test ran.
    case crashed
    /// Fanout stopped the test because its unit ran past its time limit.
    case timedOut = "timed-out"
    /// The test could not be run for an infrastructure reason (agents lost, budget of re-queues spent, interrupted).
    case notRun = "not-run"

    /// Whether the outcome fails the run (exit code 1).
    public var isFailure: Bool {
        switch self {
        case .failed, .crashed, .timedOut: true
        case .passed, .flaky, .skipped, .notRun: false
        }
    }

    private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
    public static func < (lhs: Outcome, rhs: Outcome) -> Bool { lhs.rank < rhs.rank }
}
