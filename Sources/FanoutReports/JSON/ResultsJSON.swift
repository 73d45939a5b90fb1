import FanoutCore
import Foundation

/// report.json's `results`, the bulk of a large report, written straight to bytes: exactly what `JSONEncoder` writes
/// with sorted keys and unescaped slashes on one line (a test compares the two byte for byte), about four times
/// faster. JSONEncoder builds a container for every object, and a result is five objects or more.
///
/// A result whose extras this writer does not spell out (a flake score, a quarantine entry, `--repeat` figures, an
/// order dependence) is written by JSONEncoder itself, in its place; so a new field on those types needs nothing
/// here. A new stored property of `TestResult`, `Attempt`, `Issue`, `TestID`, `SuiteID` or `SourceLocation` must be
/// added below: `ResultsJSONTests` fails until it is (it counts their fields).
enum ResultsJSON {
    /// The JSON array of `results`, or nil when JSONEncoder failed on one of them.
    static func encode(_ results: [TestResult], fallback: JSONEncoder) -> Data? {
        var out: [UInt8] = []
        out.reserveCapacity(results.count * 256)
        out.append(UInt8(ascii: "["))
        for (n, result) in results.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            if result.flakeScore != nil || result.quarantine != nil || result.repeats != nil || result.orderDependence != nil
                || !result.attempts.allSatisfy({ $0.duration.isFinite && $0.cpuSeconds?.isFinite != false }) {
                guard let data = try? fallback.encode(result) else { return nil }
                out.append(contentsOf: data)
            } else {
                write(result, to: &out)
            }
        }
        out.append(UInt8(ascii: "]"))
        return Data(out)
    }

    // Keys in code-point order, as `.sortedKeys` writes them; optional fields left out when nil.

    private static func write(_ r: TestResult, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"attempts":["#.utf8)
        for (n, a) in r.attempts.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            write(a, to: &out)
        }
        out.append(contentsOf: #"],"destination":"#.utf8)
        string(r.destination, to: &out)
        out.append(contentsOf: #","framework":"#.utf8)
        string(r.framework.rawValue, to: &out)
        out.append(contentsOf: #","id":{"name":"#.utf8)
        string(r.id.name, to: &out)
        out.append(contentsOf: #","suite":{"module":"#.utf8)
        string(r.id.suite.module, to: &out)
        out.append(contentsOf: #","name":"#.utf8)
        string(r.id.suite.name, to: &out)
        out.append(contentsOf: #"}},"outcome":"#.utf8)
        string(r.outcome.rawValue, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    private static func write(_ a: Attempt, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"agent":"#.utf8)
        string(a.agent, to: &out)
        if let attachments = a.attachments {
            out.append(contentsOf: #","attachments":["#.utf8)
            for (n, path) in attachments.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                string(path, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        field("contended", a.contended, to: &out)
        field("cpuSeconds", a.cpuSeconds, to: &out)
        field("diagnostics", a.diagnostics, to: &out)
        out.append(contentsOf: #","duration":"#.utf8)
        number(a.duration, to: &out)
        out.append(contentsOf: #","issues":["#.utf8)
        for (n, issue) in a.issues.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            write(issue, to: &out)
        }
        out.append(contentsOf: #"],"outcome":"#.utf8)
        string(a.outcome.rawValue, to: &out)
        field("position", a.position, to: &out)
        field("repetition", a.repetition, to: &out)
        field("replayOf", a.replayOf, to: &out)
        field("seed", a.seed, to: &out)
        field("skipReason", a.skipReason, to: &out)
        out.append(contentsOf: #","unit":"#.utf8)
        out.append(contentsOf: String(a.unit).utf8)
        out.append(UInt8(ascii: "}"))
    }

    private static func write(_ issue: Issue, to out: inout [UInt8]) {
        out.append(contentsOf: (issue.isFailure ? #"{"isFailure":true,"kind":"# : #"{"isFailure":false,"kind":"#).utf8)
        string(issue.kind.rawValue, to: &out)
        if let location = issue.location {
            out.append(contentsOf: #","location":{"file":"#.utf8)
            string(location.file, to: &out)
            out.append(contentsOf: #","line":"#.utf8)
            out.append(contentsOf: String(location.line).utf8)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: #","message":"#.utf8)
        string(issue.message, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    private static func field(_ key: String, _ value: String?, to out: inout [UInt8]) {
        guard let value else { return }
        name(key, to: &out)
        string(value, to: &out)
    }

    private static func field(_ key: String, _ value: Int?, to out: inout [UInt8]) {
        guard let value else { return }
        name(key, to: &out)
        out.append(contentsOf: String(value).utf8)
    }

    private static func field(_ key: String, _ value: Double?, to out: inout [UInt8]) {
        guard let value else { return }
        name(key, to: &out)
        number(value, to: &out)
    }

    private static func name(_ key: String, to out: inout [UInt8]) {
        out.append(contentsOf: #",""#.utf8)
        out.append(contentsOf: key.utf8)
        out.append(contentsOf: #"":"#.utf8)
    }

    /// As JSONEncoder writes a finite Double: its shortest description, without a trailing ".0" (1.0 is `1`).
    static func number(_ value: Double, to out: inout [UInt8]) {
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        out.append(contentsOf: text.utf8)
    }

    /// A JSON string as JSONEncoder writes it: `"` and `\` escaped, \b \f \n \r \t by name, other control characters
    /// as \u00xx (lower-case hex), everything else (slashes, DEL, non-ASCII) as its UTF-8 bytes.
    static func string(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var start = 0
            for (i, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i]))
                start = i + 1
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
                case 0x08: out.append(contentsOf: #"\b"#.utf8)
                case 0x0C: out.append(contentsOf: #"\f"#.utf8)
                case 0x0A: out.append(contentsOf: #"\n"#.utf8)
                case 0x0D: out.append(contentsOf: #"\r"#.utf8)
                case 0x09: out.append(contentsOf: #"\t"#.utf8)
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    out.append(contentsOf: #"\u00"#.utf8)
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0x0F)])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
