import struct Foundation.Date

/// The recent history of one measure result: what earlier runs measured for the same test and metric on the same
/// destination and hardware class, so that a report shows a regression as a line that went up rather than as a
/// number to compare by hand. The coordinator fills it from the timing history while it assembles the report,
/// before the run itself is recorded, so this run is never among its own past.
public struct PerformanceTrend: Codable, Sendable, Hashable {
    /// Earlier runs, oldest first: at most the number the coordinator asks the history for (10). Empty when the
    /// history has no earlier result of this metric on this destination and hardware class.
    public var runs: [Point]

    public init(runs: [Point]) {
        self.runs = runs
    }

    /// One earlier run's result.
    public struct Point: Codable, Sendable, Hashable {
        public var runID: String
        public var startedAt: Date
        /// The mean of that run's values, in the measurement's unit (the number its verdict compared).
        public var average: Double
        /// The baseline average that run was judged against, when it had one.
        public var baseline: Double?

        public init(runID: String, startedAt: Date, average: Double, baseline: Double? = nil) {
            self.runID = runID
            self.startedAt = startedAt
            self.average = average
            self.baseline = baseline
        }
    }
}
