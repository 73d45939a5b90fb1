import FanoutCore

/// ANSI styling that is all-or-nothing: with `color` off every method returns its text untouched, so a plain
/// summary (CI logs, files, `NO_COLOR`) carries no escape codes at all.
struct ConsoleStyle {
    var color: Bool

    func bold(_ text: String) -> String { wrap(text, "1") }
    func dim(_ text: String) -> String { wrap(text, "2") }
    func red(_ text: String) -> String { wrap(text, "31") }
    func green(_ text: String) -> String { wrap(text, "32") }
    func yellow(_ text: String) -> String { wrap(text, "33") }
    func boldRed(_ text: String) -> String { wrap(text, "1;31") }
    func boldGreen(_ text: String) -> String { wrap(text, "1;32") }
    func boldYellow(_ text: String) -> String { wrap(text, "1;33") }

    /// Colors by outcome: red for what fails the run, yellow for what needs a look, green for passes.
    func outcome(_ outcome: Outcome, _ text: String) -> String {
        switch outcome {
        case .failed, .crashed, .timedOut: boldRed(text)
        case .notRun, .flaky, .skipped: boldYellow(text)
        case .passed: boldGreen(text)
        }
    }

    private func wrap(_ text: String, _ code: String) -> String {
        color && !text.isEmpty ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
