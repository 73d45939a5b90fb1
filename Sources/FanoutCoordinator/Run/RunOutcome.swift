import FanoutCore
import FanoutReports

/// What `fanout run` produced.
public struct RunOutcome: Sendable {
    public var report: RunReport
    /// The report folder and the files written there (empty when writing failed: see the report's warnings).
    public var reportDirectory: String?
    public var files: [String]
    public var exitCode: RunExitCode
}

extension RunOutcome {
    /// The console summary of the report (counts, every failure with its place, slowest classes, timing).
    public func summary(color: Bool) -> String {
        ConsoleSummary(color: color).render(report)
    }
}
