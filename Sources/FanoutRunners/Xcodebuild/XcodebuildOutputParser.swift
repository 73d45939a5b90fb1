import FanoutCore
import Foundation

/// Parses the console of `xcodebuild test-without-building` as it arrives, then the unit's result bundle.
///
/// The console is XCTest's, with macOS names: `Test Case '-[Target.Class method]' started.`, issue lines
/// `File.swift:12: error: -[Target.Class method] : message`, measurements, and, from parallel-testing clones,
/// `Test case 'Class.method()' passed on 'Clone 1 of iPhone 16 - App (123)' (0.002 seconds)`. Each line is put in
/// the Linux form and read by ``XCTestOutputParser``, so both platforms share one reading of XCTest.
///
/// After the process, the unit's command prints the result bundle's test results (JSON) between two marker lines.
/// The bundle is the authority: a test the console never ended (Swift Testing tests, a runner that crashed and was
/// restarted) gets its verdict from it, and where the two disagree, the bundle's verdict replaces the console's.
/// Without a bundle (xcodebuild died, Xcode before 16) the console's verdicts stand. It never traps on any input.
public struct XcodebuildOutputParser: OutputParser {
    private var inner: XCTestOutputParser
    private var lines = LineBuffer()
    private var inBundle = false
    private var bundle: [UInt8] = []
    private var bundleTooLarge = false
    /// The attachment being received (its file name and base64 text), and those received.
    private var attachment: (name: String, base64: [UInt8])?
    private var files: [String: [UInt8]] = [:]
    private var attachmentBytes = 0
    /// What the console said, so the bundle only adds and corrects.
    private var ended: [TestID: TestStatus] = [:]
    private var withIssues: Set<TestID> = []
    private var started: Set<TestID> = []
    /// Tests the console said were skipped without saying why (Xcode prints the reason on a line of its own, which
    /// real logs do not always hold): the bundle's reason is taken.
    private var skippedWithoutReason: Set<TestID> = []
    /// Issues waiting for their test's end line.
    private var held: [TestEvent] = []
    /// The lines for the unit's log since the last `takeLog()`: everything but the result bundle and attachments,
    /// which are summed up in one line each.
    private var logLines: [UInt8] = []
    private var payloadBytes = 0
    private let tests: [TestID]

    /// A result bundle's test results larger than this are not read (the console's verdicts stand).
    static let bundleLimit = 64 << 20
    /// All of a unit's attachments together: beyond this, the rest stay on the agent.
    static let attachmentsLimit = 32 << 20

    /// The attachments `xcresulttool export attachments` wrote, by test, as its `manifest.json` assigns them:
    /// `[{"testIdentifier": "Target/Class/method()", "attachments": [{"exportedFileName": "…",
    /// "suggestedHumanReadableName": "…", "isAssociatedWithFailure": true, …}]}]` (`attachments` may be one object).
    public mutating func takeAttachments() -> [TestID: [AttachedFile]] {
        defer { files = [:] }
        guard let manifest = files["manifest.json"],
              let entries = try? JSONSerialization.jsonObject(with: Data(manifest)) as? [[String: Any]] else { return [:] }
        var byName: [String: TestID] = [:]
        for id in tests {
            for name in [id.name, id.name + "()"] {
                byName["\(id.suite.module)/\(id.suite.name)/\(name)"] = id
                byName["\(id.suite.name)/\(name)"] = id
            }
        }
        var out: [TestID: [AttachedFile]] = [:]
        for entry in entries {
            guard let identifier = entry["testIdentifier"] as? String, let id = byName[identifier] else { continue }
            let list = entry["attachments"] as? [[String: Any]] ?? (entry["attachments"] as? [String: Any]).map { [$0] } ?? []
            for a in list {
                guard let exported = a["exportedFileName"] as? String, let bytes = files[exported] else { continue }
                let readable = a["suggestedHumanReadableName"] as? String ?? exported
                let ext = exported.split(separator: ".").last.map { "." + $0 } ?? ""
                out[id, default: []].append(AttachedFile(name: readable.hasSuffix(ext) ? readable : readable + ext, bytes: bytes))
            }
        }
        return out
    }

    public init(unit: WorkUnit) {
        inner = XCTestOutputParser(unit: unit)
        tests = unit.testIDs
    }

    public mutating func consume(stdout chunk: [UInt8]) -> [TestEvent] {
        var events: [TestEvent] = []
        for line in lines.append(chunk) { handle(line, into: &events) }
        return events
    }

    /// xcodebuild's own diagnostics and a crashing runner's last words: the XCTest parser keeps a trap line for the
    /// test that was running.
    public mutating func consume(stderr chunk: [UInt8]) -> [TestEvent] {
        track(inner.consume(stderr: chunk))
    }

    public mutating func finish() -> [TestEvent] {
        var events: [TestEvent] = []
        if let last = lines.flush() { handle(last, into: &events) }
        events += track(inner.finish())
        release(into: &events, passed: nil)
        guard !bundle.isEmpty, !bundleTooLarge, let results = try? XCResultParser.parse(bundle) else { return events }
        events += reconcile(results)
        return events
    }

    public mutating func takeLog() -> [UInt8]? {
        defer { logLines = [] }
        return logLines
    }

    private mutating func note(_ line: String) {
        logLines += line.utf8
        logLines.append(0x0A)
    }

    private mutating func handle(_ line: String, into events: inout [TestEvent]) {
        if attachment != nil || inBundle { payloadBytes += line.utf8.count + 1 }
        if var current = attachment {
            attachment = nil
            if line == XcodebuildRunner.attachmentEnd {
                note("[fanout: attachment \(current.name): \(payloadBytes) bytes of base64, kept in the report folder]")
                payloadBytes = 0
                if let data = Data(base64Encoded: Data(current.base64), options: .ignoreUnknownCharacters),
                   attachmentBytes + data.count <= Self.attachmentsLimit {
                    attachmentBytes += data.count
                    files[current.name] = Array(data)
                }
            } else if current.base64.count + line.utf8.count <= XcodebuildRunner.attachmentLimit * 2 {
                current.base64 += line.utf8
                attachment = current
            }
            return
        }
        if let rest = line.dropPrefix(XcodebuildRunner.attachmentBegin), rest.hasSuffix(" ===") {
            attachment = (String(rest.dropLast(4)), [])
            payloadBytes = 0
            return
        }
        if line == XcodebuildRunner.bundleBegin {
            inBundle = true
            payloadBytes = 0
            return
        }
        if line == XcodebuildRunner.bundleEnd {
            inBundle = false
            note("[fanout: result bundle's test results, \(payloadBytes) bytes of JSON, read]")
            payloadBytes = 0
            return
        }
        if inBundle {
            guard !bundleTooLarge else { return }
            bundle += line.utf8
            bundle.append(0x0A)
            if bundle.count > Self.bundleLimit {
                bundleTooLarge = true
                bundle = []
            }
            return
        }
        note(line)
        events += track(inner.consume(stdout: Array((Self.linuxForm(line) + "\n").utf8)))
    }

    /// Notes what the console said, and holds each issue until its test's end: a test Xcode says passed after an
    /// issue passed with an expected failure (`XCTExpectFailure`), so its issues are known issues, not failures.
    private mutating func track(_ events: [TestEvent]) -> [TestEvent] {
        var out: [TestEvent] = []
        for event in events {
            switch event {
            case .issue:
                held.append(event)
                continue
            case .ended(let id, let status, _, let reason):
                release(into: &out, passed: status == .passed ? id : nil)
                ended[id] = status
                if status == .skipped, reason == nil { skippedWithoutReason.insert(id) } else { skippedWithoutReason.remove(id) }
            default:
                release(into: &out, passed: nil)
                if case .started(let id) = event { started.insert(id) }
            }
            out.append(event)
        }
        return out
    }

    /// The held issues, as known issues where their test `passed`.
    private mutating func release(into out: inout [TestEvent], passed: TestID?) {
        for case .issue(let id, var issue) in held {
            if id == passed { issue.isFailure = false }
            if issue.isFailure { withIssues.insert(id) }
            out.append(.issue(id, issue))
        }
        held = []
    }

    /// The bundle's verdicts for the unit's tests the console did not end, or ended otherwise, or skipped without a
    /// reason the bundle has.
    private mutating func reconcile(_ results: [XCResultParser.BundleTest]) -> [TestEvent] {
        var byName: [String: XCResultParser.BundleTest] = [:]
        var bySuite: [String: XCResultParser.BundleTest] = [:]
        for r in results {
            // `Target/Class/method()`: XCTest methods appear with `()` in bundles, not in `-only-testing:`.
            byName["\(r.target)/\(r.suite)/\(r.name)"] = r
            // A bundle named otherwise than its target (its product name): `Class/method()` is unique within a unit,
            // which never holds two same-named classes.
            bySuite["\(r.suite)/\(r.name)"] = r
        }
        var events: [TestEvent] = []
        for id in tests {
            let key = "\(id.suite.module)/\(id.suite.name)/\(id.name)"
            let short = "\(id.suite.name)/\(id.name)"
            guard let r = byName[key] ?? byName[key + "()"] ?? bySuite[short] ?? bySuite[short + "()"] else { continue }
            let reasonOnlyInBundle = r.status == .skipped && r.skipReason != nil && skippedWithoutReason.contains(id)
            if ended[id] == r.status, !reasonOnlyInBundle { continue }
            // A start only for a test the console never reported: a clone's line ends a test it never started.
            if !started.contains(id), ended[id] == nil { events.append(.started(id)) }
            if !withIssues.contains(id) {
                for issue in r.issues { events.append(.issue(id, issue)) }
            }
            events.append(.ended(id, r.status, duration: r.duration, reason: r.status == .skipped ? r.skipReason : nil))
            ended[id] = r.status
        }
        return events
    }

    // MARK: - macOS console lines in the Linux form

    /// `Test Case '-[Target.Class method]' passed (0.054 seconds).` → `Test Case 'Class.method' passed (…).`;
    /// `     Executed 4 tests, …` → `\t Executed 4 tests, …`;
    /// `Test case 'Class.method()' passed on 'Clone 1 of …' (0.002 seconds)` → `Test Case 'Class.method' passed
    /// (0.002 seconds).`; `File:12: error: -[Target.Class method] : …` → `File:12: error: Class.method : …`.
    static func linuxForm(_ line: String) -> String {
        if let rest = line.dropPrefix("Test case '") { return parallelForm(rest) ?? line }
        // Xcode 16 indents a suite's summary by five spaces (`     Executed 4 tests, …`), XCTest on Linux by `\t `.
        if line.first == " " {
            let summary = line.drop { $0 == " " }
            if summary.hasPrefix("Executed ") { return "\t " + summary }
        }
        guard let open = line.range(of: "-[") else { return line }
        let tail = line[open.upperBound...]
        guard let space = tail.firstIndex(of: " "), let close = tail[space...].firstIndex(of: "]") else { return line }
        let qualified = tail[..<space]
        let method = tail[tail.index(after: space)..<close]
        guard !method.isEmpty, !method.contains(" "), !qualified.isEmpty else { return line }
        // `Target.Class` for Swift classes; an Objective-C class has no module prefix (`-[LoginTests testX]`).
        let cls = qualified.firstIndex(of: ".").map { qualified[qualified.index(after: $0)...] } ?? qualified
        guard !cls.isEmpty else { return line }
        return String(line[..<open.lowerBound]) + cls + "." + method + line[tail.index(after: close)...]
    }

    /// A parallel-testing clone's line: `Class.method()' passed on 'Clone 1 of X' (0.002 seconds)`.
    private static func parallelForm(_ rest: Substring) -> String? {
        guard let close = rest.range(of: "' ") else { return nil }
        var name = rest[..<close.lowerBound]
        if name.hasSuffix("()") { name = name.dropLast(2) }
        let tail = rest[close.upperBound...]
        for status in ["passed", "failed", "skipped", "started"] where tail.hasPrefix(status) {
            if status == "started" { return "Test Case '\(name)' started." }
            let seconds = tail.range(of: "(", options: .backwards).map { tail[$0.lowerBound...] } ?? "(0 seconds)"
            return "Test Case '\(name)' \(status) \(seconds)."
        }
        return nil
    }
}
