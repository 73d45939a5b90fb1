import FanoutCore
import Foundation

/// Parses Swift Testing's JSON Lines event stream (`--event-stream-output-path`) into events.
///
/// Every record is complete, even after a crash. But the stream goes to stdout, which the tests' own output shares,
/// and a record's newline is written apart from it: a test's `print` can land right after a record (or before one)
/// on the same line (seen on FlyingFox 0.27.1: `{…"testEnded"…}timeout(message: …`). So a record is taken from
/// wherever it stands in a line (``record(in:)``). `testEnded` carries no verdict: a test failed when an issue that
/// counts as a failure was recorded for it. Lines without a record (console noise, garbage) are ignored.
public struct SwiftTestingEventParser: OutputParser {
    private var lines = LineBuffer()
    private var kinds: [String: String] = [:]
    private var startedAt: [String: Double] = [:]
    private var failed: Set<String> = []
    private let decoder = JSONDecoder()

    public init(unit: WorkUnit) {}

    public init() {}

    public mutating func consume(stdout chunk: [UInt8]) -> [TestEvent] {
        var events: [TestEvent] = []
        for line in lines.append(chunk) { parse(line, into: &events) }
        return events
    }

    public mutating func consume(stderr chunk: [UInt8]) -> [TestEvent] { [] }

    public mutating func finish() -> [TestEvent] {
        var events: [TestEvent] = []
        if let last = lines.flush() { parse(last, into: &events) }
        return events
    }

    // MARK: - Records

    struct Record: Decodable {
        var kind: String?
        var payload: Payload?
    }

    struct Payload: Decodable {
        // test declarations
        var id: String?
        var kind: String?
        var name: String?
        // events
        var testID: String?
        var instant: Instant?
        var issue: IssueRecord?
        var messages: [Message]?
    }

    struct Instant: Decodable {
        var absolute: Double?
        var since1970: Double?
    }

    struct IssueRecord: Decodable {
        var isKnown: Bool?
        var isFailure: Bool?
        var sourceLocation: Location?
    }

    struct Location: Decodable {
        var filePath: String?
        var fileID: String?
        var line: Int?
    }

    struct Message: Decodable {
        var symbol: String?
        var text: String?
    }

    /// The object that opens at `start` (a `{`), to the brace that closes it outside strings; nil when it is cut.
    static func object(in line: String, from start: String.Index) -> Substring? {
        let bytes = line.utf8[start...]
        var depth = 0, inString = false, escaped = false
        for i in bytes.indices {
            let b = bytes[i]
            if inString {
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch b {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: "}"):
                depth -= 1
                if depth == 0 { return line[start...i] }
            default: break
            }
        }
        return nil
    }

    /// The record of a line: the whole line when it is one (keys in any order); else the first object in it that
    /// decodes as a record, whatever output stands before or after it. Linear in the line: an object that is no
    /// record is skipped whole, and only a few objects are tried (garbage can hold many braces).
    func record(in line: String) -> Record? {
        if line.hasPrefix("{"), !JSONNesting.exceedsLimit(line[...]),
           let whole = try? decoder.decode(Record.self, from: Data(line.utf8)), whole.payload != nil {
            return whole
        }
        var from = line.startIndex
        for _ in 0..<Self.objectsTriedPerLine {
            guard let open = line[from...].range(of: #"{""#)?.lowerBound else { return nil }
            guard let text = Self.object(in: line, from: open) else { from = line.index(after: open); continue }
            if !JSONNesting.exceedsLimit(text), let found = try? decoder.decode(Record.self, from: Data(text.utf8)),
               found.kind != nil, found.payload != nil {
                return found
            }
            from = text.endIndex
        }
        return nil
    }

    /// How many objects a line that is not a record as a whole is searched for one.
    static let objectsTriedPerLine = 4

    mutating func parse(_ line: String, into events: inout [TestEvent]) {
        guard let record = record(in: line), let payload = record.payload else { return }
        if record.kind == "test" {
            if let id = payload.id, let kind = payload.kind { kinds[id] = kind }
            return
        }
        guard record.kind == "event", let kind = payload.kind, let rawID = payload.testID else { return }
        let time = payload.instant?.absolute ?? payload.instant?.since1970
        let isSuite = kinds[rawID] == "suite"

        switch kind {
        case "testStarted":
            if let time { startedAt[rawID] = time }
            if !isSuite, let id = SwiftTestingNames.testID(fromListed: rawID) { events.append(.started(id)) }
        case "issueRecorded":
            guard !isSuite, let id = SwiftTestingNames.testID(fromListed: rawID) else { return }
            let isFailure = payload.issue?.isFailure ?? !(payload.issue?.isKnown ?? false)
            if isFailure { failed.insert(rawID) }
            let text = (payload.messages ?? []).compactMap(\.text).joined(separator: "\n")
            let loc = payload.issue?.sourceLocation
            let location = (loc?.filePath ?? loc?.fileID).flatMap { file in
                // Line 0, a negative line or no file name is no place (the XCTest parser drops those too).
                loc?.line.flatMap { $0 > 0 && !file.isEmpty ? SourceLocation(file: file, line: $0) : nil }
            }
            let issueKind: Issue.Kind = text.contains("Caught error") || text.contains("threw") ? .thrown : .assertion
            events.append(.issue(id, Issue(kind: issueKind, message: text.isEmpty ? "issue recorded" : text,
                                           location: location, isFailure: isFailure)))
        case "testSkipped":
            guard !isSuite, let id = SwiftTestingNames.testID(fromListed: rawID) else { return }
            let text = (payload.messages ?? []).compactMap(\.text).joined(separator: "\n")
            let reason = Self.skipReason(text)
            events.append(.ended(id, .skipped, duration: 0, reason: reason.isEmpty ? nil : reason))
        case "testEnded":
            // Instants far apart (±1.7e308 in a corrupt stream) subtract to infinity: no duration, rather than one.
            let elapsed = zip(startedAt[rawID], time).map { $1 - $0 } ?? 0
            let duration = elapsed.isFinite ? max(0, elapsed) : 0
            if isSuite {
                if let suite = Self.suiteID(rawID) { events.append(.suiteEnded(suite, duration: duration)) }
            } else if let id = SwiftTestingNames.testID(fromListed: rawID) {
                events.append(.ended(id, failed.contains(rawID) ? .failed : .passed, duration: duration, reason: nil))
            }
        default:
            return
        }
    }

    /// `Test f() skipped: "why"` → `why`; any other text as it is.
    static func skipReason(_ text: String) -> String {
        guard let r = text.range(of: " skipped: \""), text.hasSuffix("\""), r.upperBound < text.endIndex else { return text }
        return String(text[r.upperBound..<text.index(before: text.endIndex)])
    }

    /// `Module.Outer/Inner/File.swift:3:2` → `Module` / `Outer/Inner`.
    static func suiteID(_ raw: String) -> SuiteID? {
        var parts = raw.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if let last = parts.last, SwiftTestingNames.isSourceLocation(last) { parts.removeLast() }
        guard let first = parts.first, let dot = first.firstIndex(of: ".") else { return nil }
        let name = ([String(first[first.index(after: dot)...])] + parts.dropFirst()).joined(separator: "/")
        return SuiteID(module: String(first[..<dot]), name: name)
    }
}

private func zip(_ a: Double?, _ b: Double?) -> (Double, Double)? {
    guard let a, let b else { return nil }
    return (a, b)
}
