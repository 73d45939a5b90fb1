import FanoutCoordinator
import FanoutCore
import Foundation
import Synchronization

/// Renders progress events: on a terminal, a status line that updates in place with failures printed above it as
/// they happen; elsewhere (CI logs, pipes), one plain line per event.
final class Terminal: Sendable {
    let interactive: Bool
    private let state = Mutex(State())

    private struct State {
        var statusShown = false
        var start = ContinuousClock.now
    }

    init(interactive: Bool = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb") {
        self.interactive = interactive
    }

    /// Writes a line on standard error. Errors and warnings quote agents' stderr and test names: sanitized too.
    static func err(_ line: String) {
        FileHandle.standardError.write(Data((TextSanitizer.terminalSafe(line) + "\n").utf8))
    }

    /// A string from a test or an agent (a test id, a message, a location, a suite or agent name, remote stderr),
    /// made safe to print on one line: it can neither drive the terminal nor print a fake line of its own.
    static func clean(_ text: some StringProtocol) -> String {
        TextSanitizer.terminalSafe(String(text), singleLine: true)
    }

    /// For commands that only prepare (plan, list): phases and warnings on standard error.
    static let plainProgress: ProgressHandler = { event in
        switch event {
        case .phase(let text): err("fanout: \(text)")
        case .warning(let text): err("warning: \(text)")
        default: break
        }
    }

    func handle(_ event: ProgressEvent) {
        state.withLock { s in
            let t = (ContinuousClock.now - s.start).seconds
            let stamp = "[\(pad(String(format1: t), 6))s]"
            if interactive {
                render(event, stamp: stamp, state: &s)
            } else if let line = plainLine(event, stamp: stamp) {
                write(line + "\n")
            }
        }
    }

    private func render(_ event: ProgressEvent, stamp: String, state s: inout State) {
        func above(_ text: String) {
            write((s.statusShown ? "\r\u{1B}[2K" : "") + text + "\n")
            s.statusShown = false
        }
        switch event {
        case .phase, .warning, .planned:
            if let line = plainLine(event, stamp: stamp) { above(line) }
        case .testEnded(let id, let destination, let outcome, _, let issues) where outcome.isFailure || outcome == .notRun:
            above("\u{1B}[31m\(outcome.rawValue.uppercased())\u{1B}[0m \(Self.clean(id.description)) [\(Self.clean(destination))]")
            for issue in issues.prefix(3) { above("    " + Self.issueLine(issue)) }
        case .status(let done, let total, let failures, let eta):
            let fail = failures > 0 ? " · \u{1B}[31m\(failures) failed\u{1B}[0m" : ""
            write("\r\u{1B}[2K\(stamp) \(done)/\(total) tests\(fail) · ETA \(formatSeconds(eta))")
            s.statusShown = true
        default:
            break
        }
    }

    private func plainLine(_ event: ProgressEvent, stamp: String) -> String? {
        switch event {
        case .phase(let text):
            return "fanout: \(Self.clean(text))"
        case .warning(let text):
            return "warning: \(Self.clean(text))"
        case .planned(let tests, let items, let slots, let predicted, let lb):
            return "fanout: \(tests) tests in \(items) classes on \(slots) slots — predicted \(formatSeconds(predicted)), lower bound \(formatSeconds(lb))"
        case .unitStarted(let unit, let agent, let slot, let suites, let estimate):
            let shown = suites.prefix(3).map { Self.clean($0) }.joined(separator: ", ")
            let names = suites.count > 3 ? shown + " +\(suites.count - 3)" : shown
            return "\(stamp) unit \(unit) started on \(Self.clean(agent))#\(slot) (est \(formatSeconds(estimate))): \(names)"
        case .testEnded(let id, let destination, let outcome, let duration, let issues):
            var line = "\(stamp) \(outcome.rawValue.uppercased()) \(Self.clean(id.description)) [\(Self.clean(destination))] (\(formatSeconds(duration)))"
            if outcome.isFailure || outcome == .notRun, let first = issues.first {
                line += "\n    " + Self.issueLine(first)
            }
            return line
        case .unitEnded(let unit, let agent, let ending, let duration):
            return "\(stamp) unit \(unit) ended on \(Self.clean(agent)): \(Self.clean("\(ending)")) after \(formatSeconds(duration))"
        case .status(let done, let total, let failures, let eta):
            return done == total || done % 25 == 0
                ? "\(stamp) progress: \(done)/\(total) tests, \(failures) failed, ETA \(formatSeconds(eta))" : nil
        }
    }

    /// An issue's place and the first line of its message, cleaned.
    private static func issueLine(_ issue: Issue) -> String {
        let firstLine = TextSanitizer.normalizingNewlines(issue.message).split(separator: "\n").first ?? ""
        return clean(issue.location.map { "\($0): " } ?? "") + clean(firstLine)
    }

    /// Clears the status line before the summary.
    func close() {
        state.withLock { s in
            if s.statusShown { write("\r\u{1B}[2K") }
            s.statusShown = false
        }
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    private func pad(_ s: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - s.count)) + s
    }
}
