import FanoutCore

/// What `fanout run` produced.
public struct FinishedRun: Sendable {
    public var report: RunReport
    /// The report folder and the files written there (empty when writing failed: see the report's warnings).
    public var reportDirectory: String?
    public var files: [String]
    public var exitCode: RunExitCode
}
