/// The statistics every module shares (estimates, history summaries, probes): one definition of each.
public enum Statistics {
    /// The `fraction` (0...1) percentile of `values`, interpolating linearly between the closest ranks (the "type 7"
    /// definition of spreadsheets and NumPy's default), so a handful of samples still gives a value between them;
    /// nil when empty.
    public static func percentile(_ values: [Double], _ fraction: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = min(max(fraction, 0), 1) * Double(sorted.count - 1)
        let lower = Int(rank)
        let upper = min(lower + 1, sorted.count - 1)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (rank - Double(lower))
    }

    /// The middle value of `values` (the mean of the two middle ones for an even count: the 0.5 percentile); nil
    /// when empty. Every median Fanout prints, the benchmarks' included, is this one.
    public static func median(_ values: [Double]) -> Double? { percentile(values, 0.5) }
}
