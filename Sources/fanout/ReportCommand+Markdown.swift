import ArgumentParser
import FanoutReports

extension ReportCommand {
    struct Markdown: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The run as Markdown for a CI job summary (verdict, counts, failures grouped by cause, flaky tests, regressions).",
            discussion: "`fanout run` writes the same text as summary.md beside report.json, and appends it to the file "
                + "GITHUB_STEP_SUMMARY names when that is set. The text stays under GitHub's 1 MiB cap.")

        @Option(help: "The report.json of a `fanout run`.")
        var from: String

        @Option(help: "Write to this file instead of standard output.")
        var out: String?

        mutating func run() async throws {
            let text = MarkdownWriter().render(try ReportCommand.read(from))
            guard let out else {
                print(text, terminator: "")
                return
            }
            try ReportCommand.write(text, to: out)
        }
    }
}
