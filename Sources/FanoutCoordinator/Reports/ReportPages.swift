import FanoutCore
import FanoutReports

/// The run as a page to open in a browser: the same report.html `fanout run` writes beside report.json.
public enum ReportPages {
    /// The default file name of the page, for callers that cannot see the writers.
    public static let htmlFileName = HTMLWriter.fileName

    /// The self-contained HTML page of a report.json (`fanout report html --from`).
    public static func html(fromReport path: String) throws(FanoutError) -> String {
        HTMLWriter().render(try BaselineFile.readReport(path))
    }
}
