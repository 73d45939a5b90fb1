import Foundation

/// Per-test verdicts from the xUnit files `swift test --xunit-output FILE` writes: XCTest's into FILE, Swift
/// Testing's into FILE with `-swift-testing` before its extension (`out.xml` → `out-swift-testing.xml`).
/// Keys are `Module.Suite/name`, as Fanout's report spells a test (``FanoutReportFile/verdicts``).
enum XUnitVerdicts {
    /// A test's verdict: `passed`, `failed`, `skipped`.
    struct Case: Sendable, Hashable {
        var verdict: String
        var seconds: Double
    }

    /// Both files of one `swift test --xunit-output path` run (a missing file adds nothing).
    struct Files: Sendable {
        var xctest: [String: Case]
        var swiftTesting: [String: Case]
        var all: [String: Case] { xctest.merging(swiftTesting) { a, _ in a } }
    }

    static func read(_ path: String) -> Files {
        func cases(in file: String) -> [String: Case] {
            (try? String(contentsOfFile: file, encoding: .utf8)).map { parse($0) } ?? [:]
        }
        return Files(xctest: cases(in: path), swiftTesting: cases(in: swiftTestingPath(path)))
    }

    static func swiftTestingPath(_ path: String) -> String {
        let ext = (path as NSString).pathExtension
        return ext.isEmpty ? path + "-swift-testing" : (path as NSString).deletingPathExtension + "-swift-testing." + ext
    }

    /// `<testcase classname="Module.Class" name="test" time="0.1">` with an optional `<failure`, `<error` or
    /// `<skipped` before its end. Swift Testing nests suites as `Module.Outer/Inner` in `classname`, and a function
    /// outside any suite has `classname="Module"`: it gets Fanout's `(top level)` suite.
    static func parse(_ xml: String) -> [String: Case] {
        var out: [String: Case] = [:]
        for chunk in xml.components(separatedBy: "<testcase").dropFirst() {
            guard let tagEnd = chunk.firstIndex(of: ">") else { continue }
            let tag = chunk[..<tagEnd]
            guard let classname = attribute("classname", in: tag), let name = attribute("name", in: tag) else { continue }
            let selfClosing = tag.hasSuffix("/")
            let body = selfClosing ? "" : chunk[tagEnd...].components(separatedBy: "</testcase>").first ?? ""
            let verdict = body.contains("<failure") || body.contains("<error") ? "failed"
                : body.contains("<skipped") ? "skipped" : "passed"
            let suite = classname.contains(".") ? classname : "\(classname).\(swiftTestingTopLevel)"
            out["\(suite)/\(name)"] = Case(verdict: verdict, seconds: Double(attribute("time", in: tag) ?? "") ?? 0)
        }
        return out
    }

    /// Fanout's suite name for Swift Testing functions outside any suite (`SuiteID.swiftTestingTopLevel`).
    static let swiftTestingTopLevel = "(top level)"

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
