import FanoutCore

/// Which XCTest classes measure, read from their Swift sources: a class (or an extension of it) whose body calls
/// `measure`, `measureMetrics` or `measure(metrics:options:)` is a performance class, whatever its name. Its tests
/// are then measured alone (README "Performance tests"). A reading of the text, not of the syntax tree: a call in a
/// comment counts too, which costs a class its parallelism, never a measurement its quiet.
public enum MeasureCalls {
    /// The names of the classes in `source` whose bodies (or extensions' bodies) call a measure method.
    public static func measuringClasses(in source: String) -> Set<String> {
        var out: Set<String> = []
        // Each type declaration opens a region that lasts until the next one (nested types are rare in tests).
        var current: String?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            if let name = declaredType(in: line) { current = name }
            if let current, callsMeasure(line) { out.insert(current) }
        }
        return out
    }

    /// `class Name`, `final class Name: XCTestCase`, `extension Name`, `@MainActor final class Name`: the name.
    static func declaredType(in line: Substring) -> String? {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "{" || $0 == ":" || $0 == "<" })
        guard let i = words.firstIndex(where: { $0 == "class" || $0 == "extension" || $0 == "struct" || $0 == "actor"
                                                || $0 == "enum" }),
              words[..<i].allSatisfy({ $0.hasPrefix("@") || modifiers.contains(String($0)) }),
              i + 1 < words.count else { return nil }
        let name = words[i + 1].prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }
        guard let first = name.first, first.isLetter || first == "_" else { return nil }
        // `extension Module.Name`: the class is `Name`.
        return String(name.split(separator: ".").last ?? name)
    }

    private static let modifiers: Set<String> = ["final", "public", "internal", "private", "fileprivate", "open",
                                                 "nonisolated", "indirect"]

    /// A call of `measure { … }`, `measure(metrics:…)`, `self.measure(…)`, `measureMetrics(…)`.
    static func callsMeasure(_ line: Substring) -> Bool {
        var rest = line[...]
        while let r = rest.range(of: "measure") {
            let before = rest[..<r.lowerBound].last
            var after = rest[r.upperBound...]
            if after.hasPrefix("Metrics") { after = after.dropFirst("Metrics".count) }
            let boundary = before.map { !($0.isLetter || $0.isNumber || $0 == "_") } ?? true
            let call = after.drop { $0 == " " }.first.map { $0 == "(" || $0 == "{" } ?? false
            // `func measure(` declares one: not a call.
            let declaration = rest[..<r.lowerBound].hasSuffix("func ")
            if boundary && call && !declaration { return true }
            rest = rest[r.upperBound...]
        }
        return false
    }
}
