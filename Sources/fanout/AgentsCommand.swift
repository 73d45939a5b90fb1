import ArgumentParser

struct AgentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agents", abstract: "Work with the SSH agents of the config.", subcommands: [Check.self])
}
