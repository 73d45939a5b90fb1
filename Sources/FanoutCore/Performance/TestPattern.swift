/// Selects tests by their id, `Module.Class/testName`: an exact id, or a regular expression searched anywhere in
/// the id (`PerformanceTests/`, `^DemoKitTests\.`), as `--filter` searches `Module.Class`.
public struct TestPattern: Sendable, Hashable, CustomStringConvertible {
    public let pattern: String

    /// A pattern that is not a valid regular expression still matches an id that equals it (check `isValid`).
    public init(_ pattern: String) {
        self.pattern = pattern
    }

    /// Whether `pattern` compiles as a regular expression.
    public var isValid: Bool { regex != nil }

    /// Whether `test`'s id is `pattern` exactly.
    public func matchesExactly(_ test: TestID) -> Bool { test.description == pattern }

    /// Whether `test`'s id is `pattern`, or contains a match of it as a regular expression.
    public func matches(_ test: TestID) -> Bool {
        let id = test.description
        if id == pattern { return true }
        guard let regex else { return false }
        return (try? regex.firstMatch(in: id)) != nil
    }

    public var description: String { pattern }

    private var regex: Regex<AnyRegexOutput>? { try? Regex(pattern) }
}
