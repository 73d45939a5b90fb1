import ArgumentParser
import FanoutCoordinator
import FanoutCore
import FanoutReports
import Foundation

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

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Quarantine a test (Module.Class/test) or a whole class (Module.Class); replaces its entry if it has one.")

        @OptionGroup var location: Location

        @Argument(help: "Module.Class/test, or Module.Class.")
        var test: String

        @Option(help: "mute (runs, does not fail the run) or skip (does not run).")
        var mode: String = QuarantineMode.mute.rawValue

        @Option(help: "Why it is quarantined.")
        var reason: String

        @Option(help: "Who fixes it.")
        var owner: String?

        @Option(help: "Where the fix is tracked (a link).")
        var issue: String?

        @Option(help: "Only on this configured destination (default: every destination).")
        var destination: String?

        @Option(help: "The last day it applies, YYYY-MM-DD (default: --days from today).")
        var expires: String?

        @Option(help: "Days from today it applies.")
        var days = 30

        mutating func run() async throws {
            let (settings, path) = try location.resolve()
            guard let mode = QuarantineMode(rawValue: mode) else {
                throw FanoutError("--mode must be mute or skip (got '\(mode)')")
            }
            guard days >= 0 else { throw FanoutError("--days must be 0 or more (got \(days))") }
            let today = QuarantineFile.day()
            let entry = QuarantineEntry(test: test, destination: destination, mode: mode, reason: reason, owner: owner,
                                        issue: issue, added: today, expires: expires ?? QuarantineFile.day(plus: days, from: today))
            let replaced = try QuarantineDesk.add(entry, to: path, settings: settings)
            print("\(replaced ? "updated" : "added") \(entry.label): \(mode.rawValue) until \(entry.expires) in \(path)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Release a test from quarantine.")

        @OptionGroup var location: Location

        @Argument(help: "Module.Class/test, or Module.Class, as the entry names it.")
        var test: String

        @Option(help: "The entry for this destination (default: the entry for every destination).")
        var destination: String?

        mutating func run() async throws {
            let path = try location.resolve().path
            let removed = try QuarantineDesk.remove(test, destination: destination, from: path)
            print("removed \(removed.label) (\(removed.mode.rawValue), added \(removed.added)) from \(path)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show every quarantine entry and whether it applies today.")

        @OptionGroup var location: Location

        mutating func run() async throws {
            let path = try location.resolve().path
            if !FileManager.default.fileExists(atPath: path) {
                Terminal.err("fanout: no quarantine file at \(path) yet: `fanout quarantine add` creates it")
            }
            print(try QuarantineDesk.table(path: path, today: QuarantineFile.day()).rendered())
        }
    }
}
