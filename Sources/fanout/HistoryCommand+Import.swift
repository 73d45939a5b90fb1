import ArgumentParser
import FanoutCoordinator

extension HistoryCommand {
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Merge history exports (e.g. of N shard jobs), or seed timings from JUnit XML, into the history.",
            discussion: """
            A run the history already has (same run id) is skipped, so importing a file twice, or exports that share \
            runs, adds each run once; the history keeps its newest 200 runs. With --junit, each JUnit file \
            (`swift test --parallel --xunit-output FILE`, another tool's report, or Fanout's junit.xml) becomes one \
            run whose test and class times plan the next `fanout run`. All files are checked first and the import \
            is one transaction: on any error the history is unchanged. \
            Exit codes: 0 imported · 2 a file is missing, not an export (or not JUnit), truncated or of a newer \
            format · 3 the history cannot be written.
            """)

        @OptionGroup var location: Location

        @Flag(help: "The files are JUnit XML reports, not history exports.")
        var junit = false

        @Option(help: ArgumentHelp("With --junit: the destination the times belong to (default: the suite's "
            + "`destination` property in Fanout's junit.xml, else the destination `fanout run` uses: `local`, or the "
            + "config's only one)."))
        var destination: String?

        @Argument(help: "Files written by `fanout history export` (or JUnit XML files with --junit).")
        var files: [String] = []

        mutating func run() async throws {
            let (settings, historyPath) = try location.settings()
            let result: HistoryTransfer.ImportResult
            if junit {
                if let destination { try HistoryTransfer.checkDestination(destination, settings) }
                let fallback = try destination ?? HistoryTransfer.defaultDestination(settings)
                result = try HistoryTransfer.importJUnit(files, historyPath: historyPath, destination: destination,
                                                         defaultDestination: fallback)
            } else {
                guard destination == nil else {
                    throw FanoutError("--destination applies to --junit only",
                                      hint: "History exports carry the destination of every run.")
                }
                result = try HistoryTransfer.importExports(files, historyPath: historyPath)
            }
            for warning in result.warnings { Terminal.err("warning: \(warning)") }
            print(result.summary.description + " into \(historyPath)")
        }
    }
}
