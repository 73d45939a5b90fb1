import FanoutCore

/// What `fanout run` produced.
public struct FinishedRun: Sendable {
    public var report: RunReport
    /// The report folder and the files written there (empty when writing failed: see the report's warnings).
    public var reportDirectory: String?
    public var files: [String]
    public var exitCode: RunExitCode
    /// Where the run's time went: the report's `timing.phases`, then `reports` (writing the report files).
    public var phases: [PhaseTime] = []
    /// Each report file's rendering and writing (they are rendered at once: these overlap inside `reports`).
    public var reportFiles: [PhaseTime] = []
}
