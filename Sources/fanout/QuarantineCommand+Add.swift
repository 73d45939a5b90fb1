import ArgumentParser
import FanoutCoordinator
import FanoutCore

extension QuarantineCommand {
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
}
