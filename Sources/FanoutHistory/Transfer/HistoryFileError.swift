/// Why a history export or a JUnit file could not be read or written. Every case says what was wrong and how to fix
/// it, so the CLI shows it as is (exit 2: bad input; the history is left untouched).
public enum HistoryFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Missing, a folder, or not readable.
    case unreadable(path: String, reason: String)
    /// Not JSON at all, or JSON cut short (an interrupted download or upload).
    case notJSON(path: String, detail: String)
    /// JSON, but not a history export (no `"format": "fanout-history"`).
    case notAnExport(path: String)
    /// Written by a newer Fanout in a format version this one cannot read.
    case newerVersion(path: String, found: Int, supported: Int)
    /// An export with a field missing or of the wrong type.
    case invalid(path: String, detail: String)
    /// Not well-formed XML, or XML without JUnit test cases.
    case notJUnit(path: String, detail: String)
    case cannotWrite(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason):
            "cannot read \(path): \(reason). Give the path of a file written by `fanout history export` "
                + "(or a JUnit XML file with --junit)."
        case .notJSON(let path, let detail):
            "\(path) is not a history export: not valid JSON (\(detail)). If it was cut short, "
                + "export the history again with `fanout history export --out FILE`, or check the CI artifact was "
                + "downloaded whole."
        case .notAnExport(let path):
            "\(path) is JSON but not a Fanout history export (no \"format\": \"\(HistoryExport.formatName)\"). "
                + "Import files written by `fanout history export`; JUnit XML goes through `fanout history import "
                + "--junit`."
        case .newerVersion(let path, let found, let supported):
            "\(path) is a history export of format version \(found), but this fanout reads versions up to "
                + "\(supported). Upgrade fanout, or export with the same fanout version that imports."
        case .invalid(let path, let detail):
            "\(path) is not a valid history export: \(detail). "
                + "Export the history again with `fanout history export --out FILE`; do not edit the file by hand."
        case .notJUnit(let path, let detail):
            "\(path) is not a JUnit XML file: \(detail). "
                + "Give the file `swift test --xunit-output FILE` (or another tool's JUnit report) wrote."
        case .cannotWrite(let path, let reason):
            "cannot write \(path): \(reason). Check the folder exists and is writable, or choose another --out."
        }
    }
}
