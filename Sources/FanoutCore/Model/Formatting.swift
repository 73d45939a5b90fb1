/// Seconds for people: `0.42 s`, `12.3 s`, `2 m 05 s`.
public func formatSeconds(_ s: Double) -> String {
    guard s.isFinite else { return "?" }
    if s < 10 { return String(format2: s) + " s" }
    if s < 120 { return String(format1: s) + " s" }
    let total = Int(s.rounded())
    let m = total / 60, r = total % 60
    return "\(m) m \(r < 10 ? "0" : "")\(r) s"
}

extension String {
    /// The text without the spaces at its end (a table's last column, padded to its width).
    public func trimmingTrailingSpaces() -> String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }

    /// Two decimals without Foundation's `String(format:)`, which Core avoids for portability.
    public init(format2 value: Double) { self = Self.fixed(value, digits: 2) }
    public init(format1 value: Double) { self = Self.fixed(value, digits: 1) }
    public init(format3 value: Double) { self = Self.fixed(value, digits: 3) }

    static func fixed(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let negative = value < 0
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        var frac = String(Int(scaled) - whole * Int(scale))
        while frac.count < digits { frac = "0" + frac }
        let sign = negative && scaled > 0 ? "-" : ""
        return digits == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(frac)"
    }
}

extension Duration {
    /// The duration in seconds, as a Double (the one conversion every module uses).
    public var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}
