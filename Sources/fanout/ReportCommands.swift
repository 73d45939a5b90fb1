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

    struct Merge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Merge the reports of a run's shards (fanout run --shard I/N in N CI jobs) into one report.",
            discussion: """
            Writes report.json, junit.xml, summary.md and report.html into --out. Every test appears once. \
            Exit codes: 0 all passed · 1 test failures · 3 a shard is missing or given twice, a test is in two shards, \
            or tests did not run (the merge is never green with results missing) · 2 unreadable input.
            """)

        @Argument(help: "The report.json of every shard, or the folders that hold them.")
        var reports: [String] = []

        @Option(help: "The folder to write the merged report into.")
        var out: String

        mutating func run() async throws {
            let (code, problems) = try ReportMerge.merge(reports, into: out)
            for p in problems { Terminal.err("error: \(p)") }
            print("Merged \(reports.count) report\(reports.count == 1 ? "" : "s") into \(out) (exit \(code))")
            throw ExitCode(code)
        }
    }
}
