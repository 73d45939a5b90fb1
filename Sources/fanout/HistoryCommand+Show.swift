import ArgumentParser
import FanoutCoordinator
import FanoutReports

extension HistoryCommand {
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Recent runs and per-class timing statistics.")

        @Option(help: "The timing history database.")
        var history = ".fanout/history.sqlite"

        @Option(help: "Only this destination's classes.")
        var destination: String?

        @Option(help: "How many rows per table.")
        var limit = 20

        mutating func run() async throws {
            print(try InspectionTables.historyTables(path: history, destination: destination, limit: limit)
                .map { $0.rendered() }.joined(separator: "\n\n"))
        }
    }
}
