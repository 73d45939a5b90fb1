import FanoutCore

/// Work stealing at test boundaries (the rule is Core's `StealPolicy`). When a slot is idle and nothing it can take
/// is queued, the not-yet-started tail of a running unit is cut into parts for the idle slots; the original is
/// stopped as it starts the first stolen test (`testStarted` tells its consumer), so every test runs once.
extension Dispatcher {
    /// Each running unit's own process reports every test it starts. True: that test was taken over by another
    /// unit, so this process must stop now (and the test is not this unit's to report).
    func testStarted(_ id: TestID, unit: Int, now: Double) -> Bool {
        if handedOver[unit]?.contains(id) == true { return true }
        running[unit]?.started.insert(id)
        running[unit]?.current = (id, now)
        return false
    }

    /// The tests this unit handed over to others (released from its collector before it is judged).
    func handedOverTests(_ unit: Int) -> Set<TestID> { handedOver[unit] ?? [] }

    /// Learns this run's test times (what a first run has instead of history) and clears the unit's current test.
    func testEnded(_ id: TestID, _ attempt: Attempt, destination: String, unit: Int) {
        if running[unit]?.current?.test == id { running[unit]?.current = nil }
        guard attempt.outcome == .passed || attempt.outcome == .failed, attempt.duration > 0 else { return }
        observed["\(destination)|\(id.suite)", default: (0, 0)].sum += attempt.duration
        observed["\(destination)|\(id.suite)", default: (0, 0)].count += 1
    }

    /// A part cut off earlier that waits for a slot of an agent serving its destination.
    func takeStolenPart(for slot: SlotRef, serving destinations: Set<String>, now: Double) -> WorkUnit? {
        guard let i = stolenParts.firstIndex(where: { destinations.contains($0.destination) }) else { return nil }
        let part = stolenParts.remove(at: i)
        let from = steals.last { $0.to.contains(part.id) }?.from
        running[part.id] = Running(unit: part, start: now, agent: slot.agent, twin: nil, isBackup: false, takenFrom: from)
        return part
    }

    /// Cuts the most worthwhile running unit for this slot and the other idle slots of its destination; this slot
    /// gets the first part, the rest wait in `stolenParts` for the other idle slots.
    func steal(for slot: SlotRef, serving destinations: Set<String>, now: Double,
               computingAllowed: Bool = true) -> WorkUnit? {
        var best: StealPolicy.Steal?
        for destination in destinations {
            let idleSlots = 1 + idle.filter { serves[$0.key]?.contains(destination) == true }.values.reduce(0, +)
            let policy = StealPolicy(overhead: overhead(on: slot.agent) ?? StealPolicy().overhead)
            let candidates = running.values.filter {
                $0.unit.destination == destination && (computingAllowed || !isComputing($0))
            }.map { candidate($0, now: now) }
            if let s = policy.steal(from: candidates, idleSlots: idleSlots), s.gain > (best?.gain ?? 0) { best = s }
        }
        guard let steal = best, var original = running[steal.unit] else { return nil }
        var parts = steal.parts.map { scheduler.makeUnit(Self.items(of: original.unit, taking: $0, estimate: { self.estimate($0, in: original.unit) })) }
        let stolen = Set(steal.stolen)
        handedOver[steal.unit, default: []].formUnion(stolen)
        if let rest = original.unit.removing(stolen) { original.unit = rest } else { original.unit.items = [] }
        running[steal.unit] = original
        steals.append(StealReport(from: steal.unit, to: parts.map(\.id), tests: stolen.count, at: now,
                                  expectedBefore: steal.before, expectedAfter: steal.after))
        progress(.phase("unit \(steal.unit) on \(original.agent): \(stolen.count) test\(stolen.count == 1 ? "" : "s") it had not started go to "
            + "\(parts.count) idle slot\(parts.count == 1 ? "" : "s") (its work expected to end in "
            + "\(formatSeconds(steal.before)) → \(formatSeconds(steal.after)))"))
        let first = parts.removeFirst()
        stolenParts += parts
        running[first.id] = Running(unit: first, start: now, agent: slot.agent, twin: nil, isBackup: false,
                                    takenFrom: steal.unit)
        wakeAll()
        return first
    }

    /// A running unit as the policy sees it: its tests not started yet in the order its process runs them (module,
    /// class, then method: XCTest's binary order), with this run's observed times where it has them.
    private func candidate(_ r: Running, now: Double) -> StealPolicy.Candidate {
        let ordered = r.unit.items.sorted { $0.suite < $1.suite }.flatMap(\.testIDs)
        let unstarted = ordered.filter { !r.started.contains($0) }.map { StealPolicy.Pending($0, estimate($0, in: r.unit)) }
        let remaining = r.current.map { max(0, estimate($0.test, in: r.unit) - (now - $0.since)) } ?? 0
        // A unit that has printed measurements is measuring: its tests stay in it.
        let stealable = r.twin == nil && !r.isBackup && !r.measuring && r.unit.items.allSatisfy(\.canBeCut)
        return StealPolicy.Candidate(unit: r.unit.id, unstarted: unstarted, currentRemaining: remaining,
                                     stealable: stealable)
    }

    /// Seconds a test is expected to take: the mean of its class's tests that ended in this run, else its item's
    /// estimate shared evenly among its tests.
    private func estimate(_ id: TestID, in unit: WorkUnit) -> Double {
        if let seen = observed["\(unit.destination)|\(id.suite)"], seen.count > 0 { return seen.sum / Double(seen.count) }
        guard let item = unit.items.first(where: { $0.suite == id.suite }) else { return 0 }
        return item.estimate / Double(max(1, item.tests.count))
    }

    /// The work items of a part: the taken tests of each class, in order, estimated test by test.
    static func items(of unit: WorkUnit, taking tests: [TestID], estimate: (TestID) -> Double) -> [WorkItem] {
        var items: [WorkItem] = []
        for item in unit.items {
            let mine = tests.filter { $0.suite == item.suite }
            guard !mine.isEmpty else { continue }
            let names = Set(mine.map(\.name))
            var part = item
            part.tests = item.tests.filter { names.contains($0) }
            part.isWholeSuite = false
            part.estimate = mine.reduce(0) { $0 + estimate($1) }
            items.append(part)
        }
        return items
    }
}
