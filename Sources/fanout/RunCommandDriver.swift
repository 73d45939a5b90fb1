import FanoutCoordinator
import FanoutCore
import FanoutReports
import Foundation
import Synchronization

/// Runs `fanout run` with a terminal: progress while it works, the summary at the end, and Ctrl-C handling
/// (first: stop dispatching, kill what runs, write a partial report; second: kill everything and exit at once).
struct RunCommandDriver {
    let settings: RunSettings
    let forceColor: Bool
    /// `--timings`: the phases after the summary.
    var timings = false

    func run() async -> Int32 {
        let terminal = Terminal()
        var settings = settings
        settings.startUpSeconds = ProcessStart.secondsAgo()
        let coordinator = Coordinator(settings: settings, progress: { terminal.handle($0) })
        let task = Task { try await coordinator.run() }
        let signals = SignalWatcher { signal, count in
            if count == 1 {
                Terminal.err("\nfanout: \(signal == SIGINT ? "interrupted" : "terminated"): stopping, writing a partial report (again to quit at once)")
                if signal == SIGTERM { coordinator.noteInterruption(.terminated) }
                task.cancel()
            } else {
                Coordinator.killEverythingNow()
                Terminal.err("fanout: quit")
                exit(signal == SIGINT ? RunExitCode.interrupted.rawValue : RunExitCode.terminated.rawValue)
            }
        }
        // Kept until the process exits, never cancelled: a second Ctrl-C that lands after the run's work ended (while
        // the summary prints) must still quit at once with 130. With SIGINT's default back in place it killed the
        // process by the signal instead, and stdout's buffered summary was lost with it.
        defer { withExtendedLifetime(signals) {} }

        let outcome: FinishedRun
        do {
            outcome = try await task.value
        } catch let error as FanoutError {
            terminal.close()
            Terminal.err("error: \(error)")
            return error.exitCode.rawValue
        } catch {
            terminal.close()
            Terminal.err("error: \(error)")
            return RunExitCode.infrastructure.rawValue
        }
        terminal.close()
        let color = forceColor || (terminal.interactive && ProcessInfo.processInfo.environment["NO_COLOR"] == nil)
        print(ConsoleSummary(color: color).render(outcome.report))
        for line in JobSummary.annotations(outcome.report, environment: ProcessInfo.processInfo.environment) { print(line) }
        if let dir = outcome.reportDirectory {
            print("Report: \(dir)/report.json, \(dir)/junit.xml, \(dir)/summary.md and \(dir)/report.html")
        }
        if timings { print(PhaseTable.render(outcome.phases, files: outcome.reportFiles)) }
        return outcome.exitCode.rawValue
    }
}

/// Watches SIGINT and SIGTERM without killing the process, counting how often they came.
final class SignalWatcher: Sendable {
    private let sources: Mutex<[any DispatchSourceSignal]>
    private let count = SignalCount()

    private final class SignalCount: Sendable {
        let value = Mutex(0)
    }

    init(_ handler: @escaping @Sendable (Int32, Int) -> Void) {
        var made: [any DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            made.append(DispatchSource.makeSignalSource(signal: sig, queue: .global()))
        }
        for (sig, source) in zip([SIGINT, SIGTERM], made) {
            // Two signals that arrive before the handler runs are merged into one event: `data` says how many. (The
            // handler holds its source: one watcher a process, alive until it exits.)
            source.setEventHandler { [count, source] in
                let arrived = max(1, Int(source.data))
                let n = count.value.withLock { c -> Int in
                    c += arrived
                    return c
                }
                handler(sig, n)
            }
            source.resume()
        }
        sources = Mutex(made)
    }
}
