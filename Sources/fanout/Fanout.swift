import ArgumentParser
import FanoutCoordinator

struct Fanout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Run a Swift test suite in parallel, planned by timing history, and merge one report.",
        discussion: """
        Exit codes: 0 all passed; 1 test failures; 2 usage, config or build error, or a shard with nothing to run; \
        3 infrastructure error (some tests could not be run; for `report merge`, a shard missing or twice; for `queue \
        report`, tests no job completed); \
        130/143 interrupted. `fanout bisect` has its own: 0 polluter(s) named, 1 none, 2 bad input, 3 a step ended \
        for another reason.
        """,
        version: Coordinator.version,
        subcommands: [RunCommand.self, PlanCommand.self, ListCommand.self, HistoryCommand.self, AgentsCommand.self, BaselineCommand.self,
                      QuarantineCommand.self, ReportCommand.self, QueueCommand.self, BisectCommand.self, InitCommand.self],
        defaultSubcommand: RunCommand.self)
}
