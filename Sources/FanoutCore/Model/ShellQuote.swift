/// The one function that quotes a value for a POSIX shell. Every value that reaches a shell (local or remote)
/// goes through it: test names can hold spaces, quotes, `$()`, backticks, semicolons and newlines.
public enum ShellQuote {
    /// Single-quotes `value` unless it consists only of characters no shell treats specially.
    public static func quote(_ value: String) -> String {
        if !value.isEmpty, value.unicodeScalars.allSatisfy(isPlain) { return value }
        return "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// Quotes the word a shell runs as a command. Like ``quote(_:)``, and also quoted when it holds `=`: an unquoted
    /// `NAME=…` word in command position is an assignment to the shell, not the program to run.
    public static func commandWord(_ value: String) -> String {
        value.contains("=") && !value.isEmpty && value.unicodeScalars.allSatisfy(isPlain) ? "'" + value + "'" : quote(value)
    }

    /// Whether `name` can be an environment variable's name in a POSIX shell: `[A-Za-z_][A-Za-z0-9_]*`.
    public static func isVariableName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || ("a"..."z").contains(first) || ("A"..."Z").contains(first)
        else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }

    /// Quotes every word and joins them with spaces.
    public static func join(_ words: [String]) -> String {
        words.map(quote).joined(separator: " ")
    }

    private static func isPlain(_ s: Unicode.Scalar) -> Bool {
        switch s {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".", "/", ",", ":", "@", "%", "+", "=": true
        default: false
        }
    }
}
