/// Exit codes of `fanout`, documented in README.md.
public enum ExitCode: Int32, Sendable {
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

/// An error a user can act on: what was wrong and how to fix it, and the exit code it maps to.
public struct FanoutError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var hint: String?
    public var exitCode: ExitCode
    /// Extra lines shown under the message (the compiler's error lines of a failed build).
    public var details: [String]

    public init(_ message: String, hint: String? = nil, exitCode: ExitCode = .usage, details: [String] = []) {
        self.message = message
        self.hint = hint
        self.exitCode = exitCode
        self.details = details
    }

    public var description: String {
        var text = message
        for line in details { text += "\n  " + line }
        if let hint { text += "\n" + hint }
        return text
    }
}
