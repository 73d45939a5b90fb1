import FanoutCore
import FanoutHistory

/// Each measure result's recent history, put into the report so that every page drawn from report.json alone can
/// show the trend of its metric (FanoutReports never reads the history).
enum MeasurementTrends {
    /// Earlier runs a trend shows.
    static let runs = 10

    /// Fills `trend` of every measurement of `report` from `store`: the newest `runs` earlier results of the same
    /// test and metric on the same destination and hardware class, oldest first. Call it before the run is
    /// recorded; the run's own id is excluded all the same.
    static func fill(_ report: inout RunReport, from store: HistoryStore, runs: Int = runs) throws(HistoryError) {
        for i in report.measurements.indices {
            let record = report.measurements[i]
            let m = record.measurement
            let past = try store.measurementTrend(of: m.test, metric: m.metricKey, destination: record.destination,
                                                  hardwareClass: record.hardwareClass, excludingRun: report.runID,
                                                  limit: runs)
            report.measurements[i].trend = PerformanceTrend(runs: past.reversed().map { p in
                PerformanceTrend.Point(runID: p.runID, startedAt: p.startedAt, average: p.measurement.meanOfValues,
                                       baseline: p.baseline)
            })
        }
    }
}
