import FanoutCore

/// `fanout run --timings`: where the run's time went, phase by phase, and how much of it was outside the tests.
public enum PhaseTable {
    /// `phases`: the run's phases in order (the report's `timing.phases`, then `reports`); `files`: each report
    /// file's rendering and writing (they overlap inside `reports`).
    public static func render(_ phases: [PhaseTime], files: [PhaseTime] = []) -> String {
        guard !phases.isEmpty else { return "Timings: none were kept for this run" }
        let total = phases.reduce(0) { $0 + $1.seconds }
        let tests = phases.filter { $0.phase == "tests" }.reduce(0) { $0 + $1.seconds }
        let width = phases.map(\.phase.count).max() ?? 0
        var lines = ["Timings: \(formatSeconds(total)) in all, \(formatSeconds(total - tests)) of it outside the tests"]
        for p in phases {
            let share = total > 0 ? " \(Int((p.seconds / total * 100).rounded()).description.leftPadded(to: 3)) %" : ""
            var line = "  " + p.phase.padding(to: width) + "  " + String(format3: p.seconds).leftPadded(to: 9) + " s" + share
            if p.phase == "reports", !files.isEmpty {
                line += "  (at once: " + files.map { "\($0.phase) \(String(format3: $0.seconds)) s" }.joined(separator: ", ") + ")"
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    fileprivate func padding(to width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
