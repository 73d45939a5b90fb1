/// Why Fanout itself stopped a healthy unit before its process ended by itself: for the run's good, not because
/// anything went wrong. A report keeps a unit's ending as text (``UnitReport/ending``); these are the texts that
/// mean it, written by the assembly and read by the writers, so the two cannot drift apart.
public enum UnitStop: String, Sendable, CaseIterable {
    /// Work stealing: idle slots took over the tests it had not started, and it was stopped where it would have
    /// started one of them. What it ran before counts.
    case handedOver = "handed-over"
    /// Straggler backup: it and its twin ran the same tests, the twin finished first, and this one was stopped.
    /// Its results are not counted; the twin's are.
    case twinFinishedFirst = "twin-stopped"

    /// The unit's ending as the report says it.
    public var ending: String {
        switch self {
        case .handedOver: UnitEnding.handedOver.description
        case .twinFinishedFirst: "stopped: its twin (straggler backup) finished first"
        }
    }

    /// The stop an ending text means; nil for every other ending (an exit, a crash, a lost agent, …).
    public init?(ending: String) {
        guard let stop = Self.allCases.first(where: { $0.ending == ending }) else { return nil }
        self = stop
    }
}

extension UnitReport {
    /// Whether Fanout stopped this unit for the run's good (work stealing, or its twin won), and how.
    public var stop: UnitStop? { UnitStop(ending: summary.ending) }
}
