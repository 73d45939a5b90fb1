import FanoutCore

/// The slowest-classes table: estimate versus actual per class, with where the estimate came from. It fits the
/// width by giving the class name priority (cut in the middle only when it must) and cutting the end of the
/// estimate source, which `fanout plan` and report.json show in full. An actual time marked `*` is partial (the
/// class was split, crashed or timed out), which is why it does not teach the timing history; a footnote says so.
struct ClassTable {
    var rows: [ClassReport]
    var showDestination: Bool
    var width: Int

    private static let indent = 2
    private static let headers = ["tests", "estimate", "actual", "Δ"]
    /// The source column is never narrower than this (`history (5 runs)`, the common case, fits); the class column
    /// gives way first.
    private static let minimumSource = 16

    func lines() -> [String] {
        let cells = rows.map(numberCells)
        // Right-aligned number columns, as wide as their widest cell.
        let numbers = Self.headers.indices.map { column in
            ([Self.headers[column]] + cells.map { $0[column] }).map { ConsoleText.width($0) }.max() ?? 0
        }
        let destinationWidth = showDestination
            ? min(14, max(11, rows.map { ConsoleText.width($0.destination) }.max() ?? 0)) : 0
        // indent, class, 2, [destination, 2], tests, 1, estimate, 1, actual, 1, Δ, 2, source
        let fixed = Self.indent + (showDestination ? destinationWidth + 2 : 0) + numbers.reduce(0, +) + 2 + 3 + 2
        let wantedClass = max(5, rows.map { ConsoleText.width($0.suite.description) }.max() ?? 0)
        let wantedSource = rows.map { ConsoleText.width($0.estimateSource) }.max() ?? 0
        let classWidth = max(10, min(wantedClass, width - fixed - min(wantedSource, Self.minimumSource)))
        let sourceColumn = fixed + classWidth

        func row(classCell: String, destination: String, values: [String], source: String) -> String {
            var line = String(repeating: " ", count: Self.indent)
                + ConsoleText.padRight(ConsoleText.truncateMiddle(classCell, to: classWidth), to: classWidth) + "  "
            if showDestination {
                line += ConsoleText.padRight(ConsoleText.truncateEnd(destination, to: destinationWidth),
                                             to: destinationWidth) + "  "
            }
            line += zip(values, numbers).map { ConsoleText.padLeft($0, to: $1) }.joined(separator: " ") + "  "
            return line + ConsoleText.truncateEnd(source, to: max(1, width - sourceColumn))
        }

        var out = [row(classCell: "class", destination: "destination", values: Self.headers,
                      source: "source")]
        for (r, values) in zip(rows, cells) {
            out.append(row(classCell: TextSanitizer.terminalSafe(r.suite.description),
                           destination: TextSanitizer.terminalSafe(r.destination), values: values,
                           source: TextSanitizer.terminalSafe(r.estimateSource)))
        }
        if rows.contains(where: { !$0.timingIsComplete }) {
            out.append(String(repeating: " ", count: Self.indent)
                + "* partial: the class was split, crashed or timed out; its time does not update the history")
        }
        return out
    }

    private func numberCells(_ r: ClassReport) -> [String] {
        let actual = (r.actual.map(Self.seconds) ?? "—") + (r.timingIsComplete ? "" : "*")
        var delta = "—"
        if let a = r.actual, r.estimate > 0, a.isFinite, r.estimate.isFinite {
            let percent = Int(((a - r.estimate) / r.estimate * 100).rounded())
            delta = (percent > 0 ? "+" : "") + "\(percent)%"
        }
        return [String(r.testCount), Self.seconds(r.estimate), actual, delta]
    }

    /// `formatSeconds` up to two minutes, then `12m05s` and `2h05m`: a table column stays narrow for long classes.
    static func seconds(_ value: Double) -> String {
        guard value.isFinite, value >= 120 else { return formatSeconds(value) }
        let total = Int(value.rounded())
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        if total < 6_000 { return "\(total / 60)m\(two(total % 60))s" }
        return "\(total / 3600)h\(two(total / 60 % 60))m"
    }
}
