import ArgumentParser
import FanoutCoordinator

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Look at the timing history, or carry it between CI jobs.",
        subcommands: [Show.self, Flaky.self, Export.self, Import.self])

    /// `--config` and `--history` of export and import: the history file a `fanout run` here would use.
    struct Location: ParsableArguments {
        @Option(help: "The config file (default: ./fanout.yml when it exists); its `history:` is the default history.")
        var config: String?

        @Option(help: "The timing history database (default: the config's `history:`, else .fanout/history.sqlite).")
        var history: String?

        func settings() throws -> (RunSettings, historyPath: String) {
            let settings = try CommonOptions.fileSettings(config: config)
            return (settings, history ?? settings.historyPath)
        }
    }
}
