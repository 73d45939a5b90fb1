import FanoutCore
import Foundation

/// Reads a `report.json` that `JSONReportWriter` wrote (for `fanout baseline accept --from`, `fanout report …`,
/// `fanout report merge`, and any tool that post-processes a run). Errors are `ReportDecodingError`s worded for the
/// person who passed the file.
public struct JSONReportReader: Sendable {
    public init() {}

    /// Reads a report written by `JSONReportWriter.encode`. Refuses reports of another schema version with an error that says so,
    /// rather than half-reading them.
    /// - Parameter source: how to name the input in errors (a path, or `report.json`).
    public func decode(_ data: Data,
                       source: String = JSONReportWriter.fileName) throws(ReportDecodingError) -> RunReport {
        // The whole report first: parsing a large file twice costs a third of reading it. Only when that fails (or
        // the version differs) is the header read, to say why in the terms that matter.
        let decoder = JSONConventions.decoder()
        // The results (most of a report) are parsed without JSONDecoder when they are as the writer writes them.
        if let report = ResultsJSONReader.decode(data, decoder: decoder), report.schemaVersion == RunReport.currentSchemaVersion {
            return report
        }
        let failure: any Error
        do {
            let report = try decoder.decode(RunReport.self, from: data)
            guard report.schemaVersion == RunReport.currentSchemaVersion else {
                throw ReportDecodingError(source: source, reason: .unsupportedSchemaVersion(report.schemaVersion))
            }
            return report
        } catch let error as ReportDecodingError {
            throw error
        } catch {
            failure = error
        }
        let header: SchemaHeader
        do {
            header = try JSONDecoder().decode(SchemaHeader.self, from: data)
        } catch let error as DecodingError {
            if case .dataCorrupted = error {
                throw ReportDecodingError(source: source, reason: .notJSON(JSONConventions.describe(error)))
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
        if let error = failure as? DecodingError {
            throw ReportDecodingError(source: source, reason: .invalid(JSONConventions.describe(error)))
        }
        throw ReportDecodingError(source: source, reason: .invalid("\(failure)"))
    }

    /// Reads `report.json` (or any path) from disk.
    public func read(from url: URL) throws(ReportDecodingError) -> RunReport {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ReportDecodingError(source: url.path, reason: .unreadable(JSONConventions.describeIOError(error)))
        }
        return try decode(data, source: url.path)
    }

    /// Only the version, read first so that a report of another version fails with "version N" instead of with
    /// whichever field happened to change.
    private struct SchemaHeader: Decodable {
        var schemaVersion: Int?
    }
}
