import FanoutCore

/// Rows for a front end to show: the coordinator decides what to say, the CLI decides how it looks.
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

    /// Plain text with aligned columns. Cells hold test and class names and agents' messages: each is cleaned by
    /// `TextSanitizer` and kept on its line, so a table can never drive the terminal.
    public func rendered() -> String {
        let headers = headers.map { TextSanitizer.terminalSafe($0, singleLine: true) }
        let rows = rows.map { $0.map { TextSanitizer.terminalSafe($0, singleLine: true) } }
        let title = TextSanitizer.terminalSafe(title)
        var widths = headers.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in
                let pad = String(repeating: " ", count: max(0, (i < widths.count ? widths[i] : 0) - c.count))
                return numeric.contains(i) ? pad + c : c + pad
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        var out = [title, line(headers), line(widths.map { String(repeating: "-", count: $0) })]
        out += rows.map(line)
        if rows.isEmpty { out.append("(none)") }
        return out.joined(separator: "\n")
    }
}
