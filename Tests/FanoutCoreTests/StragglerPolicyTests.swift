import Testing
@testable import FanoutCore

@Suite(.timeLimit(.minutes(2))) struct StragglerPolicyTests {
    let policy = StragglerPolicy(minimumOverrun: 1, overhead: 0.02)

    func unit(_ id: Int, start: Double, estimate: Double, agent: String = "a1", excluded: Bool = false) -> RunningUnit {
        RunningUnit(id: id, start: start, estimate: estimate, agent: agent, excluded: excluded)
    }

    @Test func noBackupWhileWorkIsQueued() {
        #expect(policy.pick([unit(1, start: 0, estimate: 1)], now: 100, queueEmpty: false, idleAgent: "a2",
                            otherAgentsAlive: true) == nil)
    }

    @Test func backupOnlyOnceTheExpectedGainIsPositive() {
        let u = unit(1, start: 0, estimate: 3)
        // Virtual clock: at 5.9 s the overrun (2.9 s) is less than a fresh copy (3.02 s): no backup yet.
        #expect(policy.pick([u], now: 5.9, queueEmpty: true, idleAgent: "a2", otherAgentsAlive: true) == nil)
        #expect(policy.expectedGain(u, now: 5.9) < 0)
        // At 6.1 s it pays.
        #expect(policy.pick([u], now: 6.1, queueEmpty: true, idleAgent: "a2", otherAgentsAlive: true) == 1)
    }

    @Test func shortUnitsNeedTheMinimumOverrun() {
        let u = unit(1, start: 0, estimate: 0.1)
        #expect(policy.pick([u], now: 0.9, queueEmpty: true, idleAgent: "a2", otherAgentsAlive: true) == nil,
                "0.9 s is 9× its estimate, but noise in a 0.1 s unit is not worth a copy")
        #expect(policy.pick([u], now: 1.2, queueEmpty: true, idleAgent: "a2", otherAgentsAlive: true) == 1)
    }

    @Test func atMostOneBackupAndNeverABackupOfABackup() {
        let u = unit(1, start: 0, estimate: 1, excluded: true)
        #expect(policy.pick([u], now: 100, queueEmpty: true, idleAgent: "a2", otherAgentsAlive: true) == nil)
    }

    @Test func prefersAnotherAgentAndTheLargestGain() {
        let same = unit(1, start: 0, estimate: 1, agent: "a1")
        let small = unit(2, start: 0, estimate: 2, agent: "a2")
        let big = unit(3, start: 0, estimate: 1.5, agent: "a3")
        #expect(policy.pick([same, small, big], now: 10, queueEmpty: true, idleAgent: "a1", otherAgentsAlive: true) == 3)
        #expect(policy.pick([same], now: 10, queueEmpty: true, idleAgent: "a1", otherAgentsAlive: true) == nil)
        #expect(policy.pick([same], now: 10, queueEmpty: true, idleAgent: "a1", otherAgentsAlive: false) == 1,
                "with one agent, a backup on it is still better than waiting")
    }

    @Test func backupShortensAStragglingRunOnAVirtualClock() {
        // 4 slots; one unit's estimate is 1 s but it really takes 20 s; the rest take what they say.
        let items = (0..<12).map { item("M", "C\($0)", 1) }
        var s = Scheduler(items: items, options: SchedulerOptions(slots: 4, overhead: 0))
        var free = [0.0, 0.0, 0.0, 0.0]
        var runs: [(unit: WorkUnit, start: Double, end: Double, slot: Int)] = []
        var first = true
        while let slot = free.indices.min(by: { free[$0] < free[$1] }), let u = s.next(now: free[slot]) {
            let took = first ? 20.0 : u.estimate
            first = false
            runs.append((u, free[slot], free[slot] + took, slot))
            free[slot] += took
        }
        let straggler = runs[0]
        // Idle slots ask for a backup as the clock advances.
        var backupEnd: Double?
        var t = free.filter { $0 < straggler.end }.min() ?? 0
        while t < straggler.end, backupEnd == nil {
            let running = [RunningUnit(id: straggler.unit.id, start: straggler.start, estimate: straggler.unit.estimate, agent: "a1")]
            if policy.pick(running, now: t, queueEmpty: s.isEmpty, idleAgent: "a2", otherAgentsAlive: true) != nil {
                backupEnd = t + straggler.unit.estimate
            }
            t += 0.1
        }
        let end = min(straggler.end, backupEnd ?? .infinity)
        #expect(backupEnd != nil)
        #expect(end < 5, "the backup finished first: the run ends at \(end) s instead of 20 s")
    }
}
