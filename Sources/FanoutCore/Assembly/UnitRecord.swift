/// One unit that ended: where and when it ran, how it ended, and what it collected. Made once, by the coordinator
/// as the unit's process ends; the dispatcher, the run's ledger and the report all read this same value (the
/// report's ``UnitReport`` and the history's rows are projections of it), so a report is assembled (and tested)
/// without any process.
public struct UnitRecord: Sendable, Hashable {
    public var unit: WorkUnit
    public var agent: String
    public var slot: Int
    /// Seconds since the run started.
    public var startedAt: Double
    public var endedAt: Double
    /// How its process ended (the report says it as text: `exit 0`, `agent lost: …`).
    public var ending: UnitEnding
    /// Stopped because its twin (a straggler or its backup) finished first: its results are not counted.
    public var superseded: Bool
    /// Work stealing: the unit whose not-yet-started tests this unit took over, and how many of its own tests it
    /// handed over to others.
    public var takenFrom: Int?
    public var handedOver: Int
    /// The command line that ran, quoted for a shell (empty when it could not be made).
    public var command: String
    public var log: String
    public var result: UnitResult
    /// What its processes consumed (nil: the agent could not measure it).
    public var usage: ResourceUsage?
    /// An order check: the test it replayed after the tests that preceded its failure.
    public var replayOf: TestID?

    public init(unit: WorkUnit, agent: String, slot: Int, startedAt: Double, endedAt: Double, ending: UnitEnding,
                superseded: Bool = false, takenFrom: Int? = nil, handedOver: Int = 0, command: String = "",
                log: String = "", result: UnitResult, usage: ResourceUsage? = nil) {
        self.unit = unit
        self.agent = agent
        self.slot = slot
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.ending = ending
        self.superseded = superseded
        self.takenFrom = takenFrom
        self.handedOver = handedOver
        self.command = command
        self.log = log
        self.result = result
        self.usage = usage
    }
}

extension WorkUnit {
    /// `Module.Class` of every class in the unit, with `(n tests)` when only some of its tests were selected.
    public var suiteDescriptions: [String] {
        items.map { $0.isWholeSuite ? $0.suite.description : "\($0.suite) (\($0.tests.count) tests)" }
    }
}
