import FanoutCore
import Foundation

/// Swift Testing: lists with `--testing-library swift-testing --list-tests`, selects with anchored `--filter`
/// regexes (its ids include the file name, so an unanchored filter runs more than asked), and reports through its
/// JSON Lines event stream written to standard output (its console goes to standard error).
public struct SwiftTestingRunner: TestRunner {
    public init() {}

    public var framework: Framework { .swiftTesting }

    public func listCommand(binary: String, destination: Destination) -> Command {
        Command(executable: binary, arguments: ["--testing-library", "swift-testing", "--list-tests"])
    }

    /// Lines `Module.Suite/test()` (nested suites: `Module.Outer/Inner/test()`).
    public func parseListing(_ output: String) throws(ListingError) -> [TestSuite] {
        // A test binary without Swift Testing (an older swift-tools-version) is XCTest's main: it ignores
        // `--testing-library` and prints XCTest's own listing under its header (`Listing 111 tests in debug.xctest:`).
        // None of it is a Swift Testing test: the header would become a phantom test, the rest twins of XCTest's.
        if output.split(whereSeparator: \.isNewline).contains(where: SwiftTestingNames.isXCTestListingHeader) { return [] }
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
        // No --event-stream-version: versions 0/1 select the older schema, which lacks `issue.isFailure`.
        args += ["--event-stream-output-path", "/dev/stdout"]
        var env = SwiftRuntime.environment(for: destination)
        env["NO_COLOR"] = env["NO_COLOR"] ?? "1"
        return Command(executable: binary, arguments: args, environment: env)
    }

    /// Anchored regexes: `^Module\.Suite/` for a whole suite, `^Module\.Suite/test\(\)(/|$)` for one test.
    public static func filters(for unit: WorkUnit) -> [String] {
        unit.items.flatMap { item -> [String] in
            if item.isWholeSuite, item.suite.name != SwiftTestingNames.topLevelSuite {
                return ["^\(SwiftTestingNames.regexEscape(item.suite.description))/"]
            }
            return item.testIDs.map { "^\(SwiftTestingNames.regexEscape(SwiftTestingNames.id($0)))(/|$)" }
        }
    }

    public func makeParser(for unit: WorkUnit) -> any OutputParser {
        SwiftTestingEventParser(unit: unit)
    }
}

/// How Swift Testing spells ids: `Module.Suite/Nested/test(a:)/File.swift:12:5` (the location is optional).
enum SwiftTestingNames {
    /// Top-level test functions (outside any suite) get this suite name so they still belong to a class-like unit.
    static let topLevelSuite = SuiteID.swiftTestingTopLevel

    /// The id of a test as Swift Testing spells it, without the source location.
    static func id(_ test: TestID) -> String {
        test.suite.name == topLevelSuite ? "\(test.suite.module).\(test.name)" : "\(test.suite)/\(test.name)"
    }

    /// `Module.Suite/test()`, `Module.Outer/Inner/test()`, or `Module.free()` for a function outside any suite;
    /// a trailing `/File.swift:12:5` (event stream ids, verbose listings) is dropped.
    static func testID(fromListed line: String) -> TestID? {
        var parts = line.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if let last = parts.last, isSourceLocation(last) { parts.removeLast() }
        guard let first = parts.first, let dot = first.firstIndex(of: "."), dot != first.startIndex else { return nil }
        let module = String(first[..<dot])
        let rest = String(first[first.index(after: dot)...])
        guard !rest.isEmpty else { return nil }
        if parts.count == 1 {
            return TestID(module: module, suite: topLevelSuite, name: rest)
        }
        guard let name = parts.last, !name.isEmpty else { return nil }
        let suite = ([rest] + parts.dropFirst().dropLast()).joined(separator: "/")
        return TestID(module: module, suite: suite, name: name)
    }

    /// XCTest's `Listing 111 tests in debug.xctest:` (`1 test` for one).
    static func isXCTestListingHeader(_ line: Substring) -> Bool {
        let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
        return words.count >= 5 && words[0] == "Listing" && Int(words[1]) != nil && (words[2] == "tests" || words[2] == "test")
            && words[3] == "in" && line.hasSuffix(":")
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
