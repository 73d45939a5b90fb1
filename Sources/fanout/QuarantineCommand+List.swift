import ArgumentParser
import FanoutCoordinator
import FanoutReports
import Foundation

extension QuarantineCommand {
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
