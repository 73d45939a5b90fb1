import FanoutCore
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Seeds the timing history from a JUnit XML file (`swift test --xunit-output`, Fanout's own junit.xml, or another
/// tool's), so the first Fanout run on a fresh CI machine is already planned from real times.
///
/// Each file becomes one ``HistoryRun``: every `<testcase>` a test with one attempt, every class the sum of its
/// tests' times. Names map to the ids discovery gives, so the estimator finds them:
/// - `classname="Module.Class"` (or `Module/Class`) → module `Module`, class `Class`;
/// - Swift Testing (a test name with parentheses): nested suites `Module.Outer.Inner` → `Outer/Inner`, and a
///   function outside any suite (`classname="Module"`) → the suite ``SuiteID/swiftTestingTopLevel``;
/// - a classname without a module cannot match any discovered class: such test cases are left out, with a warning.
///
/// Outcomes: `<failure>` → failed; `<error>` → crashed (`type="crash"`), timed-out (`timeout`), not-run
/// (`not-run`), else failed (an error is a test that ended, with an unexpected error); `<skipped>` → skipped;
/// Surefire's `<flakyFailure>`/`<flakyError>` on a passing case → flaky, and `<rerunFailure>`/`<rerunError>` add the
/// earlier failed attempts. As for recorded runs, only classes whose tests all ended normally teach estimates.
public struct JUnitHistoryReader: Sendable {
    /// Every test case goes to this destination when set; otherwise to the `destination` property of its
    /// `<testsuite>` (Fanout's own junit.xml), else to ``defaultDestination``.
    public var destination: String?
    public var defaultDestination: String
    /// Recorded as the run's Fanout version.
    public var fanoutVersion: String
    /// The run's start when the file has no `timestamp`.
    public var now: Date

    public init(destination: String?, defaultDestination: String, fanoutVersion: String, now: Date = Date()) {
        self.destination = destination
        self.defaultDestination = defaultDestination
        self.fanoutVersion = fanoutVersion
        self.now = now
    }

    /// The run of the JUnit file at `path`, and warnings about test cases left out.
    public func read(from path: String) throws(HistoryFileError) -> (run: HistoryRun, warnings: [String]) {
        try run(from: HistoryExport.readFile(path), path: path)
    }

    public func run(from data: Data, path: String) throws(HistoryFileError) -> (run: HistoryRun, warnings: [String]) {
        let parsed = try Self.parse(data, path: path)
        guard !parsed.cases.isEmpty else {
            throw .notJUnit(path: path, detail: "it holds no <testcase> element")
        }
        var tests: [HistoryRun.TestRun] = []
        var unqualified: [String] = []
        for testCase in parsed.cases {
            let destination = destination ?? testCase.destination ?? defaultDestination
            guard let (id, framework) = Self.testID(classname: testCase.classname,
                                                    name: testCase.name, destination: testCase.destination) else {
                unqualified.append("\(testCase.classname)/\(testCase.name)")
                continue
            }
            tests.append(HistoryRun.TestRun(destination: destination, id: id, framework: framework,
                                            outcome: testCase.outcome, attempts: testCase.attempts))
        }
        guard !tests.isEmpty else {
            throw .notJUnit(path: path, detail: "no test case's classname names its module (like "
                            + "classname=\"MyModuleTests.LoginTests\"), so none could match a discovered class")
        }
        var warnings: [String] = []
        if !unqualified.isEmpty {
            warnings.append("\(path): left out \(unqualified.count) test case(s) whose classname names no module "
                            + "(e.g. \(unqualified[0])): their timings could not match a discovered class")
        }
        let classes = Self.classes(of: tests)
        let seconds = tests.compactMap { $0.attempts.last?.duration }.reduce(0, +)
        let startedAt = parsed.timestamps.min() ?? now
        var destinations: [String] = []
        for test in tests where !destinations.contains(test.destination) { destinations.append(test.destination) }
        let counts = Counts(tests.map(\.outcome))
        return (HistoryRun(
            runID: runID(of: data), startedAt: startedAt, finishedAt: startedAt.addingTimeInterval(seconds),
            fanoutVersion: fanoutVersion, exitCode: counts.failures > 0 ? 1 : 0, interrupted: false,
            destinations: destinations, slots: 1, wall: seconds, counts: counts, classes: classes, tests: tests),
                warnings)
    }

    /// The same file imported for the same destination gets the same id, so importing it again adds nothing.
    func runID(of data: Data) -> String {
        var hash = FNV1a()
        hash.add(data)
        hash.add(Data([0]))
        hash.add(Data((destination ?? "").utf8))
        hash.add(Data([0]))
        hash.add(Data(defaultDestination.utf8))
        return "junit-" + String(hash.value, radix: 16)
    }

    // MARK: - Names

    /// The id discovery gives this test case, and its framework; nil when the classname names no module.
    static func testID(classname: String, name rawName: String, destination: String?) -> (TestID, Framework)? {
        var name = rawName
        // Fanout's junit.xml suffixes names with ` [destination]` when a run had several.
        if let destination, name.hasSuffix(" [\(destination)]") {
            name.removeLast(destination.count + 3)
        }
        guard !name.isEmpty else { return nil }
        let framework: Framework = name.hasSuffix(")") ? .swiftTesting : .xctest
        let separator = classname.firstIndex { $0 == "." || $0 == "/" }
        guard let separator, separator != classname.startIndex else {
            guard framework == .swiftTesting, !classname.isEmpty else { return nil }
            return (TestID(module: classname, suite: SuiteID.swiftTestingTopLevel, name: name), framework)
        }
        let module = String(classname[..<separator])
        var suite = String(classname[classname.index(after: separator)...])
        guard !suite.isEmpty else { return nil }
        if framework == .swiftTesting {
            suite = suite.replacingOccurrences(of: ".", with: "/")
        }
        return (TestID(module: module, suite: suite, name: name), framework)
    }

    // MARK: - Classes

    /// One class per destination and suite, in the order of first appearance, timed by the sum of its tests.
    static func classes(of tests: [HistoryRun.TestRun]) -> [HistoryRun.ClassRun] {
        struct Key: Hashable { var destination: String, suite: SuiteID }
        var order: [Key] = []
        var members: [Key: [HistoryRun.TestRun]] = [:]
        for test in tests {
            let key = Key(destination: test.destination, suite: test.id.suite)
            if members[key] == nil { order.append(key) }
            members[key, default: []].append(test)
        }
        return order.map { key in
            let group = members[key] ?? []
            let outcomes = group.map(\.outcome)
            let ran = group.filter { $0.outcome != .skipped }
            let outcome: Outcome =
                if let worst = outcomes.filter({ [.crashed, .timedOut, .notRun].contains($0) }).max() { worst }
                else if ran.isEmpty { .skipped }
                else if outcomes.contains(.failed) { .failed }
                else if outcomes.contains(.flaky) { .flaky }
                else { .passed }
            let times = ran.map { $0.attempts.last?.duration }
            let complete = [.passed, .failed, .flaky].contains(outcome) && times.allSatisfy { $0 != nil }
            return HistoryRun.ClassRun(
                destination: key.destination, framework: group.first?.framework ?? .xctest, module: key.suite.module,
                suite: key.suite.name, testCount: group.count, estimate: nil, estimateSource: "junit import",
                actual: times.compactMap { $0 }.reduce(0, +), outcome: outcome, timingComplete: complete, agent: nil)
        }
    }

    // MARK: - XML

    struct TestCase {
        var classname: String
        var name: String
        var time: Double?
        var destination: String?
        /// The element that decided the outcome (`failure`, `error`, `skipped`), with its `type`.
        var verdict: (element: String, type: String?)?
        /// Earlier failed attempts: `flakyFailure`... or `rerunFailure`... elements.
        var flakes = 0
        var reruns = 0

        var outcome: Outcome {
            switch verdict?.element {
            case "failure": .failed
            case "error":
                switch verdict?.type {
                case "crash": .crashed
                case "timeout": .timedOut
                case "not-run": .notRun
                default: .failed
                }
            case "skipped": .skipped
            default: flakes > 0 ? .flaky : .passed
            }
        }

        var attempts: [HistoryRun.TestAttempt] {
            guard outcome != .notRun else { return [] }
            let earlier = Array(repeating: HistoryRun.TestAttempt(outcome: .failed, duration: nil, agent: "junit",
                                                                  unit: 0),
                                count: flakes + reruns)
            let last: Outcome = outcome == .flaky ? .passed : outcome
            return earlier + [HistoryRun.TestAttempt(outcome: last, duration: time, agent: "junit", unit: 0)]
        }
    }

    struct Parsed {
        var cases: [TestCase] = []
        var timestamps: [Date] = []
    }

    static func parse(_ data: Data, path: String) throws(HistoryFileError) -> Parsed {
        let parser = XMLParser(data: data)
        let reader = Reader()
        parser.delegate = reader
        parser.shouldResolveExternalEntities = false
        guard parser.parse() else {
            if HistoryExport.firstCharacter(of: data) == "{" {
                throw .notJUnit(path: path, detail: "it is JSON, not XML (history exports are imported without --junit)")
            }
            let code = parser.parserError.map { " (XMLParser error \(($0 as NSError).code))" } ?? ""
            throw .notJUnit(path: path, detail: "not well-formed XML at line \(parser.lineNumber), column "
                            + "\(parser.columnNumber)\(code); it may be truncated")
        }
        // XMLParser on Linux reports success for a document that just stops: an upload or download cut short.
        guard reader.open.isEmpty else {
            throw .notJUnit(path: path, detail: "it was cut short: <\(reader.open.joined(separator: "><"))> never "
                            + "closed")
        }
        guard let root = reader.root else { throw .notJUnit(path: path, detail: "it is empty") }
        guard root == "testsuites" || root == "testsuite" else {
            throw .notJUnit(path: path, detail: "its root element is <\(root)>, not <testsuites> or "
                            + "<testsuite>")
        }
        return reader.parsed
    }

    /// Collects test cases as XMLParser walks the document; only direct children of `<testcase>` decide outcomes.
    private final class Reader: NSObject, XMLParserDelegate {
        var parsed = Parsed()
        var root: String?
        /// The elements open at this point of the document (all closed at its end, if it is whole).
        private(set) var open: [String] = []
        /// The `destination` property of each open `<testsuite>` (nil when it has none).
        private var suiteDestinations: [String?] = []
        private var current: TestCase?

        func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?,
                    qualifiedName: String?, attributes: [String: String] = [:]) {
            if root == nil { root = element }
            let parent = open.last
            open.append(element)
            switch element {
            case "testsuite":
                suiteDestinations.append(suiteDestinations.last ?? nil)
                if let stamp = attributes["timestamp"], let date = ISO8601Timestamp.date(from: stamp) {
                    parsed.timestamps.append(date)
                }
            case "property" where open.dropLast().suffix(2) == ["testsuite", "properties"]:
                if attributes["name"] == "destination", let value = attributes["value"], !value.isEmpty,
                   !suiteDestinations.isEmpty {
                    suiteDestinations[suiteDestinations.count - 1] = value
                }
            case "testcase":
                current = TestCase(classname: attributes["classname"] ?? "", name: attributes["name"] ?? "",
                                   time: attributes["time"].flatMap(Double.init).flatMap { $0.isFinite ? max(0, $0) : nil },
                                   destination: suiteDestinations.last ?? nil)
            default:
                guard parent == "testcase" else { break }
                switch element {
                case "failure", "error", "skipped":
                    if current?.verdict == nil { current?.verdict = (element, attributes["type"]) }
                case "flakyFailure", "flakyError":
                    current?.flakes += 1
                case "rerunFailure", "rerunError":
                    current?.reruns += 1
                default:
                    break
                }
            }
        }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?,
                    qualifiedName: String?) {
            open.removeLast()
            switch element {
            case "testsuite":
                suiteDestinations.removeLast()
            case "testcase":
                if let current { parsed.cases.append(current) }
                current = nil
            default:
                break
            }
        }
    }
}

/// 64-bit FNV-1a: a stable fingerprint of a file's bytes (not a security measure), the same on every machine.
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ data: Data) {
        for byte in data {
            value ^= UInt64(byte)
            value &*= 0x0000_0100_0000_01b3
        }
    }
}
