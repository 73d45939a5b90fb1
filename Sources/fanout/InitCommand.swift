import ArgumentParser
import FanoutCoordinator
import Foundation

struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write a commented fanout.yml for the Swift package in this folder (its test product, slots, agents as comments).")

    @Option(help: "The package's folder (default: the current folder).")
    var package = "."

    @Flag(help: "Replace an existing fanout.yml.")
    var force = false

    @Flag(help: "Print the file instead of writing it.")
    var stdout = false

    mutating func run() async throws {
        let found = try await ConfigTemplate.inspect(folder: package)
        let text = ConfigTemplate(package: found, slots: RunSettings.defaultSlots).render()
        if stdout {
            print(text, terminator: "")
            return
        }
        let path = try ConfigTemplate.write(text, into: package, replacing: force)
        print("wrote \(path) for \(found.name) (test targets: \(found.testTargets.joined(separator: ", ")))")
        print("next: `fanout plan` to see the split, `fanout run` to run it")
    }
}
