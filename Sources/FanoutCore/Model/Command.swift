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

    /// The command as a person would type it in a POSIX shell (every word quoted by `ShellQuote`).
    public var description: String {
        let env = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\(ShellQuote.quote($0.value))" }
        return (env + [ShellQuote.join([executable] + arguments)]).joined(separator: " ")
    }
}
