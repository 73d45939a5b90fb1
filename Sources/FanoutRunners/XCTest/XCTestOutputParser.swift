import FanoutCore

/// Parses XCTest's Linux console output (standard output) into events, line by line, as it arrives.
///
/// Console lines name a test as `Class.method`, without its module: the parser maps the class back to the
/// module-qualified suite of its unit (a unit never holds two same-named classes). It never traps on any input.
public struct XCTestOutputParser: OutputParser {
    private var lines = LineBuffer()
    private var errorLines = LineBuffer()
    /// The test that started and has not ended: a runtime trap on standard error belongs to it.
    private var running: TestID?
    /// A runtime trap line seen while this test ran. It becomes an issue only if the test never ends (the process
    /// died in it): a test that traps, catches the trap (precondition-testing libraries do) and then passes, passed.
    private var trap: (test: TestID, issue: Issue)?
    /// A trap line seen while no test was running as far as the parser knew: standard error and standard output are
    /// separate pipes, so the line can arrive before the crashing test's `started` line.
    private var unclaimedTrap: Issue?
    private let suites: [String: SuiteID]
    /// An issue waits here for continuation lines (multi-line assertion messages) until the next known line.
    private var pendingIssue: (TestID, Issue, extraLines: Int)?
    private var pendingSkipReason: [TestID: String] = [:]
    private var suiteAwaitingSummary: SuiteID?

    public init(unit: WorkUnit) {
        var map: [String: SuiteID] = [:]
        for item in unit.items { map[item.suite.name] = item.suite }
        suites = map
    }

    /// For parsing output without a unit (tests, tools): classes map to an empty module name.
    public init(suites: [SuiteID]) {
        var map: [String: SuiteID] = [:]
        for s in suites { map[s.name] = s }
        self.suites = map
    }

    public mutating func consume(stdout chunk: [UInt8]) -> [TestEvent] {
        var events: [TestEvent] = []
        for line in lines.append(chunk) { parse(line, into: &events) }
        return events
    }

    /// Standard error carries the Swift runtime's last words before a trap (`File.swift:19: Fatal error: …`).
    /// They are held, not reported: only if the process dies while the test runs do they become its crash issue (in
    /// `finish()`), so a crash report says why and where. A trap line is no verdict: the test's own end line is.
    public mutating func consume(stderr chunk: [UInt8]) -> [TestEvent] {
        for line in errorLines.append(chunk) {
            guard let issue = Self.runtimeTrap(line) else { continue }
            if let running { trap = (running, issue) } else { unclaimedTrap = issue }
        }
        return []
    }

    static let trapMarkers = [": Fatal error: ", ": Precondition failed: ", ": Assertion failed: ", "Fatal error: "]

    /// `IntegrationTests/WorkerPoolTests.swift:19: Fatal error: deliberate crash` → an issue at that place.
    static func runtimeTrap(_ line: String) -> Issue? {
        for marker in trapMarkers {
            guard let r = line.range(of: marker) else { continue }
            let message = line[r.lowerBound...].drop { $0 == ":" || $0 == " " }
            return Issue(kind: .crash, message: String(message), location: location(line[..<r.lowerBound]))
        }
        return nil
    }

    /// The process ended. A test still running died with it: the trap line seen during it (if any) says why.
    public mutating func finish() -> [TestEvent] {
        var events: [TestEvent] = []
        if let last = lines.flush() { parse(last, into: &events) }
        if let line = errorLines.flush(), let issue = Self.runtimeTrap(line) {
            if let running { trap = (running, issue) } else { unclaimedTrap = issue }
        }
        flushIssue(into: &events)
        if let running, let issue = trap?.test == running ? trap?.issue : unclaimedTrap {
            events.append(.issue(running, issue))
        }
        return events
    }

    // MARK: - Lines

    mutating func parseLine(_ line: Substring, into events: inout [TestEvent]) {
        parse(String(line), into: &events)
    }

    mutating func parse(_ line: String, into events: inout [TestEvent]) {
        if let rest = line.dropPrefix("Test Case '") {
            flushIssue(into: &events)
            parseTestCase(rest, into: &events)
        } else if let rest = line.dropPrefix("Test Suite '") {
            flushIssue(into: &events)
            parseTestSuite(rest)
        } else if line.hasPrefix("\t Executed ") || line.hasPrefix("\tExecuted ") || line.hasPrefix(" Executed ") {
            flushIssue(into: &events)
            parseExecuted(line, into: &events)
        } else if let r = line.range(of: ": Test Case '"), line[r.upperBound...].contains("' measured [") {
            flushIssue(into: &events)
            parseMeasurement(location: line[..<r.lowerBound], rest: line[r.upperBound...], into: &events)
        } else if let r = line.range(of: ": error: "), let issue = issue(location: line[..<r.lowerBound], rest: line[r.upperBound...]) {
            flushIssue(into: &events)
            pendingIssue = (issue.0, issue.1, 0)
        } else if let r = line.range(of: " : Test skipped"), let skip = skip(head: line[..<r.lowerBound], reason: line[r.upperBound...]) {
            flushIssue(into: &events)
            pendingSkipReason[skip.0] = skip.1
        } else if let r = Self.gluedXCTestLine(line) {
            // A test printed without a final newline (`print(…, terminator: "")`, a progress line, a bare "\r"), so
            // XCTest's own line follows its text on the same line. The text is the test's; the rest is XCTest's.
            parse(String(line[r...]), into: &events)
        } else if var pending = pendingIssue, pending.extraLines < 200 {
            // Drop the stored copy first: a shared message would be copied whole on every line (quadratic).
            pendingIssue = nil
            pending.1.message += "\n" + line
            pending.extraLines += 1
            pendingIssue = pending
        }
    }

    private mutating func parseTestCase(_ rest: Substring, into events: inout [TestEvent]) {
        guard let close = rest.range(of: "' ") else { return }
        let name = rest[..<close.lowerBound]
        let tail = rest[close.upperBound...]
        guard let id = testID(name) else { return }
        if tail.hasPrefix("started") {
            running = id
            events.append(.started(id))
            return
        }
        running = nil
        // The test ended by itself: a trap line seen meanwhile was caught and survived (it stays in the unit's log).
        trap = nil
        unclaimedTrap = nil
        let status: TestStatus
        if tail.hasPrefix("passed") { status = .passed }
        else if tail.hasPrefix("failed") { status = .failed }
        else if tail.hasPrefix("skipped") { status = .skipped }
        else { return }
        let duration = tail.between("(", " seconds)").flatMap(Self.seconds) ?? 0
        let reason = pendingSkipReason.removeValue(forKey: id)
        events.append(.ended(id, status, duration: duration, reason: status == .skipped ? reason : nil))
    }

    private mutating func parseTestSuite(_ rest: Substring) {
        guard let close = rest.range(of: "' ") else { return }
        let name = String(rest[..<close.lowerBound])
        let tail = rest[close.upperBound...]
        if tail.hasPrefix("passed") || tail.hasPrefix("failed") {
            suiteAwaitingSummary = suites[name]
        }
    }

    /// `\t Executed 4 tests, with 1 test skipped and 1 failure (0 unexpected) in 0.003 (0.004) seconds`:
    /// the time in parentheses includes the class's set-up and tear-down.
    private mutating func parseExecuted(_ line: String, into events: inout [TestEvent]) {
        defer { suiteAwaitingSummary = nil }
        guard let suite = suiteAwaitingSummary, let inRange = line.range(of: " in ", options: .backwards) else { return }
        let times = line[inRange.upperBound...]
        let total = times.between("(", ")").flatMap(Self.seconds)
            ?? times.split(separator: " ").first.flatMap(Self.seconds)
        if let total { events.append(.suiteEnded(suite, duration: total)) }
    }

    /// `/path/File.swift:7: error: Class.testX : XCTAssertEqual failed: ...`; nil when the line is not one.
    private func issue(location: Substring, rest: Substring) -> (TestID, Issue)? {
        guard let sep = rest.range(of: " : ") else { return nil }
        guard let id = testID(rest[..<sep.lowerBound]) else { return nil }
        let message = String(rest[sep.upperBound...])
        let kind: Issue.Kind
        if message.hasPrefix("Asynchronous wait failed") { kind = .expectationTimeout }
        else if message.hasPrefix("threw error") { kind = .thrown }
        else { kind = .assertion }
        return (id, Issue(kind: kind, message: message, location: Self.location(location)))
    }

    /// `/path/File.swift:8: Class.testX : Test skipped - reason` → the test and its reason; nil when not one.
    private func skip(head: Substring, reason: Substring) -> (TestID, String)? {
        // head is `/path/File.swift:8: Class.testX`
        guard let r = head.range(of: ": ", options: .backwards), let id = testID(head[r.upperBound...]) else { return nil }
        // ` - why` (XCTSkip) or `: required false value but got true - why` (XCTSkipIf/Unless): keep the why.
        var text = reason
        if text.hasPrefix(":"), let dash = text.range(of: " - ") { text = text[dash.upperBound...] }
        if text.hasPrefix(" - ") { text = text.dropFirst(3) }
        return (id, String(text.trimmingSpaces()))
    }

    /// `/path/File.swift:7: Test Case 'C.m' measured [Time, seconds] average: 0.005, relative standard deviation:
    /// 64.786%, values: [0.002025, ...], performanceMetricID:org.swift.X, maxPercentRelativeStandardDeviation:
    /// 10.000%, maxStandardDeviation: 0.100`
    private mutating func parseMeasurement(location: Substring, rest: Substring, into events: inout [TestEvent]) {
        guard let close = rest.range(of: "' measured ["), let id = testID(rest[..<close.lowerBound]) else { return }
        let body = rest[close.upperBound...]
        guard let bracket = body.firstIndex(of: "]") else { return }
        let header = body[..<bracket].split(separator: ",", maxSplits: 1).map { $0.trimmingSpaces() }
        let fields = body[body.index(after: bracket)...]
        let values = fields.between("values: [", "]").map {
            $0.split(separator: ",").compactMap { Double($0.trimmingSpaces()) }
        } ?? []
        let average = fields.between("average: ", ",").flatMap { Double($0) }
            ?? (values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count))
        let rsd = fields.between("relative standard deviation: ", "%").flatMap { Double($0) } ?? 0
        let identifier = fields.between("performanceMetricID:", ",").map(String.init) ?? ""
        let maxRSD = fields.between("maxPercentRelativeStandardDeviation: ", "%").flatMap { Double($0) }
        let maxSD = fields.after("maxStandardDeviation: ").flatMap { Double($0.trimmingSpaces()) }
        events.append(.measured(Measurement(
            test: id, metric: header.first ?? "", unit: header.count > 1 ? header[1] : "",
            identifier: identifier, values: values, average: average, relativeStandardDeviation: rsd,
            maxPercentRelativeStandardDeviation: maxRSD, maxStandardDeviation: maxSD,
            location: Self.location(location))))
    }

    private mutating func flushIssue(into events: inout [TestEvent]) {
        if let (id, issue, _) = pendingIssue {
            events.append(.issue(id, issue))
            pendingIssue = nil
        }
    }

    /// A duration as XCTest prints it. `Double` also reads `nan`, `inf`, `-1` and `1e999` (= inf), which no clock
    /// measures: those are no duration at all.
    static func seconds(_ text: Substring) -> Double? {
        guard let value = Double(text), value.isFinite, value >= 0 else { return nil }
        return value
    }

    // MARK: - Names and places

    /// Where XCTest's own `Test Case '…'` / `Test Suite '…'` line starts inside a line that begins with a test's
    /// unterminated output. Only a line that reads as a whole XCTest line from there counts.
    static func gluedXCTestLine(_ line: String) -> String.Index? {
        for marker in ["Test Case '", "Test Suite '"] {
            var search = line.startIndex..<line.endIndex
            // A few tries per line: a line of test output that repeats the marker must not cost quadratic time.
            for _ in 0..<4 {
                guard let r = line.range(of: marker, range: search) else { break }
                let tail = line[r.upperBound...]
                if r.lowerBound != line.startIndex, let close = tail.range(of: "' "),
                   ["started", "passed", "failed", "skipped"].contains(where: { tail[close.upperBound...].hasPrefix($0) }) {
                    return r.lowerBound
                }
                search = r.upperBound..<line.endIndex
            }
        }
        return nil
    }

    /// `Class.method` → the module-qualified test id (the last dot separates class and method).
    private func testID(_ name: Substring) -> TestID? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let cls = String(name[..<dot])
        let method = String(name[name.index(after: dot)...])
        guard !method.isEmpty else { return nil }
        return TestID(suite: suites[cls] ?? SuiteID(module: "", name: cls), name: method)
    }

    /// `/path/File.swift:12` → a location; `<EXPR>:0` (no real place) → nil.
    static func location(_ text: Substring) -> SourceLocation? {
        guard let colon = text.lastIndex(of: ":"), let line = Int(text[text.index(after: colon)...]) else { return nil }
        let file = String(text[..<colon])
        if file.isEmpty || file == "<EXPR>" || line <= 0 { return nil }
        return SourceLocation(file: file, line: line)
    }
}
