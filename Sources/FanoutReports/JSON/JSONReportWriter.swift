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

    /// `encode`, as pieces: one for a report of up to ``indentedResultLimit`` results; for a larger one, the report
    /// without its results plus its results in slices, on the cores at once (the results are most of the file, and
    /// one encoder alone is the slowest step of merging the shards of 100,000 tests; ``ResultsJSON`` writes them).
    /// The joined bytes are exactly what one encoder writes (a test compares them): one-line JSON of an array is `[`
    /// + its elements' JSON joined by `,` + `]`, and the report without results holds `"results":[]` exactly once,
    /// unescaped, at its top level.
    public func encoding(_ report: RunReport) -> Encoding {
        let newline: @Sendable (Data) -> Data = { $0 + [0x0A] }
        guard report.results.count > Self.indentedResultLimit else {
            return Encoding(pieces: [{ try Self.encoder(indented: true).encode(report) }], assemble: { newline($0[0]) })
        }
        var rest = report
        rest.results = []
        let slices = max(4, ProcessInfo.processInfo.activeProcessorCount * 4) // small, so the cores end together
        let size = (report.results.count + slices - 1) / slices
        let chunks = stride(from: 0, to: report.results.count, by: size).map {
            Array(report.results[$0..<min($0 + size, report.results.count)])
        }
        let pieces: [@Sendable () throws -> Data] = [{ [rest] in try Self.encoder(indented: false).encode(rest) }]
            + chunks.map { chunk in {
                let encoder = Self.encoder(indented: false)
                return try ResultsJSON.encode(chunk, fallback: encoder) ?? encoder.encode(chunk)
            } }
        return Encoding(pieces: pieces) { parts in
            let head = parts[0]
            let marker = Data(#""results":[]"#.utf8)
            guard let place = head.firstRange(of: marker), head[place.upperBound...].firstRange(of: marker) == nil else {
                return newline(try Self.encoder(indented: false).encode(report))
            }
            // One buffer of the final size, filled by plain copies (24 MB for 100,000 results).
            var out = Data(capacity: parts.reduce(0) { $0 + $1.count } + 16)
            out.append(head[..<place.lowerBound])
            out.append(contentsOf: Array(#""results":["#.utf8))
            for (n, array) in parts.dropFirst().enumerated() where array.count > 2 {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                array.withUnsafeBytes { raw in out.append(contentsOf: raw[1..<(raw.count - 1)]) } // without [ and ]
            }
            out.append(UInt8(ascii: "]"))
            out.append(head[place.upperBound...])
            out.append(0x0A)
            return out
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
