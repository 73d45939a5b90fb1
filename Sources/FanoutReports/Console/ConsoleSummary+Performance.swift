import FanoutCore

/// The summary's measurements section: every measure result with its verdict against its baseline.
extension ConsoleSummary {
    func measurements(_ report: RunReport, _ context: Context, _ out: inout Output) {
        guard !report.measurements.isEmpty else { return }
        out.blank()
        let judged = report.measurements.compactMap(\.verdict)
        var heading = out.style.bold("Measurements") + " (\(report.measurements.count))"
        if !judged.isEmpty {
            let regressions = judged.filter { $0.kind == .regression }.count
            let noisy = judged.filter { $0.kind == .tooNoisy }.count
            var parts: [String] = []
            if regressions > 0 { parts.append(out.style.red("\(regressions) regression\(regressions == 1 ? "" : "s")")) }
            if noisy > 0 { parts.append(out.style.yellow("\(noisy) too noisy")) }
            let passed = judged.filter { $0.kind == .passed }.count
            if passed > 0 { parts.append("\(passed) within baseline") }
            let recorded = judged.filter { $0.kind == .recorded }.count
            if recorded > 0 { parts.append("\(recorded) recorded (no baseline)") }
            heading += ": " + parts.joined(separator: ", ")
        }
        let alone = report.measurements.filter { $0.measuredAlone == true }.count
        if report.measurements.contains(where: { $0.measuredAlone != nil }) {
            heading += alone == report.measurements.count ? " · all taken alone" : " · \(alone) taken alone"
        }
        out.plain(heading)
        let records = report.measurements.sorted {
            (context.rank($0.destination), $0.measurement.test, $0.measurement.metric)
                < (context.rank($1.destination), $1.measurement.test, $1.measurement.metric)
        }
        let hardwareClasses = Set(report.measurements.map { $0.hardwareClass ?? "" })
        for record in records {
            let m = record.measurement
            var place = context.destinations.count > 1 ? " · \(record.destination)" : ""
            if hardwareClasses.count > 1 { place += " · \(record.hardwareClass ?? "unknown hardware")" }
            var text = "\(m.test)\(place): \(PerformanceFacts.measured(m))"
            if record.measuredAlone == false { text += " · taken beside other work" }
            guard let verdict = record.verdict else {
                out.wrapped(text, indent: "  ", continuation: "      ")
                continue
            }
            text += " · " + PerformanceFacts.short(verdict, unit: m.unit)
            if verdict.failsRun { text += ", fails the run" }
            let lines = ConsoleText.wrap(TextSanitizer.terminalSafe(text), width: width, indent: "  ",
                                         continuation: "      ")
            for line in lines { out.plain(Self.colorVerdict(line, verdict.kind, out.style)) }
            // What was compared with what, for the verdicts that need a look.
            if verdict.kind == .regression || verdict.kind == .tooNoisy {
                out.wrapped(verdict.message, indent: "      ", continuation: "        ", style: out.style.dim)
            }
        }
    }

    /// Colors the verdict label where it appears in a measurement line.
    static func colorVerdict(_ line: String, _ kind: PerformanceVerdict.Kind, _ style: ConsoleStyle) -> String {
        let label = PerformanceFacts.label(kind)
        guard style.color, let range = line.firstRange(of: " · " + label) else { return line }
        let colored = switch kind {
        case .regression: style.boldRed(label)
        case .tooNoisy: style.boldYellow(label)
        case .passed: style.green(label)
        case .recorded: label
        }
        var result = line
        result.replaceSubrange(range, with: " · " + colored)
        return result
    }

    /// A measured value in its unit; seconds shown in milliseconds below one second, where measurements live.
    static func measured(_ value: Double, unit: String) -> String {
        guard unit == "seconds" || unit == "s" else { return "\(String(format3: value)) \(unit)" }
        if value >= 1 || value == 0 { return "\(String(format3: value)) s" }
        let ms = value * 1000
        return ms < 10 ? "\(String(format3: ms)) ms" : "\(String(format1: ms)) ms"
    }

    /// ` on linux` when the run had several destinations.
    func regressionPlace(_ record: MeasurementRecord, _ report: RunReport) -> String {
        Set(report.destinations + report.measurements.map(\.destination)).count > 1 ? " on \(record.destination)" : ""
    }
}
