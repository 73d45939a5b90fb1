import ArgumentParser
import FanoutCoordinator

extension HistoryCommand {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the timing history to a portable file (versioned JSON) to cache as a CI artifact.",
            discussion: """
            The file holds every run the history keeps (class and test times, outcomes, attempts, measurements) and \
            is read back by `fanout history import`, also by later Fanout versions. It is written to a temporary \
            file and renamed, so a reader never sees half of it. Format: docs/history-format.md. \
            Exit codes: 0 written · 2 no history, or the file cannot be written · 3 the history cannot be read.
            """)

        @OptionGroup var location: Location

        @Option(help: "The file to write.")
        var out: String

        @Option(help: "Only the newest N runs (default: all the history keeps).")
        var runs: Int?

        mutating func run() async throws {
            let historyPath = try location.settings().historyPath
            let count = try HistoryTransfer.export(historyPath: historyPath, to: out, runs: runs)
            print("exported \(count) run\(count == 1 ? "" : "s") to \(out)")
        }
    }
}
