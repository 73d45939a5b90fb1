import FanoutCore
import Foundation

/// Reads `xcrun xcresulttool get test-results tests --format json` (Xcode 16 and later): a tree of `testNodes`
/// (`Test Plan` › `Unit test bundle` / `UI test bundle` › `Test Suite` › `Test Case`), each test case with its
/// `result`, `durationInSeconds` and children: `Failure Message` (`File.swift:12: message`; a skipped test's reason
/// too), `Arguments` (parameterized tests, UI launch-test configurations), `Repetition`, `Device`. `duration` is a
/// display string in the Mac's locale (`0,18s`, `1m 14s`): read only when `durationInSeconds` is absent.
public enum XCResultParser {
    /// One test's verdict in the bundle.
    public struct BundleTest: Sendable, Hashable {
        /// The test target (the suite's module).
        public var target: String
        /// The class or suite; nested Swift Testing suites joined by `/`.
        public var suite: String
        /// The method or function as the bundle names it (`testLogin()`).
        public var name: String
        public var status: TestStatus
        public var duration: Double
        public var issues: [Issue]
        public var skipReason: String?
    }

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { "could not read the result bundle's test results: \(reason)" }
    }

    struct Node: Decodable {
        var name: String?
        var nodeType: String?
        var nodeIdentifier: String?
        var result: String?
        var duration: String?
        var durationInSeconds: Double?
        var children: [Node]?
    }

    struct Root: Decodable {
        var testNodes: [Node]?
    }

    public static func parse(_ bytes: [UInt8]) throws(Failure) -> [BundleTest] {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let start = text.firstIndex(of: "{") else { throw Failure(reason: "no JSON") }
        guard !JSONNesting.exceedsLimit(text[start...]) else { throw Failure(reason: "the JSON nests too deeply") }
        let root: Root
        do {
            root = try JSONDecoder().decode(Root.self, from: Data(text[start...].utf8))
        } catch {
            throw Failure(reason: "not the JSON of `xcresulttool get test-results tests` (\(error))")
        }
        var out: [BundleTest] = []
        for node in root.testNodes ?? [] { collect(node, target: nil, suites: [], into: &out) }
        return out
    }

    private static func collect(_ node: Node, target: String?, suites: [String], into out: inout [BundleTest]) {
        switch node.nodeType {
        case "Unit test bundle", "UI test bundle":
            for child in node.children ?? [] { collect(child, target: node.name, suites: [], into: &out) }
        case "Test Suite":
            let inner = suites + [node.name ?? ""]
            for child in node.children ?? [] { collect(child, target: target, suites: inner, into: &out) }
        case "Test Case":
            guard let target, let result = verdict(node) else { return }
            // Directly under its bundle: a Swift Testing function outside any suite.
            let suites = suites.isEmpty ? [SuiteID.swiftTestingTopLevel] : suites
            // The identifier is `Class/method()` (or `Outer/Inner/func()`); the name alone lacks the suite.
            var name = node.name ?? ""
            if let id = node.nodeIdentifier, let slash = id.lastIndex(of: "/") { name = String(id[id.index(after: slash)...]) }
            guard !name.isEmpty else { return }
            out.append(BundleTest(target: target, suite: suites.joined(separator: "/"), name: name, status: result.status,
                              duration: seconds(node), issues: result.issues, skipReason: result.skipReason))
        default:
            for child in node.children ?? [] { collect(child, target: target, suites: suites, into: &out) }
        }
    }

    /// The test's status and its failure messages (those of its repetitions and argument runs too).
    private static func verdict(_ node: Node) -> (status: TestStatus, issues: [Issue], skipReason: String?)? {
        let status: TestStatus
        switch node.result {
        case "Passed", "Expected Failure": status = .passed
        case "Failed": status = .failed
        case "Skipped": status = .skipped
        default: return nil
        }
        var issues: [Issue] = []
        var skip: String?
        func walk(_ n: Node, depth: Int) {
            guard depth < 8 else { return }
            for child in n.children ?? [] {
                switch child.nodeType {
                case "Failure Message" where status == .skipped:
                    // A skipped test's reason comes as a failure message: `Test skipped - why`.
                    if skip == nil {
                        let text = child.name ?? ""
                        skip = text.range(of: "Test skipped - ").map { String(text[$0.upperBound...]) } ?? text
                    }
                case "Failure Message":
                    // An expected failure's messages are known issues: they do not fail the test.
                    issues.append(issue(child.name ?? "", isFailure: status == .failed))
                default:
                    walk(child, depth: depth + 1)
                }
            }
        }
        walk(node, depth: 0)
        return (status, issues, skip)
    }

    /// `LoginTests.swift:42: XCTAssertEqual failed: ("1") is not equal to ("2")` → an issue at that place.
    static func issue(_ text: String, isFailure: Bool) -> Issue {
        var location: SourceLocation?
        var message = Substring(text)
        if let sep = text.range(of: ": ") {
            let head = text[..<sep.lowerBound]
            if let colon = head.lastIndex(of: ":"), let line = Int(head[head.index(after: colon)...]), line > 0,
               colon != head.startIndex, !head[..<colon].contains(" ") {
                location = SourceLocation(file: String(head[..<colon]), line: line)
                message = text[sep.upperBound...]
            }
        }
        let kind: Issue.Kind = message.hasPrefix("Asynchronous wait failed") ? .expectationTimeout
            : message.hasPrefix("Crash:") ? .crash : message.contains("threw error") ? .thrown : .assertion
        return Issue(kind: kind, message: String(message), location: location, isFailure: isFailure)
    }

    /// The units of a `duration` text, `ms` before `m` and `s`.
    static let durationUnits: [(String, Double)] = [("ms", 0.001), ("h", 3600), ("m", 60), ("s", 1)]

    /// `durationInSeconds`, else `duration` as xcresulttool prints it: `0.0013s`, `2m 5s`, `1h 2m 3s`, `12ms`.
    static func seconds(_ node: Node) -> Double {
        if let d = node.durationInSeconds, d.isFinite, d >= 0 { return d }
        guard let text = node.duration else { return 0 }
        var total = 0.0
        for part in text.replacingOccurrences(of: ",", with: ".").split(separator: " ") {
            guard let (suffix, factor) = durationUnits.first(where: { part.hasSuffix($0.0) }),
                  let value = Double(part.dropLast(suffix.count)), value.isFinite, value >= 0 else { continue }
            total += value * factor
        }
        // `1e308h` is finite, its seconds are not: no clock measures that.
        return total.isFinite ? total : 0
    }
}
