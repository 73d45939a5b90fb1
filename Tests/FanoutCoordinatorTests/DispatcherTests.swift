@testable import FanoutCoordinator
import FanoutCore
import FanoutTestSupport
import Synchronization
import Testing

/// The dispatcher's time-driven rules on a `VirtualClock` the test advances by hand: a straggler's twin, steals at
/// test boundaries, and the ETA. Nothing runs and nothing waits for real time; each wait below is for a state the
/// dispatcher must reach, with a deadline.
@Suite(.timeLimit(.minutes(1))) struct DispatcherTests {
    let clock = VirtualClock()
    let events = Events()

    final class Events: Sendable {
        private let list = Mutex<[ProgressEvent]>([])
        func append(_ event: ProgressEvent) { list.withLock { $0.append(event) } }
        func withLock<T>(_ body: ([ProgressEvent]) -> T) -> T { list.withLock { body($0) } }
    }

    func dispatcher(_ items: [WorkItem], slots: Int) -> Dispatcher {
        let events = events
        return Dispatcher(scheduler: Scheduler(items: items, options: SchedulerOptions(slots: slots)), items: items,
                          requeueBudget: 2, retries: 0, slots: slots, clock: RunClock(clock), capacity: nil,
                          progress: { event in events.append(event) })
    }

    static func item(_ name: String, tests: Int, estimate: Double) -> WorkItem {
        WorkItem(suite: SuiteID(module: "M", name: name), framework: .xctest, destination: "local",
                 tests: (0..<tests).map { "t\($0)" }, isWholeSuite: true, estimate: estimate,
                 source: .history(samples: 1))
    }

    /// Ends the unit as its process and `UnitExecution` would: each test's end reported live as its line arrives,
    /// every test passed, then the unit handed back.
    static func pass(_ unit: WorkUnit, on slot: SlotRef, from start: Double, to end: Double,
                     in state: Dispatcher) async {
        var collector = UnitCollector(unit: unit, agent: slot.agent)
        for id in unit.testIDs {
            _ = collector.consume(.started(id))
            if let (id, attempt) = collector.consume(.ended(id, .passed, duration: 0.01, reason: nil)) {
                await state.recordTestEnded(id, attempt, destination: unit.destination, unit: unit.id)
            }
        }
        await state.complete(UnitRecord(unit: unit, agent: slot.agent, slot: slot.index, startedAt: start, endedAt: end,
                                        ending: .exited(0), result: collector.finish(.exited(0), diagnostics: "")))
    }

    /// Waits (yielding, never sleeping) until `condition` holds; fails the test after 10 s of real time.
    func until(_ what: String, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while await !condition() {
            guard ContinuousClock.now < deadline else { throw Failure("never happened: \(what)") }
            await Task.yield()
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// An idle slot waits, looks again every 250 ms of the clock, and starts a twin of the straggler exactly when
    /// it has overrun its estimate by the policy's minimum (1 s); the twin that ends first wins, the other is
    /// stopped and not counted.
    @Test func aStragglerGetsItsTwinWhenItHasOverrunByASecondAndTheFirstToEndWins() async throws {
        let state = dispatcher([Self.item("Slow", tests: 1, estimate: 0.2)], slots: 2)
        await state.agentReady("a", serves: ["local"], hardwareClass: nil)
        await state.agentReady("b", serves: ["local"], hardwareClass: nil)
        let a = SlotRef(agent: "a", index: 0), b = SlotRef(agent: "b", index: 0)
        let original = try #require(await state.next(for: a))
        let cancelled = Mutex(false)
        await state.setCanceller(original.id) { cancelled.withLock { $0 = true } }

        let waiting = Task { await state.next(for: b) }
        // 1.2 s is the first moment the rule allows a twin (0.2 s estimate + 1 s overrun); the slot looks at 0.25,
        // 0.5, … and goes back to waiting each time until then.
        try await until("slot b waits") { await state.dispatch.idle["b"] == 1 ? clock.sleeping == 1 : false }
        for _ in 0..<4 {
            clock.advance(by: .milliseconds(250))
            try await until("slot b looks again and waits") { await state.dispatch.idle["b"] == 1 ? clock.sleeping == 1 : false }
            #expect(await state.running.count == 1, "no twin before 1.2 s")
        }
        clock.advance(by: .milliseconds(250))
        let twin = try #require(await waiting.value)
        #expect(twin.id != original.id && twin.testIDs == original.testIDs)
        let copy = await state.running[twin.id]
        #expect(copy?.start == 1.25 && copy?.isBackup == true)
        #expect(events.withLock { $0 }.contains { event in
            if case .phase(let text) = event { return text.contains("backup unit \(twin.id) on b") }
            return false
        })

        // The twin ends first: the original is stopped, and what it reports later is not counted.
        await Self.pass(twin, on: b, from: 1.25, to: 1.5, in: state)
        #expect(cancelled.withLock { $0 }, "the original was stopped")
        await Self.pass(original, on: a, from: 0, to: 1.6, in: state)
        let ledger = await state.ledger
        #expect(ledger.finished.map(\.superseded) == [false, true])
        let results = await state.results(reasonForMissing: "")
        #expect(results.count == 1 && results[0].attempts.map(\.unit) == [twin.id] && results[0].outcome == .passed)
    }

    /// An idle slot with nothing queued takes over the tests a running unit has not started; the original stops as
    /// it reaches the first of them, and every test belongs to exactly one unit.
    @Test func idleSlotsTakeOverTheTestsARunningUnitHasNotStarted() async throws {
        let state = dispatcher([Self.item("Migrations", tests: 8, estimate: 8)], slots: 4)
        await state.agentReady("a", serves: ["local"], hardwareClass: nil)
        let slots = (0..<4).map { SlotRef(agent: "a", index: $0) }
        let original = try #require(await state.next(for: slots[0]))
        #expect(original.testIDs.count == 8)
        #expect(await state.testStarted(original.testIDs[0], unit: original.id, now: 0) == false)
        clock.advance(by: .milliseconds(500))

        var parts: [WorkUnit] = []
        for slot in slots.dropFirst() {
            if let part = await state.next(for: slot) { parts.append(part) }
        }
        #expect(!parts.isEmpty)
        let steals = await state.steals
        #expect(steals.first?.from == original.id && steals.first?.at == 0.5, "stolen at the clock's time")
        #expect(steals.allSatisfy { $0.expectedAfter < $0.expectedBefore })
        let handedOver = await state.handedOverTests(original.id)
        let kept = original.testIDs.filter { !handedOver.contains($0) }
        // Every test belongs to exactly one unit: the original keeps some, each part the tests it did not hand over
        // again to a later part (parts may be cut again), and parts not yet taken wait for a slot.
        var owned = kept
        for part in parts + (await state.dispatch.stolenParts) {
            let again = await state.handedOverTests(part.id)
            owned += part.testIDs.filter { !again.contains($0) }
        }
        #expect(owned.count == 8 && Set(owned) == Set(original.testIDs), "\(owned)")
        // The original goes on with what it kept and stops at the first test it handed over.
        for id in kept.dropFirst() { #expect(await state.testStarted(id, unit: original.id, now: 1) == false) }
        let firstHanded = try #require(original.testIDs.first { handedOver.contains($0) })
        #expect(await state.testStarted(firstHanded, unit: original.id, now: 1) == true)
    }

    /// The ETA is the estimated work queued and running, shared by the run's slots.
    @Test func theETAIsTheWorkLeftSharedBySlots() async throws {
        let state = dispatcher([Self.item("Long", tests: 2, estimate: 4), Self.item("Short", tests: 2, estimate: 2),
                                Self.item("Tiny", tests: 1, estimate: 1)], slots: 2)
        await state.agentReady("a", serves: ["local"], hardwareClass: nil)
        let s0 = SlotRef(agent: "a", index: 0), s1 = SlotRef(agent: "a", index: 1)
        let first = try #require(await state.next(for: s0))
        let second = try #require(await state.next(for: s1))
        clock.advance(by: .seconds(2))
        let done = first.estimate < second.estimate ? (first, s0) : (second, s1)
        await Self.pass(done.0, on: done.1, from: 0, to: 2, in: state)
        let running = first.estimate < second.estimate ? second : first
        let queued = 7 - first.estimate - second.estimate
        guard case .status(let finished, let total, let failures, let eta)? = events.withLock({ $0 }).last(where: {
            if case .status = $0 { return true }
            return false
        }) else { throw Failure("no status") }
        #expect(finished == done.0.testCount && total == 5 && failures == 0,
                "\(finished) of \(total), units \(first.suiteDescriptions) \(second.suiteDescriptions)")
        #expect(abs(eta - (running.estimate + queued) / 2) < 1e-9, "eta \(eta)")
    }

    @Test func inQueueModeADestinationWhoseAgentsAreAllDoneSettlesAsNotRun() async throws {
        let state = dispatcher([], slots: 2)
        await state.openFeed(servedBy: ["local": ["agent-1"], "gpu": ["agent-2"]])
        var cpu = Self.item("CPUTests", tests: 2, estimate: 1)
        cpu.queueItem = 1
        var gpu = Self.item("GPUTests", tests: 3, estimate: 1)
        gpu.destination = "gpu"
        gpu.queueItem = 2
        await state.offer([cpu, gpu])
        // agent-2, the only one serving gpu, is done for the run (its set-up failed): gpu's item settles, cpu's waits.
        await state.agentRetired("agent-2")
        let settled = await state.takeSettled()
        #expect(settled.map(\.item) == [2])
        #expect(settled.first?.results.count == 3 && settled.first?.results.allSatisfy { $0.outcome == .notRun } == true)
        #expect(settled.first?.results.first?.attempts.first?.issues.first?.message.contains("no agent of this job was left") == true)
        #expect(await state.scheduler.queuedItems.map(\.suite.name) == ["CPUTests"])
        // Later gpu work settles at once too.
        var more = Self.item("GPUMoreTests", tests: 1, estimate: 1)
        more.destination = "gpu"
        more.queueItem = 3
        await state.offer([more])
        #expect(await state.takeSettled().map(\.item) == [3])
        // Retiring an agent outside queue mode changes nothing.
        let plain = dispatcher([Self.item("A", tests: 1, estimate: 1)], slots: 1)
        await plain.agentRetired("local")
        #expect(await plain.scheduler.queuedItems.count == 1)
    }

}
