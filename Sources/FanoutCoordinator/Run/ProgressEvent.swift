import FanoutCore

/// What the coordinator tells its front end while it works. The CLI renders these; a library user may log them.
public enum ProgressEvent: Sendable {
    case phase(String)
    case warning(String)
    /// The plan is made: how many tests and units, the predicted makespan and the lower bound.
    case planned(tests: Int, items: Int, slots: Int, predicted: Double, lowerBound: Double)
    case unitStarted(unit: Int, agent: String, slot: Int, suites: [String], estimate: Double)
    case testEnded(TestID, destination: String, outcome: Outcome, duration: Double, issues: [Issue])
    case unitEnded(unit: Int, agent: String, ending: String, duration: Double)
    /// Tests done so far, total, failures so far, and the estimated seconds left.
    case status(done: Int, total: Int, failures: Int, eta: Double)
}

public typealias ProgressHandler = @Sendable (ProgressEvent) -> Void
