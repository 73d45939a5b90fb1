import ArgumentParser
import FanoutCoordinator
import FanoutCore
import Foundation

// Usage errors exit 2 (not ArgumentParser's 64), as documented; a FanoutError exits with its own code.
do {
    var command = try Fanout.parseAsRoot()
    if var asyncCommand = command as? any AsyncRunnable {
        try await asyncCommand.runAsync()
    } else {
        try command.run()
    }
} catch let error as FanoutError {
    Terminal.err("error: \(error)")
    exit(error.exitCode.rawValue)
} catch {
    let code = Fanout.exitCode(for: error)
    if code == .success {
        Fanout.exit(withError: error) // --help, --version
    }
    if let exitCode = error as? ArgumentParser.ExitCode {
        exit(exitCode.rawValue)
    }
    Terminal.err(Fanout.fullMessage(for: error))
    exit(RunExitCode.usage.rawValue)
}

/// The existential `any AsyncParsableCommand` resolves `run()` to the synchronous requirement; this names the async one.
protocol AsyncRunnable {
    mutating func runAsync() async throws
}

extension Run: AsyncRunnable { mutating func runAsync() async throws { try await run() } }
extension PlanCommand: AsyncRunnable { mutating func runAsync() async throws { try await run() } }
extension List: AsyncRunnable { mutating func runAsync() async throws { try await run() } }
extension HistoryCommand.Show: AsyncRunnable { mutating func runAsync() async throws { try await run() } }
extension AgentsCommand.Check: AsyncRunnable { mutating func runAsync() async throws { try await run() } }
extension HistoryCommand.Flaky: AsyncRunnable { mutating func runAsync() async throws { try await run() } }
extension HistoryCommand.Export: AsyncRunnable { mutating func runAsync() async throws { try await run() } }
extension HistoryCommand.Import: AsyncRunnable { mutating func runAsync() async throws { try await run() } }
extension ReportCommand.Markdown: AsyncRunnable { mutating func runAsync() async throws { try await run() } }
extension ReportCommand.Html: AsyncRunnable { mutating func runAsync() async throws { try await run() } }
extension InitCommand: AsyncRunnable { mutating func runAsync() async throws { try await run() } }
extension ReportCommand.Merge: AsyncRunnable { mutating func runAsync() async throws { try await run() } }
