import ArgumentParser
import FanoutReports
import Foundation

extension ReportCommand {
    struct Html: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The run as one self-contained HTML page (verdict, failures grouped by cause with logs, destination matrix, timeline, estimates, measurements).",
            discussion: "`fanout run` writes the same page as report.html beside report.json. It needs no network: open it "
                + "in any browser, with or without JavaScript.")

        @Option(help: "The report.json of a `fanout run`.")
        var from: String

        @Option(help: "The file to write (default: report.html beside the report.json).")
        var out: String?

        mutating func run() async throws {
            let text = HTMLWriter().render(try ReportCommand.read(from))
            let path = out ?? URL(fileURLWithPath: from).deletingLastPathComponent()
                .appendingPathComponent(HTMLWriter.fileName).path
            try ReportCommand.write(text, to: path)
            print(path)
        }
    }
}
