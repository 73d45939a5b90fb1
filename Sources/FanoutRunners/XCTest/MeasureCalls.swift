import FanoutCore

/// Which XCTest classes measure, read from their Swift sources: a class (or an extension of it) whose body calls
/// `measure`, `measureMetrics` or `measure(metrics:options:)` is a performance class, whatever its name. Its tests
/// are then measured alone (README "Performance tests"). A reading of the text, not of the syntax tree: a call in a
/// comment counts too, which costs a class its parallelism, never a measurement its quiet.
public enum MeasureCalls {
    /// What measures in one source file, by class.
    public struct Found: Sendable, Hashable {
        /// Classes whose every measure call lies in a test method (`func test…`): those methods, by class.
        public var tests: [String: Set<String>] = [:]
        /// Classes with a measure call outside any test method (a helper, an override of `measure`): which of their
        /// tests measure cannot be read, so all of them count.
        public var whole: Set<String> = []

        /// Every class that measures, whichever way.
        public var classes: Set<String> { whole.union(tests.keys) }

        public init(tests: [String: Set<String>] = [:], whole: Set<String> = []) {
            self.tests = tests
            self.whole = whole
        }

        /// Both files' findings; a class whole in either is whole.
        public mutating func merge(_ other: Found) {
            whole.formUnion(other.whole)
            for (name, methods) in other.tests { tests[name, default: []].formUnion(methods) }
            for name in whole { tests[name] = nil }
        }
    }

    /// The classes in `source` that call a measure method, and in which test methods. A call belongs to the last
    /// `func` declared before it in its type (nested functions and closures are rare in tests); a call in a function
    /// not named `test…` makes its class whole.
    public static func scan(_ source: String) -> Found {
        var found = Found()
        // Each type declaration opens a region that lasts until the next one (nested types are rare in tests).
        var current: String?
        var function: String?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            if let name = declaredType(in: line) { current = name; function = nil }
            if let name = declaredFunction(in: line) { function = name }
            guard let current, callsMeasure(line) else { continue }
            if let function, function.hasPrefix("test"), !found.whole.contains(current) {
                found.tests[current, default: []].insert(function)
            } else {
                found.whole.insert(current)
                found.tests[current] = nil
            }
        }
        return found
    }

    /// `func name(`, `override func name<T>(`, `@MainActor func name(`: the name.
    static func declaredFunction(in line: Substring) -> String? {
        guard let r = line.range(of: "func ") else { return nil }
        let before = line[..<r.lowerBound]
        guard before.last.map({ $0 == " " || $0 == "\t" }) ?? true,
              before.split(separator: " ").allSatisfy({ $0.hasPrefix("@") || modifiers.contains(String($0)) || $0 == "override"
                                                        || $0 == "static" || $0 == "class" || $0 == "mutating" }) else { return nil }
        let name = line[r.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return name.isEmpty ? nil : String(name)
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
