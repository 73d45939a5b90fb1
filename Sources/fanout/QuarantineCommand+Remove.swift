import ArgumentParser
import FanoutCoordinator

extension QuarantineCommand {
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
}
