import FanoutCore

extension ConsoleSummary {
    // MARK: - Support

    struct Context {
        let destinations: [String]
        let units: [Int: UnitReport]
        private let ranks: [String: Int]

        init(_ report: RunReport) {
            var seen = Set<String>()
            destinations = (report.destinations + report.results.map(\.destination)).filter { seen.insert($0).inserted }
            ranks = Dictionary(destinations.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            units = Dictionary(report.units.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        }

        func rank(_ destination: String) -> Int { ranks[destination] ?? Int.max }
    }

    /// Lines being built. Text from the report goes through `wrapped`, which makes it terminal-safe and fits it.
    struct Output {
        let width: Int
        let style: ConsoleStyle
        var lines: [String] = []

        mutating func blank() { lines.append("") }

        /// A line composed here, already known to fit.
        mutating func plain(_ line: String) { lines.append(line) }

        mutating func wrapped(_ text: String, indent: String = "", continuation: String? = nil,
                              style apply: ((String) -> String)? = nil) {
            for line in ConsoleText.wrap(TextSanitizer.terminalSafe(text), width: width, indent: indent,
                                         continuation: continuation) {
                lines.append(apply.map { $0(line) } ?? line)
            }
        }
    }
}
