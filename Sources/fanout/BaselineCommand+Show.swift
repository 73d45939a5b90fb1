import ArgumentParser
import FanoutCoordinator
import FanoutReports
import Foundation

extension BaselineCommand {
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
