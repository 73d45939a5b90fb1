import ArgumentParser
import FanoutCoordinator
import FanoutCore
import Foundation

@main
extension Fanout {
    /// ArgumentParser's own async entry, with Fanout's exit codes: usage errors exit 2 (not ArgumentParser's 64), as
    /// documented; a FanoutError exits with its own code.
    ///
    /// Every command's `run()` is declared `mutating`, as the protocol requirement is: with Swift 6.3.1 a
    /// non-mutating `run() async throws` called through the requirement (as here, on `any AsyncParsableCommand`)
    /// crashed while releasing the command's locals after it returned (BadInputTests caught it: SIGSEGV/SIGILL).
    static func main() async {
        do {
            var command = try parseAsRoot(RunCommand.bareShuffle(Array(CommandLine.arguments.dropFirst())))
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as FanoutError {
            Terminal.err("error: \(error)")
            Foundation.exit(error.exitCode.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                exit(withError: error) // --help, --version, completion scripts
            }
            if let exitCode = error as? ArgumentParser.ExitCode {
                Foundation.exit(exitCode.rawValue)
            }
            Terminal.err(fullMessage(for: error))
            Foundation.exit(RunExitCode.usage.rawValue)
        }
    }
}
