import ArgumentParser
import FanoutCoordinator
import FanoutCore
import FanoutReports

extension AgentsCommand {
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every agent in parallel: its route (ssh config alias, bastions) with where each value came from, reachable, host key, auth, Swift toolchain, free disk, slots. Exit 3 if any is unusable.")

        @Option(help: "The config file with the agents (default: ./fanout.yml).")
        var config: String?

        @Option(help: "Also measure dispatch latency over this many commands per agent.")
        var latency = 0

        mutating func run() async throws {
            let settings = try CommonOptions.fileSettings(config: config)
            try settings.validate()
            guard !settings.agents.isEmpty else {
                throw FanoutError("no agents in the config", hint: "List them under `agents:` (see config/fanout.example.yml).")
            }
            let (table, rows) = await AgentsCheck.run(settings: settings, latencyRuns: latency)
            print(table.rendered())
            for row in rows where !row.route.isEmpty {
                print(TextSanitizer.terminalSafe("\n\(row.agent) " + row.route.joined(separator: "\n")))
            }
            for row in rows where row.problem != nil {
                print(TextSanitizer.terminalSafe("\n\(row.agent) (\(row.address)): \(row.problem ?? "")"))
            }
            if rows.contains(where: { !$0.usable }) { throw ExitCode(RunExitCode.infrastructure.rawValue) }
        }
    }
}
