import FanoutCore

/// Why a `report.json` could not be read, worded for the person who passed it.
public struct ReportDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// The file could not be opened or read.
        case unreadable(String)
        /// The bytes are not JSON.
        case notJSON(String)
        /// JSON, but without a `schemaVersion`: some other file.
        case notAFanoutReport
        /// Written by a Fanout with another schema.
        case unsupportedSchemaVersion(Int)
        /// The right version, but a field is missing or has the wrong type.
        case invalid(String)
    }

    /// The path (or name) of what was read.
    public var source: String
    public var reason: Reason

    public init(source: String, reason: Reason) {
        self.source = source
        self.reason = reason
    }

    public var description: String {
        let supported = RunReport.currentSchemaVersion
        switch reason {
        case .unreadable(let detail):
            return "cannot read \(source): \(detail). Pass the report.json of a run (in .fanout/reports/<run id>/)."
        case .notJSON(let detail):
            return "\(source) is not valid JSON (\(detail)). Pass the report.json that fanout wrote, unmodified."
        case .notAFanoutReport:
            return "\(source) is not a Fanout report: it has no schemaVersion. Pass the report.json of a run, "
                + "not junit.xml or another JSON file."
        case .unsupportedSchemaVersion(let version) where version > supported:
            return "\(source) has report schema version \(version), but this fanout reads version \(supported). "
                + "Upgrade fanout to the version that wrote the report."
        case .unsupportedSchemaVersion(let version):
            return "\(source) has report schema version \(version), from an older fanout; this one reads version "
                + "\(supported). Re-run the tests to get a current report."
        case .invalid(let detail):
            return "\(source) is not a valid version \(supported) report: \(detail)."
        }
    }
}
