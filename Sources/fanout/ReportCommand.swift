import ArgumentParser
import FanoutCoordinator
import FanoutCore
import FanoutReports
import Foundation

struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report", abstract: "Write another format of a finished run from its report.json.",
        subcommands: [Markdown.self, Html.self, Merge.self])

    /// The report.json given with --from.
    static func read(_ path: String) throws(FanoutError) -> RunReport {
        do {
            return try JSONReportReader().read(from: URL(fileURLWithPath: path))
        } catch {
            throw FanoutError(unreadableReport: error)
        }
    }

    /// Writes a rendered report in one step (a reader never sees half of it).
    static func write(_ text: String, to path: String) throws(FanoutError) {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw FanoutError("cannot write \(path): \(error.localizedDescription)",
                              hint: "Check the folder exists and is writable, or choose another file with --out.")
        }
    }
}
