import FanoutAgents
import FanoutCore

/// What a unit's process stream reported, in order (a local slot's or an SSH agent's): every usage sample, and the
/// events. The usage tests of both transports hold them to the same rules.
public struct UsageRun {
    public var events: [ProcessEvent] = []
    public var released = false

    public init() {}

    public var samples: [ResourceUsage] {
        events.compactMap { if case .usage(let u) = $0 { u } else { nil } }
    }
    public var final: ResourceUsage? { samples.last }
    public var ending: UnitEnding? {
        if case .ended(let e) = events.last { e } else { nil }
    }
    /// The last event is the ending and the one before it the unit's total.
    public var totalComesRightBeforeTheEnd: Bool {
        guard events.count >= 2, case .ended = events[events.count - 1], case .usage = events[events.count - 2] else { return false }
        return true
    }
    /// No sample ever goes down: not its CPU, peak memory or CPU wait.
    public var neverDecreases: Bool {
        zip(samples, samples.dropFirst()).allSatisfy { a, b in
            b.cpuSeconds >= a.cpuSeconds && (b.peakMemoryBytes ?? 0) >= (a.peakMemoryBytes ?? 0)
                && (b.cpuWaitSeconds ?? 0) >= (a.cpuWaitSeconds ?? 0)
        }
    }
}
