import FanoutCore

/// A titled table of plain text, as the inspection commands print it (`fanout plan`, `fanout list`,
/// `fanout history …`, `fanout agents check`, `fanout baseline …`, `fanout quarantine list`): the Coordinator fills
/// it with what to say, ``rendered()`` lays it out. Every cell is shown whole: the tables of the console summary,
/// which fit the terminal's width (`ClassTable`), cut cells instead.
public struct Table: Sendable, Hashable {
    public var title: String
    public var headers: [String]
    public var rows: [[String]]
    /// Columns that hold numbers (aligned right).
    public var numeric: Set<Int>

    public init(title: String, headers: [String], rows: [[String]], numeric: Set<Int> = []) {
        self.title = title
        self.headers = headers
        self.rows = rows
        self.numeric = numeric
    }

    /// Plain text with aligned columns, measured in display columns (`ConsoleText`: a wide character takes two).
    /// Cells hold test and class names and agents' messages: each is cleaned by `TextSanitizer` and kept on its
    /// line, so a table can never drive the terminal.
    public func rendered() -> String {
        let headers = headers.map { TextSanitizer.terminalSafe($0, singleLine: true) }
        let rows = rows.map { $0.map { TextSanitizer.terminalSafe($0, singleLine: true) } }
        let title = TextSanitizer.terminalSafe(title)
        var widths = headers.map { ConsoleText.width($0) }
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], ConsoleText.width(cell)) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in
                let width = i < widths.count ? widths[i] : 0
                return numeric.contains(i) ? ConsoleText.padLeft(c, to: width) : ConsoleText.padRight(c, to: width)
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        var out = [title, line(headers), line(widths.map { String(repeating: "-", count: $0) })]
        out += rows.map(line)
        if rows.isEmpty { out.append("(none)") }
        return out.joined(separator: "\n")
    }
}
