/// A process to start: runners describe commands, transports run them.
public struct Command: Sendable, Hashable, CustomStringConvertible {
    public var executable: String
    public var arguments: [String]
    /// Added to the environment the transport gives the process.
    public var environment: [String: String]

    public init(executable: String, arguments: [String], environment: [String: String] = [:]) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
    }

    /// The command as a person would type it in a POSIX shell: `NAME=value … executable arguments…`, every word
    /// quoted by `ShellQuote` (see ``shellLine(exec:)``).
    public var description: String { shellLine() }

    /// The command as one POSIX shell line: the environment as assignments in front of the command (`NAME=value …`),
    /// then the executable and its arguments, every value quoted by `ShellQuote`. With `exec`, the shell replaces
    /// itself with the process (assignments in front of `exec` are exported to it by every POSIX shell).
    ///
    /// The assignments are the shell's own, not `env`'s: `env A=B /path/with=sign` would take the executable for one
    /// more assignment. The executable is quoted when it holds `=`, so the shell never reads it as one either.
    /// A name that is not `[A-Za-z_][A-Za-z0-9_]*` cannot be assigned: it is quoted, so the shell fails loudly
    /// ("not found") instead of running anything else; the config refuses such names before a run.
    public func shellLine(exec: Bool = false) -> String {
        let env = environment.sorted { $0.key < $1.key }.map { ShellQuote.quote($0.key) + "=" + ShellQuote.quote($0.value) }
        let program = [ShellQuote.commandWord(executable)] + arguments.map(ShellQuote.quote)
        return (env + (exec ? ["exec"] : []) + program).joined(separator: " ")
    }
}
