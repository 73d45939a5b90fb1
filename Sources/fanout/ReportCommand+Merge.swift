import ArgumentParser
import FanoutCoordinator

extension ReportCommand {
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
            let (code, problems) = try ReportMergeStep.merge(reports, into: out)
            for p in problems { Terminal.err("error: \(p)") }
            print("Merged \(reports.count) report\(reports.count == 1 ? "" : "s") into \(out) (exit \(code))")
            throw ExitCode(code)
        }
    }
}
