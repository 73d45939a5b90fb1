import FanoutCore
import Foundation

/// Writes a `RunReport` as `report.json` and reads it back (for `fanout baseline accept --from report.json` and any
/// tool that post-processes a run). The format is documented field by field in `docs/report-schema.md`.
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
        var data = try Self.encoder(indented: report.results.count <= Self.indentedResultLimit).encode(report)
        data.append(0x0A)
        return data
    }

    /// Reads a report written by `encode`. Refuses reports of another schema version with an error that says so,
    /// rather than half-reading them.
    /// - Parameter source: how to name the input in errors (a path, or `report.json`).
    public func decode(_ data: Data,
                       source: String = JSONReportWriter.fileName) throws(ReportDecodingError) -> RunReport {
        let header: SchemaHeader
        do {
            header = try JSONDecoder().decode(SchemaHeader.self, from: data)
        } catch let error as DecodingError {
            if case .dataCorrupted = error {
                throw ReportDecodingError(source: source, reason: .notJSON(Self.describe(error)))
            }
            throw ReportDecodingError(source: source, reason: .notAFanoutReport)
        } catch {
            throw ReportDecodingError(source: source, reason: .notJSON("\(error)"))
        }
        guard let version = header.schemaVersion else {
            throw ReportDecodingError(source: source, reason: .notAFanoutReport)
        }
        guard version == RunReport.currentSchemaVersion else {
            throw ReportDecodingError(source: source, reason: .unsupportedSchemaVersion(version))
        }
        do {
            return try Self.decoder().decode(RunReport.self, from: data)
        } catch let error as DecodingError {
            throw ReportDecodingError(source: source, reason: .invalid(Self.describe(error)))
        } catch {
            throw ReportDecodingError(source: source, reason: .invalid("\(error)"))
        }
    }

    /// Reads `report.json` (or any path) from disk.
    public func read(from url: URL) throws(ReportDecodingError) -> RunReport {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ReportDecodingError(source: url.path, reason: .unreadable(Self.describeIOError(error)))
        }
        return try decode(data, source: url.path)
    }

    // MARK: - Coding configuration

    static func encoder(indented: Bool = true) -> JSONEncoder {
        let encoder = JSONConventions.encoder()
        encoder.outputFormatting = indented ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    static func decoder() -> JSONDecoder { JSONConventions.decoder() }

    /// Only the version, read first so that a report of another version fails with "version N" instead of with
    /// whichever field happened to change.
    private struct SchemaHeader: Decodable {
        var schemaVersion: Int?
    }

    static func describe(_ error: DecodingError) -> String { JSONConventions.describe(error) }

    static func describeIOError(_ error: any Error) -> String { JSONConventions.describeIOError(error) }
}
