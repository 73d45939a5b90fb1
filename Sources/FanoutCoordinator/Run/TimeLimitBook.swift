import FanoutCore

/// The time limits of every test of a run, worked out once before the first unit starts: from the rules, each
/// test's own history on its destination, its class's configured limits and its destination's floor.
public struct TimeLimitBook: Sendable {
    private var tests: [String: [TestID: TestLimits]] = [:]
    private var fallbacks: [String: TestLimits] = [:]
    private let defaults: TestLimits

    public init(settings: RunSettings, destinations: [DestinationSpec], items: [WorkItem],
                histories: [String: TimingHistory]) throws(FanoutError) {
        let rules = settings.timeLimits
        let patterns = try settings.classTimeLimits.map { limit throws(FanoutError) in
            (try ClassPatterns([limit.pattern], option: "timeout.classes"), limit.limits)
        }
        defaults = rules.limits(durations: [])
        for spec in destinations {
            fallbacks[spec.name] = rules.limits(durations: [], floor: settings.timeLimitFloor(on: spec))
        }
        for item in items {
            let spec = destinations.first { $0.name == item.destination }
            let floor = settings.timeLimitFloor(on: spec)
            let explicit = patterns.first { $0.0.matches(item.suite) }?.1
            let history = histories[item.destination]
            var mine = tests[item.destination] ?? [:]
            for id in item.testIDs {
                mine[id] = rules.limits(durations: history?.tests[id] ?? [], censored: history?.censoredDuration(of: id),
                                        explicit: explicit, floor: floor, cpuShare: history?.cpuShare[item.suite])
            }
            tests[item.destination] = mine
            if let explicit {
                // A class's own limits also cover its set-up and tear-down, between its tests.
                let own = rules.limits(durations: [], explicit: explicit, floor: floor)
                fallbacks[item.destination] = (fallbacks[item.destination] ?? own).union(own)
            }
        }
    }

    /// The limits of one test (the defaults for a test the run did not plan, e.g. a framework surprise).
    public func limits(of test: TestID, on destination: String) -> TestLimits {
        tests[destination]?[test] ?? fallbacks[destination] ?? defaults
    }

    /// The limits of a unit's tests, and those of what runs between them.
    public func limits(of unit: WorkUnit) -> (tests: [TestID: TestLimits], between: TestLimits) {
        let mine = tests[unit.destination] ?? [:]
        var out: [TestID: TestLimits] = [:]
        for id in unit.testIDs { out[id] = mine[id] ?? fallbacks[unit.destination] ?? defaults }
        return (out, fallbacks[unit.destination] ?? defaults)
    }

    /// The unit's backstop on its agent, for when the coordinator can no longer stop it: every test at its ceiling,
    /// one after the other, plus what runs between them.
    public func backstop(of unit: WorkUnit) -> Double {
        let (tests, between) = limits(of: unit)
        return tests.values.reduce(between.ceiling) { $0 + $1.ceiling }
    }
}
