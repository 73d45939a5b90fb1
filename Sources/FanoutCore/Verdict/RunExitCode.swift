/// Exit codes of `fanout`, documented in README.md. A finished run's code is decided by `RunReportAssembly.exitCode`.
public enum RunExitCode: Int32, Sendable {
    /// Every test that was asked for passed (or was skipped).
    case success = 0
    /// At least one test failed, crashed or timed out.
    case testFailures = 1
    /// Bad flags, bad config, a package that does not build or a filter that matches nothing: nothing was run.
    case usage = 2
    /// Some tests could not be run (no usable agent, a unit that selected zero tests, work lost past its budget).
    case infrastructure = 3
    /// Interrupted by SIGINT (Ctrl-C).
    case interrupted = 130
    /// Interrupted by SIGTERM.
    case terminated = 143
}
