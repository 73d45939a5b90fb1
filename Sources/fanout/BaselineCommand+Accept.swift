import ArgumentParser
import FanoutCoordinator
import FanoutReports

extension BaselineCommand {
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
}
