import FanoutCore

/// Performance tests measured alone (README "Performance tests"; the rules are Core's `RunningUnits`). An exclusive
/// unit (a class known to measure) starts only on an idle agent; while it runs, or while any unit that has started
/// printing measurements runs, nothing else starts on that agent: no queued work, no stolen part, no copy of a
/// straggler. Each measurement says whether it was taken alone: no other unit ran on its agent between its test's
/// start and the measurement.
extension Dispatcher {
    /// A running unit printed a measurement of `test`: from now on its agent is held, and the measurement is
    /// marked alone or not.
    func unitMeasured(_ unit: Int, test: TestID, now: Double) {
        running.measured(unit, test: test, now: now)
    }
}
