/// A measurement failure taken under contention is not a verdict (README "Performance tests"). XCTest fails a
/// `measure` test when its relative standard deviation is over the maximum and its standard deviation over 0.1 s
/// (swift-corelibs-xctest's WallClockTimeMetric: "The relative standard deviation of the measurements is X% which
/// is higher than the max allowed of Y%."). Other work on the same machine makes exactly that noise. Such a failure,
/// when its measurement was not taken alone, is set aside and the test runs once more, alone; the alone run's
/// outcome is the verdict.
public struct RemeasurePolicy: Sendable, Hashable {
    public init() {}

    /// The words of XCTest's deviation failure.
    static let deviationFailure = "relative standard deviation of the measurements is"

    /// Whether this attempt failed by XCTest's deviation rule.
    public static func failedByDeviation(_ attempt: Attempt) -> Bool {
        attempt.outcome == .failed && attempt.issues.contains { $0.isFailure && $0.message.contains(deviationFailure) }
    }

    /// The tests of this unit to run again alone: failed by deviation, measured beside other work (or not known to
    /// be alone), and not run again alone already. One item per class, exclusive.
    public func items(for unit: WorkUnit, result: UnitResult, measuredAlone: [TestID: Bool],
                      alreadyRemeasured: Set<TestID>) -> [WorkItem] {
        var out: [WorkItem] = []
        for item in unit.items where !item.shared {
            let names = item.tests.filter { name in
                let id = TestID(suite: item.suite, name: name)
                guard let attempt = result.attempts[id], Self.failedByDeviation(attempt) else { return false }
                return measuredAlone[id] != true && !alreadyRemeasured.contains(id)
            }
            guard !names.isEmpty else { continue }
            let seconds = names.reduce(0.0) { $0 + (result.attempts[TestID(suite: item.suite, name: $1)]?.duration ?? 0) }
            var again = WorkItem(suite: item.suite, framework: item.framework, destination: item.destination,
                                 tests: names, isWholeSuite: false, estimate: max(seconds, 0.01), source: item.source,
                                 retry: item.retry)
            again.exclusive = true
            again.queueItem = item.queueItem // queue mode: its verdict is the queue item's too
            out.append(again)
        }
        return out
    }
}
