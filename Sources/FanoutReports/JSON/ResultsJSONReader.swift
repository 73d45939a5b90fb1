import FanoutCore
import Foundation

/// Reading report.json's `results` without JSONDecoder, the other half of ``ResultsJSON``: the report's top-level
/// `results` array is found by a scan of the bytes, the rest of the report goes through JSONDecoder with an empty
/// array in its place, and the results are parsed straight into values, several times faster (JSONDecoder builds a
/// container for every object). A result this parser does not take as it stands (a key it does not know, a null, a
/// number spelled as a string, anything unusual) is decoded by JSONDecoder from its own bytes; anything wrong at all
/// gives nil, and the caller decodes the whole file with JSONDecoder instead, whose error says where.
enum ResultsJSONReader {
    /// The report with its results, or nil when this reader leaves the file to JSONDecoder.
    static func decode(_ data: Data, decoder: JSONDecoder) -> RunReport? {
        let bytes = [UInt8](data)
        return bytes.withUnsafeBufferPointer { buffer -> RunReport? in
            guard let range = topLevelResults(buffer) else { return nil }
            var head = [UInt8]()
            head.reserveCapacity(buffer.count - range.count + 2)
            head.append(contentsOf: buffer[..<range.lowerBound])
            head.append(contentsOf: Array("[]".utf8))
            head.append(contentsOf: buffer[range.upperBound...])
            guard var report = try? decoder.decode(RunReport.self, from: Data(head)) else { return nil }
            var parser = Parser(bytes: UnsafeBufferPointer(rebasing: buffer[range]), decoder: decoder)
            guard let results = parser.results() else { return nil }
            report.results = results
            return report
        }
    }

    /// Where the value of the top-level object's `results` key lies (an array), when it is there exactly once.
    static func topLevelResults(_ b: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        let key = Array("results".utf8)
        var depth = 0
        var i = 0
        var found: Range<Int>?
        var arrayStart: Int?
        while i < b.count {
            let c = b[i]
            switch c {
            case UInt8(ascii: "\""):
                let start = i + 1
                i += 1
                while i < b.count, b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
                guard i < b.count else { return nil }
                if depth == 1, i - start == key.count, b[start..<i].elementsEqual(key) {
                    var j = i + 1
                    while j < b.count, Parser.isSpace(b[j]) { j += 1 }
                    if j < b.count, b[j] == UInt8(ascii: ":") {
                        j += 1
                        while j < b.count, Parser.isSpace(b[j]) { j += 1 }
                        guard found == nil, arrayStart == nil, j < b.count, b[j] == UInt8(ascii: "[") else { return nil }
                        arrayStart = j
                        i = j
                        depth += 1
                    }
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 1, let start = arrayStart, c == UInt8(ascii: "]") {
                    found = start..<(i + 1)
                    arrayStart = nil
                }
            default:
                break
            }
            i += 1
        }
        return depth == 0 ? found : nil
    }

    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        let decoder: JSONDecoder
        var i = 0

        init(bytes: UnsafeBufferPointer<UInt8>, decoder: JSONDecoder) {
            self.bytes = bytes
            self.decoder = decoder
        }

        static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }

        mutating func space() { while i < bytes.count, Self.isSpace(bytes[i]) { i += 1 } }

        mutating func take(_ c: Character) -> Bool {
            space()
            guard i < bytes.count, bytes[i] == c.asciiValue! else { return false }
            i += 1
            return true
        }

        mutating func results() -> [TestResult]? {
            guard take("[") else { return nil }
            var out: [TestResult] = []
            if take("]") { return out }
            repeat {
                space()
                let start = i
                if let r = result(), peekSeparator() {
                    out.append(r)
                } else {
                    // Not one this parser takes as it stands: JSONDecoder reads it from its own bytes.
                    i = start
                    guard skipValue(), let r = try? decoder.decode(TestResult.self, from: Data(bytes[start..<i])) else { return nil }
                    out.append(r)
                }
            } while take(",")
            guard take("]") else { return nil }
            space()
            return i == bytes.count ? out : nil
        }

        /// The next thing is `,` or `]` (a value ended where it should).
        mutating func peekSeparator() -> Bool {
            space()
            return i < bytes.count && (bytes[i] == UInt8(ascii: ",") || bytes[i] == UInt8(ascii: "]"))
        }

        /// Each key of an object in turn, to `body`; false when the object is malformed or `body` refuses a key.
        mutating func object(_ body: (inout Parser, [UInt8]) -> Bool) -> Bool {
            guard take("{") else { return false }
            if take("}") { return true }
            repeat {
                space()
                guard let key = rawKey(), take(":") else { return false }
                space()
                guard body(&self, key) else { return false }
            } while take(",")
            return take("}")
        }

        mutating func array(_ element: (inout Parser) -> Bool) -> Bool {
            guard take("[") else { return false }
            if take("]") { return true }
            repeat {
                space()
                guard element(&self) else { return false }
            } while take(",")
            return take("]")
        }

        /// A key without escapes, as bytes.
        mutating func rawKey() -> [UInt8]? {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return nil }
            let start = i + 1
            var j = start
            while j < bytes.count, bytes[j] != UInt8(ascii: "\"") {
                if bytes[j] == UInt8(ascii: "\\") { return nil }
                j += 1
            }
            guard j < bytes.count else { return nil }
            i = j + 1
            return Array(bytes[start..<j])
        }

        mutating func string() -> String? {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return nil }
            i += 1
            let start = i
            var plain = true
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
                if bytes[i] == UInt8(ascii: "\\") { plain = false; i += 2 } else {
                    if bytes[i] < 0x20 { return nil }
                    i += 1
                }
            }
            guard i < bytes.count else { return nil }
            let end = i
            i += 1
            if plain { return String(validating: bytes[start..<end], as: UTF8.self) }
            return Self.unescape(bytes[start..<end])
        }

        static func unescape(_ s: Slice<UnsafeBufferPointer<UInt8>>) -> String? {
            var out: [UInt8] = []
            out.reserveCapacity(s.count)
            var k = s.startIndex
            func hex4(_ at: Int) -> UInt32? {
                guard at + 4 <= s.endIndex else { return nil }
                return UInt32(String(decoding: s[at..<(at + 4)], as: UTF8.self), radix: 16)
            }
            while k < s.endIndex {
                let c = s[k]
                guard c == UInt8(ascii: "\\") else { out.append(c); k += 1; continue }
                guard k + 1 < s.endIndex else { return nil }
                let e = s[k + 1]
                k += 2
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard var code = hex4(k) else { return nil }
                    k += 4
                    if (0xD800..<0xDC00).contains(code) {
                        guard k + 6 <= s.endIndex, s[k] == UInt8(ascii: "\\"), s[k + 1] == UInt8(ascii: "u"),
                              let low = hex4(k + 2), (0xDC00..<0xE000).contains(low) else { return nil }
                        k += 6
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { return nil }
                    out.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    return nil
                }
            }
            return String(validating: out, as: UTF8.self)
        }

        /// The text of a JSON number.
        mutating func numberText() -> String? {
            let start = i
            while i < bytes.count, Self.isNumber(bytes[i]) { i += 1 }
            return i > start ? String(decoding: bytes[start..<i], as: UTF8.self) : nil
        }

        static func isNumber(_ c: UInt8) -> Bool {
            (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-") || c == UInt8(ascii: "+")
                || c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
        }

        mutating func double() -> Double? { numberText().flatMap { Double($0) }.flatMap { $0.isFinite ? $0 : nil } }
        mutating func integer() -> Int? { numberText().flatMap { Int($0) } }

        mutating func bool() -> Bool? {
            if bytes[i...].starts(with: "true".utf8) { i += 4; return true }
            if bytes[i...].starts(with: "false".utf8) { i += 5; return false }
            return nil
        }

        /// Past one value of any kind (strings with their escapes, nested brackets), checking only its brackets.
        mutating func skipValue() -> Bool {
            space()
            guard i < bytes.count else { return false }
            func skipString(_ p: inout Parser) -> Bool {
                p.i += 1
                while p.i < p.bytes.count, p.bytes[p.i] != UInt8(ascii: "\"") {
                    p.i += p.bytes[p.i] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard p.i < p.bytes.count else { return false }
                p.i += 1
                return true
            }
            switch bytes[i] {
            case UInt8(ascii: "\""):
                return skipString(&self)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                repeat {
                    guard i < bytes.count else { return false }
                    switch bytes[i] {
                    case UInt8(ascii: "\""):
                        guard skipString(&self) else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                    default: break
                    }
                    i += 1
                } while depth > 0
                return true
            default:
                let start = i
                while i < bytes.count, !Self.isSpace(bytes[i]), bytes[i] != UInt8(ascii: ","),
                      bytes[i] != UInt8(ascii: "]"), bytes[i] != UInt8(ascii: "}") { i += 1 }
                return i > start
            }
        }

        // MARK: - The model's objects (keys as ResultsJSON writes them; any other key: JSONDecoder decides)

        mutating func result() -> TestResult? {
            var id: TestID?, framework: Framework?, destination: String?, outcome: Outcome?, attempts: [Attempt]?
            let ok = object { p, key in
                switch key {
                case Array("attempts".utf8):
                    var list: [Attempt] = []
                    guard p.array({ p in p.attempt().map { list.append($0) } != nil }) else { return false }
                    attempts = list
                case Array("destination".utf8): destination = p.string()
                case Array("framework".utf8): framework = p.string().flatMap(Framework.init(rawValue:))
                case Array("id".utf8): id = p.testID()
                case Array("outcome".utf8): outcome = p.string().flatMap(Outcome.init(rawValue:))
                default: return false
                }
                return true
            }
            guard ok, let id, let framework, let destination, let outcome, let attempts else { return nil }
            return TestResult(id: id, framework: framework, destination: destination, outcome: outcome, attempts: attempts)
        }

        mutating func testID() -> TestID? {
            var name: String?, module: String?, suite: String?
            let ok = object { p, key in
                switch key {
                case Array("name".utf8): name = p.string(); return name != nil
                case Array("suite".utf8):
                    return p.object { p, key in
                        switch key {
                        case Array("module".utf8): module = p.string(); return module != nil
                        case Array("name".utf8): suite = p.string(); return suite != nil
                        default: return false
                        }
                    }
                default: return false
                }
            }
            guard ok, let name, let module, let suite else { return nil }
            return TestID(module: module, suite: suite, name: name)
        }

        mutating func attempt() -> Attempt? {
            var outcome: Outcome?, duration: Double?, issues: [Issue]?, unit: Int?, agent: String?
            var a = Attempt(outcome: .passed, duration: 0, unit: 0, agent: "")
            let ok = object { p, key in
                switch key {
                case Array("agent".utf8): agent = p.string(); return agent != nil
                case Array("attachments".utf8):
                    var paths: [String] = []
                    guard p.array({ p in p.string().map { paths.append($0) } != nil }) else { return false }
                    a.attachments = paths
                case Array("contended".utf8): a.contended = p.string(); return a.contended != nil
                case Array("cpuSeconds".utf8): a.cpuSeconds = p.double(); return a.cpuSeconds != nil
                case Array("diagnostics".utf8): a.diagnostics = p.string(); return a.diagnostics != nil
                case Array("duration".utf8): duration = p.double(); return duration != nil
                case Array("issues".utf8):
                    var list: [Issue] = []
                    guard p.array({ p in p.issue().map { list.append($0) } != nil }) else { return false }
                    issues = list
                case Array("outcome".utf8): outcome = p.string().flatMap(Outcome.init(rawValue:)); return outcome != nil
                case Array("position".utf8): a.position = p.integer(); return a.position != nil
                case Array("repetition".utf8): a.repetition = p.integer(); return a.repetition != nil
                case Array("replayOf".utf8): a.replayOf = p.integer(); return a.replayOf != nil
                case Array("seed".utf8): a.seed = p.integer(); return a.seed != nil
                case Array("skipReason".utf8): a.skipReason = p.string(); return a.skipReason != nil
                case Array("unit".utf8): unit = p.integer(); return unit != nil
                default: return false
                }
                return true
            }
            guard ok, let outcome, let duration, let issues, let unit, let agent else { return nil }
            (a.outcome, a.duration, a.issues, a.unit, a.agent) = (outcome, duration, issues, unit, agent)
            return a
        }

        mutating func issue() -> Issue? {
            var kind: Issue.Kind?, message: String?, isFailure: Bool?, location: SourceLocation?
            let ok = object { p, key in
                switch key {
                case Array("isFailure".utf8): isFailure = p.bool(); return isFailure != nil
                case Array("kind".utf8): kind = p.string().flatMap(Issue.Kind.init(rawValue:)); return kind != nil
                case Array("location".utf8):
                    var file: String?, line: Int?
                    guard p.object({ p, key in
                        switch key {
                        case Array("file".utf8): file = p.string(); return file != nil
                        case Array("line".utf8): line = p.integer(); return line != nil
                        default: return false
                        }
                    }), let file, let line else { return false }
                    location = SourceLocation(file: file, line: line)
                    return true
                case Array("message".utf8): message = p.string(); return message != nil
                default: return false
                }
            }
            guard ok, let kind, let message, let isFailure else { return nil }
            return Issue(kind: kind, message: message, location: location, isFailure: isFailure)
        }
    }
}
