import Foundation

/// Per-test verdicts of a `swift test --xunit-output FILE` run. Swift Testing's go to FILE with `-swift-testing`
/// before its extension (`out.xml` → `out-swift-testing.xml`); XCTest's go to FILE only with `--parallel`: a serial
/// run's XCTest verdicts come from its console lines. Keys are `Module.Suite/name`, as Fanout's report spells a test
/// (``FanoutReportFile/verdicts``).
enum SwiftTestVerdicts {
    /// A test's verdict: `passed`, `failed`, `skipped`.
    struct Case: Sendable, Hashable {
        var verdict: String
        var seconds: Double
    }

    struct Files: Sendable {
        var xctest: [String: Case]
        var swiftTesting: [String: Case]
        var all: [String: Case] { xctest.merging(swiftTesting) { a, _ in a } }
    }

    /// Both files of one run (a missing file adds nothing); `console` (a serial run's standard output) stands in
    /// for the XCTest file when there is none, its classes put in their modules by `modules` (class → module).
    static func read(_ path: String, console: String? = nil, modules: [String: String] = [:]) -> Files {
        func cases(in file: String) -> [String: Case]? {
            (try? String(contentsOfFile: file, encoding: .utf8)).map { parse($0) }
        }
        let xctest = cases(in: path) ?? console.map { xctestConsole($0, modules: modules) } ?? [:]
        return Files(xctest: xctest, swiftTesting: cases(in: swiftTestingPath(path)) ?? [:])
    }

    static func swiftTestingPath(_ path: String) -> String {
        let ext = (path as NSString).pathExtension
        return ext.isEmpty ? path + "-swift-testing" : (path as NSString).deletingPathExtension + "-swift-testing." + ext
    }

    /// `<testcase classname="Module.Class" name="test" time="0.1">` with an optional `<failure`, `<error` or
    /// `<skipped` before its end. Swift Testing nests suites with dots (`Module.Outer.Inner`, Fanout's
    /// `Outer/Inner`), and a function outside any suite has `classname="Module"`: Fanout's `(top level)` suite.
    /// Beware: `swift test --parallel` writes an XCTSkip as a plain (passing) test case.
    static func parse(_ xml: String) -> [String: Case] {
        var out: [String: Case] = [:]
        for chunk in xml.components(separatedBy: "<testcase").dropFirst() {
            guard let tagEnd = chunk.firstIndex(of: ">") else { continue }
            let tag = chunk[..<tagEnd]
            guard let classname = attribute("classname", in: tag), let name = attribute("name", in: tag) else { continue }
            let body = tag.hasSuffix("/") ? "" : chunk[tagEnd...].components(separatedBy: "</testcase>").first ?? ""
            let verdict = body.contains("<failure") || body.contains("<error") ? "failed"
                : body.contains("<skipped") ? "skipped" : "passed"
            let parts = classname.split(separator: ".", maxSplits: 1).map(String.init)
            let suite = parts.count == 2 ? parts[1].replacingOccurrences(of: ".", with: "/") : swiftTestingTopLevel
            out["\(parts[0]).\(suite)/\(name)"] = Case(verdict: verdict, seconds: Double(attribute("time", in: tag) ?? "") ?? 0)
        }
        return out
    }

    /// Fanout's suite name for Swift Testing functions outside any suite (`SuiteID.swiftTestingTopLevel`).
    static let swiftTestingTopLevel = "(top level)"

    /// XCTest's console on Linux: `Test Case 'Class.test' passed (0.003 seconds)` (no module). A test that started
    /// and never ended took the process down with it: `failed`, as a crash fails it.
    static func xctestConsole(_ text: String, modules: [String: String]) -> [String: Case] {
        func key(_ suite: some StringProtocol, _ name: some StringProtocol) -> String {
            "\(modules[String(suite)] ?? "?").\(suite)/\(name)"
        }
        var out: [String: Case] = [:]
        for c in XCTestLog.cases(in: text) {
            out[key(c.suite, c.name)] = Case(verdict: c.outcome == "skipped" ? "skipped" : c.outcome == "passed" ? "passed" : "failed",
                                             seconds: c.seconds)
        }
        for line in text.split(separator: "\n") where line.hasPrefix("Test Case '") && line.contains("' started at ") {
            let id = line.dropFirst("Test Case '".count).prefix { $0 != "'" }
            guard let dot = id.lastIndex(of: ".") else { continue }
            let k = key(id[..<dot], id[id.index(after: dot)...])
            if out[k] == nil { out[k] = Case(verdict: "failed", seconds: 0) }
        }
        return out
    }

    static func attribute(_ name: String, in tag: Substring) -> String? {
        guard let r = tag.range(of: " \(name)=\"") else { return nil }
        let rest = tag[r.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return unescape(String(rest[..<end]))
    }

    static func unescape(_ s: String) -> String {
        guard s.contains("&") else { return s }
        return s.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
