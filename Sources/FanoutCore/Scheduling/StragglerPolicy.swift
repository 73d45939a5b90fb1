/// A unit that is running, as the straggler rule sees it.
public struct RunningUnit: Sendable, Hashable {
    public var id: Int
    public var start: Double
    public var estimate: Double
    public var agent: String
    /// Already has a backup, or is itself one: never backed up (again).
    public var excluded: Bool

    public init(id: Int, start: Double, estimate: Double, agent: String, excluded: Bool = false) {
        self.id = id
        self.start = start
        self.estimate = estimate
        self.agent = agent
        self.excluded = excluded
    }
}

/// When slots sit idle with nothing left in the queue, a unit running far past its estimate is started again on an
/// idle slot (preferring another agent); the first copy to finish wins and the other is stopped.
///
/// Expected gain: a fresh copy should take about its estimate (plus start-up). The straggler has already overrun
/// its estimate by `elapsed − estimate`; with the heavy tails test durations have, it is expected to overrun at
/// least that much again. So the gain is `(elapsed − estimate) − (estimate + overhead)`: positive once the unit has
/// run more than twice its estimate. At most one backup per unit, and only past a minimum overrun, so noise in
/// short units does not start needless copies.
public struct StragglerPolicy: Sendable, Hashable {
    public var minimumOverrun: Double
    public var overhead: Double

    public init(minimumOverrun: Double = 1, overhead: Double = 0.02) {
        self.minimumOverrun = minimumOverrun
        self.overhead = overhead
    }

    public func expectedGain(_ unit: RunningUnit, now: Double) -> Double {
        let elapsed = now - unit.start
        return (elapsed - unit.estimate) - (unit.estimate + overhead)
    }

    /// The unit most worth backing up on an idle slot of `agent`, or nil. Only when the queue is empty.
    public func pick(_ running: [RunningUnit], now: Double, queueEmpty: Bool, idleAgent agent: String,
                     otherAgentsAlive: Bool) -> Int? {
        guard queueEmpty else { return nil }
        return running
            .filter { !$0.excluded && (!otherAgentsAlive || $0.agent != agent) }
            .filter { now - $0.start - $0.estimate >= minimumOverrun && expectedGain($0, now: now) > 0 }
            .max { (expectedGain($0, now: now), -$0.id) < (expectedGain($1, now: now), -$1.id) }?.id
    }
}
