import ArgumentParser
import FanoutCoordinator

/// `fanout quarantine …`: the tests whose failures do not fail the run, or that do not run (docs/quarantine.md).
struct QuarantineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quarantine",
        abstract: "Mute or skip flaky tests, with a reason, an owner and an expiry, in a file the team commits.",
        discussion: """
        mute: the test runs and is reported, but its failure does not fail the run (exit code unaffected; JUnit \
        shows it as skipped with the failure in its output). skip: the test does not run and is reported skipped \
        by quarantine. An entry stops applying the day after it expires, and the run warns. \
        `fanout history flaky --propose` adds entries for flaky tests and releases muted tests that pass again.
        """,
        subcommands: [Add.self, Remove.self, List.self])

    /// `--config` and `--quarantine`: the file a `fanout run` here would use.
    struct Location: ParsableArguments {
        @Option(help: "The config file (default: ./fanout.yml when it exists); its `quarantine:` is the default file.")
        var config: String?

        @Option(help: "The quarantine file (default: the config's `quarantine:`, else fanout-quarantine.yml).")
        var quarantine: String?

        func resolve() throws -> (RunSettings, path: String) {
            let settings = try CommonOptions.fileSettings(config: config)
            return (settings, quarantine ?? settings.quarantinePath)
        }
    }
}
