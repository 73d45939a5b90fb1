import FanoutCore

/// Work stealing at test boundaries (the rules are Core's `StealPolicy` and `DispatchState`). When a slot is idle and
/// nothing it can take is queued, the not-yet-started tail of a running unit is cut into parts for the idle slots;
/// the original is stopped as it starts the first stolen test (`testStarted` tells its consumer), so every test runs
/// once.
extension Dispatcher {
    /// Each running unit's own process reports every test it starts. True: that test was taken over by another
    /// unit, so this process must stop now (and the test is not this unit's to report).
    func testStarted(_ id: TestID, unit: Int, now: Double) -> Bool {
        running.testStarted(id, unit: unit, now: now)
    }

    /// The tests this unit handed over to others (released from its collector before it is judged).
    func handedOverTests(_ unit: Int) -> Set<TestID> { running.handedOver(by: unit) }

    /// Learns this run's test times (what a first run has instead of history) and clears the unit's current test.
    func testEnded(_ id: TestID, _ attempt: Attempt, destination: String, unit: Int) {
        running.testEnded(id, attempt, destination: destination, unit: unit)
    }
}
