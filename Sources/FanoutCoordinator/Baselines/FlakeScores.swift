import FanoutCore
import FanoutHistory

/// Each test's flake score, put into the report so that every page drawn from report.json alone can say whether a
/// failure is likely a flake (FanoutReports never reads the history).
enum FlakeScores {
    /// Recent runs a score counts (as `fanout history flaky` by default).
    static let runs = 20

    /// Sets `flakeScore` of every result of `report` that `store` holds evidence of a flake for, over the newest
    /// `runs` runs: call it after the run is recorded, so that its own verdicts count.
    static func fill(_ report: inout RunReport, from store: HistoryStore, runs: Int = runs) throws(HistoryError) {
        struct Key: Hashable { var test: TestID; var destination: String }
        let stats = try store.flakyTests(runs: runs)
        let scores = Dictionary(stats.map { (Key(test: $0.test, destination: $0.destination), $0.score) },
                                uniquingKeysWith: { first, _ in first })
        guard !scores.isEmpty else { return }
        for (i, r) in report.results.enumerated() {
            report.results[i].flakeScore = scores[Key(test: r.id, destination: r.destination)]
        }
    }
}
