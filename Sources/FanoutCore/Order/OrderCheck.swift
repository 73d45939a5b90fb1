/// An order check (`--retries`): a test that failed after other tests in its process and passed on its retry runs
/// once more after exactly those tests, in their order, in a fresh process (the classifying check). Failing again
/// there, and passing once more alone (a test that fails most of the time by chance would otherwise look
/// order-dependent), makes it order-dependent; anything else leaves it flaky. A bisection step is a check too, whose
/// attempt answers its search. The rules are here, on plain values; the Coordinator's dispatcher runs the checks.
public struct OrderCheck: Sendable, Hashable {
    public var victim: TestID
    public var destination: String
    public var framework: Framework
    /// The unit it failed in, how it ended there, and the tests that ran before it there, in order.
    public var failedIn: Int
    public var failedAs: Outcome
    public var suspects: [TestID]
    public var stage = Stage.afterPredecessors
    /// The alone stage: the failing attempt of the check after the predecessors, counted once it is confirmed.
    public var failedAgain: Attempt?

    public enum Stage: Sendable, Hashable {
        /// The classifying check: after the suspects, in their order.
        case afterPredecessors
        /// It failed there: once more alone, to tell order from chance.
        case alone
        /// A bisection step (its attempt is the search's).
        case step
    }

    public init(victim: TestID, destination: String, framework: Framework, failedIn: Int, failedAs: Outcome,
                suspects: [TestID]) {
        self.victim = victim
        self.destination = destination
        self.framework = framework
        self.failedIn = failedIn
        self.failedAs = failedAs
        self.suspects = suspects
    }

    /// The failure that earns a test an order check, if any: it passed now, on a retry, in `unit`, and earlier
    /// failed in another unit after other tests (position > 1), in an attempt that was not itself a replay. Its
    /// latest such failure. (Measured work and tests already checked get none: the caller knows those.)
    public static func failure(toCheck attempts: [Attempt], passedIn unit: Int) -> Attempt? {
        attempts.last { $0.outcome.isFailure && $0.replayOf == nil && $0.unit != unit && ($0.position ?? 0) > 1 }
    }

    /// What a check's attempt (nil: the test did not run) means, by its stage.
    public enum Next: Sendable, Hashable {
        /// It failed as in the run after its predecessors: once more alone (this check, at that stage).
        case runAlone(OrderCheck)
        /// It failed after its predecessors and passed alone: order-dependent; `counted` is the failing attempt
        /// the result keeps.
        case orderDependent(counted: Attempt)
        /// Not order-dependent, or no verdict on its order: why, for the person watching.
        case notOrderDependent(String)
        /// A bisection step: its attempt answers the search.
        case answer
    }

    /// The next stage after this check's unit (`unit`) ended with `attempt` (`ending`: how the unit ended, for the
    /// message when the test did not run).
    public func next(after attempt: Attempt?, unit: Int, ending: String) -> Next {
        switch stage {
        case .step:
            return .answer
        case .afterPredecessors:
            guard let attempt, attempt.outcome == failedAs else {
                let how = attempt.map { "it \($0.outcome.rawValue)" } ?? "it did not run (\(ending))"
                return .notOrderDependent("order check of \(victim): \(how) after the tests that preceded its failure: "
                    + (attempt?.outcome == .passed ? "flaky, not order-dependent" : "no verdict on its order"))
            }
            var alone = self
            alone.stage = .alone
            alone.failedAgain = attempt
            alone.failedAgain?.unit = unit
            return .runAlone(alone)
        case .alone:
            guard attempt?.outcome == .passed, let failedAgain else {
                return .notOrderDependent("order check of \(victim): it failed again after the tests that preceded it, "
                    + "but \(attempt.map { "\($0.outcome.rawValue)" } ?? "did not run") alone too: flaky, not order-dependent")
            }
            return .orderDependent(counted: failedAgain)
        }
    }
}
