/// How measured values and their changes are written for people (verdict messages, the console summary, JUnit,
/// `fanout baseline show`), so that every place says the same thing the same way.
public enum PerformanceText {
    /// A value in its unit; seconds below one second in milliseconds, where measurements live:
    /// `1.250 s`, `318.2 ms`, `1.234 ms`.
    public static func value(_ value: Double, unit: String) -> String {
        guard unit == "seconds" || unit == "s" else { return "\(String(format3: value)) \(unit)" }
        let size = abs(value)
        if size >= 1 || size == 0 || !size.isFinite { return "\(String(format3: value)) s" }
        let ms = value * 1000
        return abs(ms) < 10 ? "\(String(format3: ms)) ms" : "\(String(format1: ms)) ms"
    }

    /// `+300.2 ms`, `-1.000 ms`.
    public static func signedValue(_ value: Double, unit: String) -> String {
        (value > 0 ? "+" : "") + Self.value(value, unit: unit)
    }

    /// A fraction as a percentage: `10%`, `12.5%`, `1666.7%`.
    public static func percent(_ fraction: Double) -> String {
        let p = fraction * 100
        guard p.isFinite, abs(p) < 1e12 else { return String(format1: p) + "%" }
        let rounded = p.rounded()
        return (abs(p - rounded) < 1e-9 ? String(Int(rounded)) : String(format1: p)) + "%"
    }

    /// `+12.5%`, `-3%`; `new` when there is nothing to compare with (a baseline of 0).
    public static func signedPercent(_ fraction: Double?) -> String {
        guard let fraction else { return "from 0" }
        return (fraction > 0 ? "+" : "") + percent(fraction)
    }
}
