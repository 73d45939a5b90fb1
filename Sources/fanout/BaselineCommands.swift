import ArgumentParser
import FanoutCoordinator
import FanoutCore
import FanoutReports
import Foundation

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

    struct Accept: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Accept the measurements of a run's report.json as baselines (replacing older ones of the same test, metric, destination and hardware class).")

        @Option(help: "The report.json of the run to accept (in .fanout/reports/<run-id>/).")
        var from: String

        @Option(help: "Only tests whose Module.Class/test id is this, or contains a match of this regex.")
        var test: String?

        @Option(help: "The baselines file (default: fanout-baselines.json).")
        var baselines: String?

        mutating func run() async throws {
            let report = try ReportCommand.read(from)
            let path = BaselineCommand.path(baselines)
            var file = try BaselineFile.load(path)
            let result = try file.accept(from: report, testPattern: test)
            for record in result.tooNoisy {
                let why = record.verdict?.message ?? "its standard deviation is too large"
                Terminal.err("warning: not accepted: \(record.measurement.test) on \(record.destination): \(why)")
            }
            guard !result.accepted.isEmpty else {
                throw FanoutError("nothing accepted: every matching measurement is too noisy to be a baseline",
                                  hint: "Make the measured block steadier (or run it alone), then run and accept again.")
            }
            try file.save(path)
            let fresh = result.accepted.count - result.replaced
            print("Accepted \(result.accepted.count) baseline\(result.accepted.count == 1 ? "" : "s") from run "
                + "\(report.runID) into \(path) (\(fresh) new, \(result.replaced) replaced):")
            print(BaselineFile(baselines: result.accepted).table().rendered())
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the accepted baselines: test, metric, destination, hardware class, average, allowed standard deviation.")

        @Option(help: "The baselines file (default: fanout-baselines.json).")
        var baselines: String?

        @Option(help: "Only this destination's baselines.")
        var destination: String?

        mutating func run() async throws {
            let path = BaselineCommand.path(baselines)
            if !FileManager.default.fileExists(atPath: path) {
                Terminal.err("fanout: no baselines file at \(path) yet: `fanout baseline accept --from <report.json>` creates it")
            }
            print(try BaselineFile.load(path).table(destination: destination).rendered())
        }
    }
}

