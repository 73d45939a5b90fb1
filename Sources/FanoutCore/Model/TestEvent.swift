/// How one test ended, as the framework reported it.
public enum TestStatus: String, Codable, Sendable, Hashable {
    case passed, failed, skipped
}

/// What a runner's parser makes of a test process's output, in the order it happened.
public enum TestEvent: Hashable, Codable, Sendable {
    case started(TestID)
    /// An issue recorded while the test ran (several may precede its end).
    case issue(TestID, Issue)
    /// The test ended. `reason` carries the skip reason.
    case ended(TestID, TestStatus, duration: Double, reason: String?)
    case measured(Measurement)
    /// A class or suite ended; `duration` includes its set-up and tear-down, not the process start-up.
    case suiteEnded(SuiteID, duration: Double)
}
