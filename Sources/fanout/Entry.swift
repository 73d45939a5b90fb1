import ArgumentParser
import FanoutCoordinator
import Foundation

@main
extension Fanout {
    /// ArgumentParser's own async entry, with Fanout's exit codes: usage errors exit 2 (not ArgumentParser's 64), as
    /// documented; a FanoutError exits with its own code.
    static func main() async {
        do {
            var command = try parseAsRoot()
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
            Foundation.exit(FanoutCoordinator.ExitCode.usage.rawValue)
        }
    }
}
