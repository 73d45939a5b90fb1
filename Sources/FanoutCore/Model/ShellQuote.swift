/// The one function that quotes a value for a POSIX shell. Every value that reaches a shell (local or remote)
/// goes through it: test names can hold spaces, quotes, `$()`, backticks, semicolons and newlines.
public enum ShellQuote {
    /// Single-quotes `value` unless it consists only of characters no shell treats specially.
    public static func quote(_ value: String) -> String {
        if !value.isEmpty, value.unicodeScalars.allSatisfy(isPlain) { return value }
        return "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
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
