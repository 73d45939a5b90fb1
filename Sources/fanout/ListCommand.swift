import ArgumentParser
import FanoutCoordinator
import FanoutReports

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the test classes found, with their estimates.")

    @OptionGroup var common: CommonOptions

    @Flag(help: "Also list every test method.")
    var tests = false

    mutating func run() async throws {
        let settings = try common.settings()
        let prepared = try await Coordinator(settings: settings, progress: Terminal.plainProgress).prepare()
        print(InspectionTables.listTable(prepared, showTests: tests).rendered())
    }
}
