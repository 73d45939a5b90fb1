/// One phase of a run and the wall-clock seconds it took (report.json's `timing.phases[]`).
public struct PhaseTime: Codable, Sendable, Hashable {
    /// `start-up`, `queue`, `checks`, `selective`, `build`, `discover`, `history`, `estimate`, `plan`, `agents`,
    /// `tests`, `wind-down`, `assemble`, `judge`, `record` (docs/report-schema.md, `Timing`, says what each covers).
    public var phase: String
    public var seconds: Double

    public init(_ phase: String, seconds: Double) {
        self.phase = phase
        self.seconds = seconds
    }
}

/// Splits a run's wall clock into its phases, one after another: ``end(_:at:)`` closes the phase that began where the
/// previous one ended, so the phases add up to the time from the timeline's start to its last mark, and the time
/// outside the tests is all accounted for. Times are seconds on the run's clock.
public struct PhaseTimeline: Sendable, Hashable {
    public private(set) var phases: [PhaseTime] = []
    /// Where the next phase begins.
    public private(set) var mark: Double

    public init(start: Double = 0) {
        mark = start
    }

    /// Ends `phase` at `now` (a clock that went back, or a phase that ended before the previous one, counts 0 s).
    public mutating func end(_ phase: String, at now: Double) {
        phases.append(PhaseTime(phase, seconds: max(0, now - mark)))
        mark = max(mark, now)
    }

    /// Seconds in all.
    public var total: Double { phases.reduce(0) { $0 + $1.seconds } }
}
