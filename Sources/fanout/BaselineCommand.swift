import ArgumentParser
import FanoutCoordinator

/// `fanout baseline …`: the performance baselines committed with the project (see docs/baselines.md).
struct BaselineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "baseline",
        abstract: "Performance baselines: accept a run's measurements, show what is accepted.",
        discussion: """
        A baseline is kept per test, metric, destination and agent hardware class, and is only ever applied to \
        measurements of the same four. A later run's measurement regresses when its average grew by more than \
        10% AND more than 0.1 s over the baseline; it is too noisy when its standard deviation is more than 10% \
        of its average AND more than 0.1 s (thresholds: `performance:` in fanout.yml).
        """,
        subcommands: [Accept.self, Show.self])

    /// The baselines file: --baselines, else the default (`fanout-baselines.json` in the current folder).
    static func path(_ option: String?) -> String {
        option ?? RunSettings().baselinesPath
    }
}
