/// The lower bound of a finished run, from the durations it measured: no schedule of this run's tests on its slots
/// could have ended sooner, whatever it grouped, split or ran first. It depends on the tests alone, never on
/// Fanout's own choices (how classes were grouped into units), so efficiency = makespan / LB is an honest figure.
public enum MeasuredLowerBound {
    /// One test's measured time on one destination.
    public struct Work: Sendable, Hashable {
        public var destination: String
        public var seconds: Double

        public init(destination: String, seconds: Double) {
            self.destination = destination
            self.seconds = seconds
        }
    }

    /// max(total test time / slots, the longest single test, and for every destination its own test time / the
    /// slots that serve it): a destination's tests can only run on the slots that serve it, so when the fleet serves
    /// destinations separately, each destination bounds the run on its own.
    /// - Parameters:
    ///   - work: every test attempt that ran (retries are work the run had to do).
    ///   - slots: all slots of the run.
    ///   - slotsServing: slots that serve each destination; a destination missing here is served by all slots.
    public static func perTest(_ work: [Work], slots: Int, slotsServing: [String: Int] = [:]) -> Double {
        var byDestination: [String: Double] = [:]
        var total = 0.0, longest = 0.0
        for w in work where w.seconds.isFinite && w.seconds > 0 {
            byDestination[w.destination, default: 0] += w.seconds
            total += w.seconds
            longest = max(longest, w.seconds)
        }
        var bound = Scheduler.lowerBound(work: total, longest: longest, slots: slots)
        for (destination, seconds) in byDestination {
            let serving = slotsServing[destination] ?? slots
            if serving > 0 { bound = max(bound, seconds / Double(serving)) }
        }
        return bound
    }
}
