import FanoutCore
import FanoutReports

/// An error a user can act on: what was wrong and how to fix it, and the exit code it maps to.
public struct FanoutError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var hint: String?
    public var exitCode: RunExitCode
    /// Extra lines shown under the message (the compiler's error lines of a failed build).
    public var details: [String]

    public init(_ message: String, hint: String? = nil, exitCode: RunExitCode = .usage, details: [String] = []) {
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

extension FanoutError {
    /// A report.json that could not be read (`fanout baseline accept --from`, `fanout report …`): a usage error,
    /// saying what to pass instead.
    public init(unreadableReport error: ReportDecodingError) {
        self.init("\(error)", hint: "Give --from the report.json of a `fanout run` (in .fanout/reports/<run-id>/).")
    }
}
