import ArgumentParser

/// `fanout baseline …` (performance baselines per device configuration). Placeholder until the baselines land.
struct BaselineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "baseline", abstract: "Performance baselines.")
}
