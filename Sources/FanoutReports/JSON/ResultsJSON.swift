import FanoutCore
import Foundation

/// report.json's `results`, the bulk of a report, written straight to bytes: exactly what `JSONEncoder` writes with
/// sorted keys and unescaped slashes, on one line or pretty-printed (tests compare the two byte for byte), several
/// times faster. JSONEncoder builds a container for every object, and a result is five objects or more.
///
/// A result whose extras this writer does not spell out (a flake score, a quarantine entry, `--repeat` figures, an
/// order dependence, a time that is not a finite number) is written by JSONEncoder itself, in its place; so a new
/// field on those types needs nothing here. A new stored property of `TestResult`, `Attempt`, `Issue`, `TestID`,
/// `SuiteID` or `SourceLocation` must be added below: `ResultsJSONTests` fails until it is (it counts their fields).
enum ResultsJSON {
    /// The elements of report.json's `results` array as they stand between its brackets, each with what precedes it
    /// (`,` after the first; pretty: a new line and the indentation of the array's elements, two levels deep).
    /// `fallback` is the report's encoder, pretty or not as `pretty` says.
    static func elements(_ results: ArraySlice<TestResult>, pretty: Bool, fallback: JSONEncoder) throws -> Data {
        var w = Writer(pretty: pretty, depth: 2)
        w.out.reserveCapacity(results.count * (pretty ? 420 : 240))
        for result in results {
            if result.flakeScore != nil || result.quarantine != nil || result.repeats != nil || result.orderDependence != nil
                || !result.attempts.allSatisfy({ $0.duration.isFinite && $0.cpuSeconds?.isFinite != false }) {
                w.element()
                let data = try fallback.encode(result)
                // Pretty: JSONEncoder indents from the left margin; a string never holds a raw new line, so every
                // new line in its output is layout, and takes the element's indentation (the empty line inside an
                // empty array stays empty).
                let bytes = Array(data)
                for (i, byte) in bytes.enumerated() {
                    w.out.append(byte)
                    if pretty, byte == 0x0A, i + 1 < bytes.count, bytes[i + 1] != 0x0A {
                        w.out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 4))
                    }
                }
            } else {
                w.element()
                w.write(result)
            }
        }
        return Data(w.out)
    }

    /// JSON text as JSONEncoder lays it out: compact, or `.prettyPrinted` (two spaces a level, `"key" : value`, an
    /// empty array or object as its brackets with an empty line between them).
    struct Writer {
        var out: [UInt8] = []
        let pretty: Bool
        var depth: Int
        /// Per open array or object: nothing written in it yet.
        private var empty: [Bool] = []

        init(pretty: Bool, depth: Int = 0) {
            self.pretty = pretty
            self.depth = depth
            empty = [true]
        }

        /// Before an element of an array, or a key of an object.
        mutating func element() {
            if empty[empty.count - 1] { empty[empty.count - 1] = false } else { out.append(UInt8(ascii: ",")) }
            if pretty { newLine() }
        }

        mutating func key(_ name: StaticString) {
            element()
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            out.append(contentsOf: pretty ? Array(#"" : "#.utf8) : Array(#"":"#.utf8))
        }

        mutating func open(_ bracket: Character) {
            out.append(bracket.asciiValue!)
            depth += 1
            empty.append(true)
        }

        mutating func close(_ bracket: Character) {
            depth -= 1
            if pretty {
                if empty.last == true { out.append(0x0A) }
                newLine()
            }
            empty.removeLast()
            out.append(bracket.asciiValue!)
        }

        private mutating func newLine() {
            out.append(0x0A)
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
        }

        // Keys in code-point order, as `.sortedKeys` writes them; optional fields left out when nil.

        mutating func write(_ r: TestResult) {
            open("{")
            key("attempts")
            open("[")
            for a in r.attempts {
                element()
                write(a)
            }
            close("]")
            key("destination"); string(r.destination)
            key("framework"); string(r.framework.rawValue)
            key("id")
            open("{")
            key("name"); string(r.id.name)
            key("suite")
            open("{")
            key("module"); string(r.id.suite.module)
            key("name"); string(r.id.suite.name)
            close("}")
            close("}")
            key("outcome"); string(r.outcome.rawValue)
            close("}")
        }

        mutating func write(_ a: Attempt) {
            open("{")
            key("agent"); string(a.agent)
            if let attachments = a.attachments {
                key("attachments")
                open("[")
                for path in attachments {
                    element()
                    string(path)
                }
                close("]")
            }
            if let v = a.contended { key("contended"); string(v) }
            if let v = a.cpuSeconds { key("cpuSeconds"); number(v) }
            if let v = a.diagnostics { key("diagnostics"); string(v) }
            key("duration"); number(a.duration)
            key("issues")
            open("[")
            for issue in a.issues {
                element()
                write(issue)
            }
            close("]")
            key("outcome"); string(a.outcome.rawValue)
            if let v = a.position { key("position"); integer(v) }
            if let v = a.repetition { key("repetition"); integer(v) }
            if let v = a.replayOf { key("replayOf"); integer(v) }
            if let v = a.seed { key("seed"); integer(v) }
            if let v = a.skipReason { key("skipReason"); string(v) }
            key("unit"); integer(a.unit)
            close("}")
        }

        mutating func write(_ issue: Issue) {
            open("{")
            key("isFailure"); out.append(contentsOf: (issue.isFailure ? "true" : "false").utf8)
            key("kind"); string(issue.kind.rawValue)
            if let location = issue.location {
                key("location")
                open("{")
                key("file"); string(location.file)
                key("line"); integer(location.line)
                close("}")
            }
            key("message"); string(issue.message)
            close("}")
        }

        mutating func integer(_ value: Int) { out.append(contentsOf: String(value).utf8) }

        /// As JSONEncoder writes a finite Double: its shortest description, without a trailing ".0" (1.0 is `1`).
        mutating func number(_ value: Double) {
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            out.append(contentsOf: text.utf8)
        }

        /// A JSON string as JSONEncoder writes it: `"` and `\` escaped, \b \f \n \r \t by name, other control
        /// characters as \u00xx (lower-case hex), everything else (slashes, DEL, non-ASCII) as its UTF-8 bytes.
        mutating func string(_ value: String) {
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
}
