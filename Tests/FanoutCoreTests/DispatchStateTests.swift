import Testing
@testable import FanoutCore

/// The queue rules on plain values (no actor, no clock: times are handed in): what a free slot takes next, when it
/// waits or is done, steals and copies of stragglers, and what a unit's end does.
@Suite struct DispatchStateTests {
    func state(_ items: [WorkItem], slots: Int = 4, capacity: CapacityPolicy? = nil) -> DispatchState {
        DispatchState(scheduler: Scheduler(items: items, options: SchedulerOptions(slots: slots)), capacity: capacity)
    }

    func names(_ unit: WorkUnit?) -> [String] { unit?.items.map(\.suite.name) ?? [] }

    // MARK: - What a free slot takes

    @Test func aSlotTakesOnlyWorkForTheDestinationsItsAgentServes() {
        var s = state([item("M", "Mac", 10, destination: "mac"), item("M", "Linux", 10, destination: "linux")])
        s.agentReady("a", serves: ["linux"])
        s.agentReady("b", serves: ["mac"])
        #expect(names(s.queued(for: "a", now: 0, overhead: nil)) == ["Linux"])
        #expect(s.queued(for: "a", now: 0, overhead: nil) == nil, "the mac item is not a's")
        #expect(names(s.queued(for: "b", now: 0, overhead: nil)) == ["Mac"])
        #expect(s.queued(for: "unknown", now: 0, overhead: nil) == nil, "an agent that is not ready serves nothing")
    }

    @Test func aRetryAvoidsTheAgentItFailedOnWhileAnotherIsAlive() {
        var retry = item("M", "Flaky", 10)
        retry.retry = 1
        retry.avoidAgent = "a"
        var s = state([retry])
        s.agentReady("a", serves: ["local"])
        s.agentReady("b", serves: ["local"])
        #expect(s.queued(for: "a", now: 0, overhead: nil) == nil)
        s.agentGone("b")
        #expect(names(s.queued(for: "a", now: 0, overhead: nil)) == ["Flaky"], "alone, the agent takes it after all")
    }

    @Test func anExclusiveUnitStartsOnlyOnAnIdleAgentAndHoldsIt() {
        var bench = item("M", "Bench", 20)
        bench.exclusive = true
        var s = state([bench, item("M", "Other", 10), item("M", "Third", 5)])
        s.agentReady("a", serves: ["local"])
        #expect(names(s.queued(for: "a", now: 0, overhead: nil)) == ["Bench"], "longest first, the agent is idle")
        #expect(s.queued(for: "a", now: 0, overhead: nil) == nil, "held: nothing else starts beside it")
        #expect(s.spare(for: "a", now: 1, overhead: nil, moreMayCome: false) == .wait, "no steal or copy either")
        _ = s.ended(1, at: 20)
        #expect(!names(s.queued(for: "a", now: 20, overhead: nil)).isEmpty, "free again once it ended")

        // Queued while other work runs there, it waits for the agent to be idle.
        var t = state([item("M", "First", 30)])
        t.agentReady("a", serves: ["local"])
        #expect(names(t.queued(for: "a", now: 0, overhead: nil)) == ["First"])
        t.requeue([bench])
        #expect(t.queued(for: "a", now: 1, overhead: nil) == nil, "an exclusive unit never starts beside other work")
        _ = t.ended(1, at: 30)
        #expect(names(t.queued(for: "a", now: 30, overhead: nil)) == ["Bench"])
    }

    @Test func aHeldAgentTakesNoStealNorCopyWhileAnotherAgentDoes() {
        var s = state([item("M", "Long", 8, tests: 8), item("M", "Meter", 1, tests: 1)], slots: 2)
        s.agentReady("a", serves: ["local"])
        s.agentReady("b", serves: ["local"])
        let long = s.queued(for: "a", now: 0, overhead: 0.01)!
        let meter = s.queued(for: "a", now: 0, overhead: 0.01)!
        #expect(names(long) == ["Long"] && names(meter) == ["Meter"])
        s.running.measured(meter.id, test: meter.testIDs[0], now: 0.1)
        #expect(s.spare(for: "a", now: 0.5, overhead: 0.01, moreMayCome: false) == .wait,
                "a unit there measures: nothing new starts on a, not even a piece of Long")
        guard case .run(let part) = s.spare(for: "b", now: 0.5, overhead: 0.01, moreMayCome: false) else {
            Testing.Issue.record("b is not held: it takes a piece of Long")
            return
        }
        #expect(s.running[part.id]?.takenFrom == long.id)
    }

    @Test func computingWorkWaitsForAFreeCoreAndFeedbackFirstWorkMayShareOne() {
        var busy = item("M", "Busy", 20)
        busy.cpuShare = 1
        var compute = item("M", "Compute", 10)
        compute.cpuShare = 1
        var s = state([busy, compute], capacity: CapacityPolicy())
        s.agentReady("a", serves: ["local"], resources: AgentResources(cores: 1))
        #expect(names(s.queued(for: "a", now: 0, overhead: nil)) == ["Busy"])
        #expect(s.queued(for: "a", now: 0, overhead: nil) == nil, "its one core is taken")

        var urgent = compute
        urgent.startsFirst = true
        s.requeue([urgent])
        let taken = s.queued(for: "a", now: 0, overhead: nil)
        #expect(names(taken) == ["Compute"] && taken?.items.allSatisfy { $0.startsFirst == true } == true,
                "feedback-first work may share a core (the other computing item still waits)")

        var off = state([busy, compute], capacity: nil)
        off.agentReady("a", serves: ["local"], resources: AgentResources(cores: 1))
        _ = off.queued(for: "a", now: 0, overhead: nil)
        #expect(!names(off.queued(for: "a", now: 0, overhead: nil)).isEmpty, "packing off: every slot takes work")
    }

    // MARK: - Waiting, done, stealing, copies

    @Test func aSlotIsDoneOnlyWhenNothingRunsAndNothingMoreMayCome() {
        var whole = item("M", "A", 10)
        whole.keepWhole = true
        var s = state([whole])
        s.agentReady("a", serves: ["local"])
        #expect(s.spare(for: "a", now: 0, overhead: nil, moreMayCome: true) == .wait, "a queue's feed may still give work")
        _ = s.queued(for: "a", now: 0, overhead: nil)
        #expect(s.spare(for: "a", now: 0, overhead: nil, moreMayCome: false) == .wait, "a running unit may give work back")
        _ = s.ended(1, at: 10)
        #expect(s.spare(for: "a", now: 10, overhead: nil, moreMayCome: false) == .done)
    }

    @Test func anIdleSlotTakesTheUnstartedTailOfARunningUnitAndTheOthersWaitForTheirParts() {
        var s = state([item("M", "Long", 8, tests: 8)], slots: 3)
        s.agentReady("a", serves: ["local"])
        let first = s.queued(for: "a", now: 0, overhead: 0.01)
        #expect(first?.testIDs.count == 8)
        // Two more slots of the agent are idle: one waits already, this one asks.
        s.idle["a"] = 1
        guard case .run(let part) = s.spare(for: "a", now: 0.5, overhead: 0.01, moreMayCome: false) else {
            Testing.Issue.record("no steal")
            return
        }
        #expect(s.steals.count == 1 && s.steals[0].from == first?.id)
        #expect(s.stolenParts.count == 1, "a part waits for the other idle slot")
        let stolen = Set(part.testIDs).union(s.stolenParts.flatMap(\.testIDs))
        #expect(s.running.handedOver(by: first?.id ?? 0) == stolen)
        #expect(s.running[first?.id ?? 0]?.unit.testIDs.count == 8 - stolen.count, "the original keeps the rest")
        let waitingPart = s.stolenParts.first
        let waiting = s.queued(for: "a", now: 0.5, overhead: 0.01)
        #expect(waiting != nil && waiting?.id == waitingPart?.id && s.stolenParts.isEmpty, "the waiting part is taken first")
        #expect(s.running[waiting?.id ?? 0]?.takenFrom == first?.id)
        #expect(s.takeEvents() == [.stole(s.steals[0], agent: "a")])
    }

    @Test func aStragglerGetsACopyOnAnotherAgentAndTheFirstToFinishStopsTheOther() {
        var s = state([item("M", "Slow", 1, tests: 1)])
        s.agentReady("a", serves: ["local"])
        s.agentReady("b", serves: ["local"])
        let original = s.queued(for: "a", now: 0, overhead: nil)!
        #expect(s.spare(for: "b", now: 1.5, overhead: nil, moreMayCome: false) == .wait, "not far enough past its estimate")
        #expect(s.spare(for: "a", now: 5, overhead: nil, moreMayCome: false) == .wait, "never a copy on its own agent")
        guard case .run(let copy) = s.spare(for: "b", now: 5, overhead: nil, moreMayCome: false) else {
            Testing.Issue.record("no copy")
            return
        }
        #expect(copy.testIDs == original.testIDs && s.running[copy.id]?.twin == original.id && s.running[original.id]?.twin == copy.id)
        #expect(s.takeEvents() == [.backedUp(unit: original.id, agent: "a", ranFor: 5, estimate: 1, backup: copy.id, on: "b")])
        let won = s.ended(copy.id, at: 6)
        #expect(won.twinToStop == original.id && !won.superseded)
        let lost = s.ended(original.id, at: 6.1)
        #expect(lost.superseded && lost.twinToStop == nil, "the original's results do not count")
    }

    @Test func anOrderCheckIsNeverCopiedAndSupersedesNothing() {
        var s = state([item("M", "Check", 1, tests: 1)])
        s.agentReady("a", serves: ["local"])
        s.agentReady("b", serves: ["local"])
        let check = s.queued(for: "a", now: 0, overhead: nil)!
        #expect(s.spare(for: "b", now: 9, overhead: nil, moreMayCome: false, checks: [check.id]) == .wait)
        #expect(!s.ended(check.id, at: 10, counts: false).superseded)
    }

    // MARK: - Draining and removing

    @Test func drainingDropsQueuedWorkAndWaitingPartsAndRemovingTakesADestinationOut() {
        var s = state([item("M", "A", 10, destination: "x"), item("M", "B", 10, destination: "y"),
                       item("M", "C", 10, destination: "y")])
        #expect(s.remove(destination: "y").map(\.suite.name).sorted() == ["B", "C"])
        #expect(s.hasWork && s.remainingWork == 10)
        #expect(s.drain() == 1)
        #expect(!s.hasWork && s.remainingWork == 0)
    }
}
