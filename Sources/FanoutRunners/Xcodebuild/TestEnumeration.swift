import FanoutCore
import Foundation

/// Reads the test list of `xcodebuild test-without-building -enumerate-tests -test-enumeration-style flat
/// -test-enumeration-format json` (Xcode 16 and later): test identifiers `Target/Class/method` (Swift Testing:
/// `Target/Suite/func()`, nested suites `Target/Outer/Inner/func()`) under `enabledTests`; tests under
/// `disabledTests` (off in the test plan) are not listed: `{"errors":[],"values":[{"disabledTests":[],
/// "enabledTests":[{"identifier":"Feature10Tests/Feature10Test100Tests/testExample1"}],"testPlan":"ManyTests"}]}`.
/// One identifier a line (a list made by hand) is read too.
public enum TestEnumeration {
    public static func parse(_ output: String) throws(ListingError) -> [TestSuite] {
        var identifiers: [String] = []
        if let start = output.firstIndex(where: { $0 == "{" || $0 == "[" }) {
            guard !JSONNesting.exceedsLimit(output[start...]) else {
                throw ListingError(framework: .xcodebuild, reason: "the test list nests deeper than a test list")
            }
            let json: Any
            do {
                json = try JSONSerialization.jsonObject(with: Data(output[start...].utf8))
            } catch {
                throw ListingError(framework: .xcodebuild, reason: "the test list is not the expected JSON (\(error.localizedDescription))")
            }
            collect(json, enabled: true, into: &identifiers)
            // `{"errors": ["…"], "values": []}`: xcodebuild could not list (no such destination, a broken product).
            if identifiers.isEmpty, let errors = (json as? [String: Any])?["errors"] as? [Any], !errors.isEmpty {
                throw ListingError(framework: .xcodebuild, reason: "xcodebuild reported: "
                    + errors.prefix(5).map { "\($0)" }.joined(separator: "; "))
            }
        } else {
            identifiers = output.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        }
        var suites: [SuiteID: [String]] = [:]
        var order: [SuiteID] = []
        // An identifier names one test of one suite: a test listed twice is the same identifier twice. A set, not a
        // search of the suite's tests, which made a class of many tests quadratic.
        var seen: Set<String> = []
        for identifier in identifiers {
            let parts = identifier.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 2, parts.allSatisfy({ !$0.isEmpty }), seen.insert(identifier).inserted else { continue }
            // `Target/func()`: a Swift Testing function outside any suite belongs to the target's top-level suite.
            let suite = parts.count == 2 ? SuiteID.swiftTestingTopLevel : parts[1..<(parts.count - 1)].joined(separator: "/")
            if parts.count == 2, !parts[1].hasSuffix(")") { continue }
            let id = SuiteID(module: parts[0], name: suite)
            if suites[id] == nil { order.append(id) }
            suites[id, default: []].append(parts[parts.count - 1])
        }
        return order.map { TestSuite(id: $0, framework: .xcodebuild, tests: suites[$0] ?? []) }
    }

    /// Every `identifier` string, leaving out the subtrees of `disabledTests`.
    private static func collect(_ value: Any, enabled: Bool, into out: inout [String]) {
        if let map = value as? [String: Any] {
            for (key, child) in map.sorted(by: { $0.key < $1.key }) {
                if key == "disabledTests" { continue }
                if key == "identifier", enabled, let s = child as? String { out.append(s) } else { collect(child, enabled: enabled, into: &out) }
            }
        } else if let list = value as? [Any] {
            for child in list { collect(child, enabled: enabled, into: &out) }
        }
    }
}
