import FanoutCore

/// A slot: one place on one agent where one test process runs at a time.
struct SlotRef: Sendable, Hashable {
    var agent: String
    var index: Int
}

/// One unit that ended, with everything the report needs about it.
struct FinishedUnit: Sendable {
    var unit: WorkUnit
    /// Stopped because its twin (a straggler or its backup) finished first: its results are not counted.
    var superseded = false
    /// Work stealing: the unit whose not-yet-started tests this unit took over, and how many tests this unit handed
    /// over to others.
    var takenFrom: Int?
    var handedOver = 0
    var slot: SlotRef
    var startedAt: Double
    var endedAt: Double
    var ending: UnitEnding
    var command: String
    var log: String
    var result: UnitResult
    /// What its processes consumed, when the agent measured it.
    var usage: ResourceUsage? = nil
    /// An order check: the test it replayed after the tests that preceded its failure (only its attempt counts).
    var replayOf: TestID? = nil
}

extension FinishedUnit {
    /// What the report keeps of it.
    var record: UnitRecord {
        var record = UnitRecord(unit: unit, agent: slot.agent, slot: slot.index, startedAt: startedAt, endedAt: endedAt,
                                ending: ending.description, superseded: superseded, takenFrom: takenFrom,
                                handedOver: handedOver, command: command, log: log, result: result, usage: usage)
        record.replayOf = replayOf
        return record
    }
}
