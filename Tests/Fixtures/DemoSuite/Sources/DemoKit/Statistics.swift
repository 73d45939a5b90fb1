/// Descriptive statistics over Doubles.
public enum Statistics {
    public static func mean(_ xs: [Double]) -> Double? {
        xs.isEmpty ? nil : xs.reduce(0, +) / Double(xs.count)
    }

    public static func median(_ xs: [Double]) -> Double? {
        guard !xs.isEmpty else { return nil }
        let s = xs.sorted()
        let mid = s.count / 2
        return s.count % 2 == 0 ? (s[mid - 1] + s[mid]) / 2 : s[mid]
    }

    /// Population variance.
    public static func variance(_ xs: [Double]) -> Double? {
        guard let m = mean(xs) else { return nil }
        return xs.map { ($0 - m) * ($0 - m) }.reduce(0, +) / Double(xs.count)
    }

    public static func standardDeviation(_ xs: [Double]) -> Double? {
        variance(xs).map { $0.squareRoot() }
    }

    /// Nearest-rank percentile, p in 0...100.
    public static func percentile(_ xs: [Double], _ p: Double) -> Double? {
        guard !xs.isEmpty, (0...100).contains(p) else { return nil }
        let s = xs.sorted()
        if p == 0 { return s[0] }
        let rank = Int((p / 100 * Double(s.count)).rounded(.up))
        return s[max(0, min(s.count - 1, rank - 1))]
    }
}
