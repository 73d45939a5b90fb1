import FanoutCore
import Foundation

/// Writes a `RunReport` as `report.json` (`JSONReportReader` reads it back). The format is documented field by field
/// in `docs/report-schema.md`.
///
/// The output is stable so that two reports diff cleanly: keys sorted, arrays in the model's order, two-space
/// pretty printing, dates as ISO-8601 UTC with milliseconds, slashes not escaped (paths stay readable).
/// A report of more than ``indentedResultLimit`` results is written without indentation: nobody reads 100,000
/// results by eye (`jq .` indents them), and indenting doubles the file and a third of the time to write it.
public struct JSONReportWriter: Sendable {
    public static let fileName = "report.json"
    /// Reports with up to this many results are indented.
    public static let indentedResultLimit = 10_000

    public init() {}

    /// The UTF-8 bytes of `report.json`, ending with a newline.
    public func encode(_ report: RunReport) throws -> Data {
        let work = encoding(report)
        return try work.assemble(Parallel.map(work.pieces) { piece in Result { try piece() } }.map { try $0.get() })
    }

    /// Encoding a report as pieces of work that can run at once, and the step that joins their output.
    public struct Encoding: Sendable {
        public var pieces: [@Sendable () throws -> Data]
        public var assemble: @Sendable ([Data]) throws -> Data
    }

    /// `encode`, as pieces: the report without its results, and its results in slices (written by ``ResultsJSON``),
    /// on the cores at once: the results are most of the file, and one encoder alone was the slowest step of merging
    /// the shards of 100,000 tests. The joined bytes are exactly what one encoder writes (tests compare them): the
    /// report without results holds its empty `results` array exactly once at its top level (`"results":[]`, or
    /// pretty `"results" : [`, an empty line, `  ]`), and the slices' elements go between those brackets.
    public func encoding(_ report: RunReport) -> Encoding {
        let newline: @Sendable (Data) -> Data = { $0 + [0x0A] }
        let pretty = report.results.count <= Self.indentedResultLimit
        var rest = report
        rest.results = []
        // Small slices, so the cores end together; a few thousand results take milliseconds in one.
        let slices = report.results.count < 2_000 ? 1 : max(4, ProcessInfo.processInfo.activeProcessorCount * 4)
        let size = max(1, (report.results.count + slices - 1) / slices)
        let chunks = stride(from: 0, to: report.results.count, by: size).map {
            report.results[$0..<min($0 + size, report.results.count)]
        }
        let pieces: [@Sendable () throws -> Data] = [{ [rest] in try Self.encoder(indented: pretty).encode(rest) }]
            + chunks.map { chunk in
                { try ResultsJSON.elements(chunk, pretty: pretty, fallback: Self.encoder(indented: pretty)) }
            }
        return Encoding(pieces: pieces) { parts in
            let head = parts[0]
            let marker = Array((pretty ? "\"results\" : [\n\n  ]" : #""results":[]"#).utf8)
            guard !report.results.isEmpty else { return newline(head) }
            let found = Self.offsets(of: marker, in: head)
            guard found.count == 1, let at = found.first else {
                return newline(try Self.encoder(indented: pretty).encode(report))
            }
            let place = (head.startIndex + at)..<(head.startIndex + at + marker.count)
            // One buffer of the final size, filled by plain copies (24 MB for 100,000 results).
            var out = Data(capacity: parts.reduce(0) { $0 + $1.count } + 16)
            out.append(head[..<place.lowerBound])
            out.append(contentsOf: Array((pretty ? "\"results\" : [" : #""results":["#).utf8))
            for (n, elements) in parts.dropFirst().enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                out.append(elements)
            }
            out.append(contentsOf: Array((pretty ? "\n  ]" : "]").utf8))
            out.append(head[place.upperBound...])
            out.append(0x0A)
            return out
        }
    }

    /// Where `marker` starts in `data` (byte offsets), the first two at most. A plain scan of the bytes: Data's own
    /// `firstRange(of:)` goes element by element through its indices, a fifth of the time of writing a run's
    /// report.json of 3,000 results.
    static func offsets(of marker: [UInt8], in data: Data) -> [Int] {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> [Int] in
            guard let first = marker.first, raw.count >= marker.count else { return [] }
            var found: [Int] = []
            var i = 0
            while i <= raw.count - marker.count, found.count < 2 {
                if raw[i] == first, marker.indices.allSatisfy({ raw[i + $0] == marker[$0] }) {
                    found.append(i)
                    i += marker.count
                } else {
                    i += 1
                }
            }
            return found
        }
    }

    // MARK: - Coding configuration

    static func encoder(indented: Bool = true) -> JSONEncoder {
        let encoder = JSONConventions.encoder()
        encoder.outputFormatting = indented ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    static func describeIOError(_ error: any Error) -> String { JSONConventions.describeIOError(error) }
}
