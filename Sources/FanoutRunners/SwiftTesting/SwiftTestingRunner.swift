import FanoutCore
import Foundation

/// Swift Testing: lists with `--testing-library swift-testing --list-tests`, selects with anchored `--filter`
/// regexes (its ids include the file name, so an unanchored filter runs more than asked), and reports through its
/// JSON Lines event stream written to standard output (its console goes to standard error).
public struct SwiftTestingRunner: TestRunner {
    public init() {}

    public var framework: Framework { .swiftTesting }

    public func listCommand(binary: String) -> Command {
        Command(executable: binary, arguments: ["--testing-library", "swift-testing", "--list-tests"])
    }

    /// Lines `Module.Suite/test()` (nested suites: `Module.Outer/Inner/test()`).
    public func parseListing(_ output: String) throws(ListingError) -> [TestSuite] {
        var suites: [SuiteID: [String]] = [:]
        var order: [SuiteID] = []
        for raw in output.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard let id = SwiftTestingNames.testID(fromListed: line) else { continue }
            if suites[id.suite] == nil { order.append(id.suite) }
            if suites[id.suite]?.contains(id.name) != true { suites[id.suite, default: []].append(id.name) }
        }
        return order.map { TestSuite(id: $0, framework: .swiftTesting, tests: suites[$0] ?? []) }
    }

    public func command(for unit: WorkUnit, binary: String, destination: Destination) throws(RunnerError) -> Command {
        guard unit.framework == .swiftTesting else {
            throw RunnerError("SwiftTestingRunner cannot run a \(unit.framework) unit")
        }
        guard unit.testCount > 0 else { throw RunnerError("unit \(unit.id) holds no test: a unit must select at least one") }
        var args = ["--testing-library", "swift-testing"] + destination.arguments
        for filter in Self.filters(for: unit) { args += ["--filter", filter] }
        args += ["--event-stream-output-path", "/dev/stdout", "--event-stream-version", "0"]
        var env = destination.environment
        env["NO_COLOR"] = env["NO_COLOR"] ?? "1"
        return Command(executable: binary, arguments: args, environment: env)
    }

    /// Anchored regexes: `^Module\.Suite/` for a whole suite, `^Module\.Suite/test\(\)(/|$)` for one test.
    public static func filters(for unit: WorkUnit) -> [String] {
        unit.items.flatMap { item -> [String] in
            let suite = SwiftTestingNames.regexEscape(SwiftTestingNames.idPrefix(item.suite))
            if item.isWholeSuite { return ["^\(suite)/"] }
            return item.tests.map { "^\(suite)/\(SwiftTestingNames.regexEscape($0))(/|$)" }
        }
    }

    public func makeParser(for unit: WorkUnit) -> any OutputParser {
        SwiftTestingEventParser(unit: unit)
    }
}

/// How Swift Testing spells ids: `Module.Suite/Nested/test(a:)/File.swift:12:5` (the location is optional).
enum SwiftTestingNames {
    /// Top-level test functions (outside any suite) get this suite name so they still belong to a class-like unit.
    static let topLevelSuite = "(top level)"

    static func idPrefix(_ suite: SuiteID) -> String {
        suite.name == topLevelSuite ? suite.module : "\(suite.module).\(suite.name)"
    }

    static func testID(fromListed line: String) -> TestID? {
        var parts = line.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if let last = parts.last, isSourceLocation(last) { parts.removeLast() }
        guard parts.count >= 2, let name = parts.last, !name.isEmpty else { return nil }
        let head = parts.dropLast()
        let first = head[head.startIndex]
        guard let dot = first.firstIndex(of: ".") else {
            // `Module/free()`: a function outside any suite.
            guard head.count == 1, !first.isEmpty else { return nil }
            return TestID(module: first, suite: topLevelSuite, name: name)
        }
        let module = String(first[..<dot])
        let suite = ([String(first[first.index(after: dot)...])] + head.dropFirst()).joined(separator: "/")
        return TestID(module: module, suite: suite, name: name)
    }

    /// `File.swift:12:5`
    static func isSourceLocation(_ s: String) -> Bool {
        let pieces = s.split(separator: ":")
        return pieces.count >= 3 && pieces[0].hasSuffix(".swift") && Int(pieces[pieces.count - 1]) != nil
            && Int(pieces[pieces.count - 2]) != nil
    }

    static func regexEscape(_ s: String) -> String {
        var out = ""
        for c in s {
            if "\\^$.|?*+()[]{}".contains(c) { out.append("\\") }
            out.append(c)
        }
        return out
    }
}
