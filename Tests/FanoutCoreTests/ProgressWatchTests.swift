import Testing
@testable import FanoutCore

/// The limit rule on a virtual clock: what is hung, what is only slow, and what history changes.
@Suite(.timeLimit(.minutes(2))) struct ProgressWatchTests {
    let rules = TimeLimitRules()
    let a = TestID(module: "M", suite: "C", name: "testA")
    let b = TestID(module: "M", suite: "C", name: "testB")

    func watch(_ limits: [TestID: TestLimits], start: Double = 0) -> ProgressWatch {
        ProgressWatch(start: start, limits: limits, fallback: rules.limits(durations: []))
    }

    /// Runs `test` from `start` to `end` in steps of `step` seconds, feeding CPU growth of `cpuRate` per second and
    /// output every `outputEvery` seconds; returns the first limit reached.
    func drive(_ w: inout ProgressWatch, from start: Double, to end: Double, step: Double = 0.5, cpuRate: Double,
               cpuStart: Double = 0, outputEvery: Double? = nil) -> TimeLimitHit? {
        var t = start, lastOutput = start
        while t <= end {
            w.cpu(cpuStart + cpuRate * (t - start), at: t)
            if let every = outputEvery, t - lastOutput >= every { w.output(at: t); lastOutput = t }
            if let hit = w.check(at: t) { return hit }
            t += step
        }
        return nil
    }

    // MARK: - The rule

    @Test func withoutHistoryTheLimitsAreMinutes() {
        let l = rules.limits(durations: [])
        #expect(l.stall == 300 && l.ceiling == 1800)
        #expect(l.basis == "no history: the defaults")
    }

    @Test func withHistoryTheLimitsFollowTheTestsOwnDurations() {
        let quick = rules.limits(durations: [1, 2, 2])
        #expect(quick.stall == 10, "5 × p95 (2 s), never under 10 s")
        #expect(quick.ceiling == 120, "10 × p95 (20 s), never under 120 s")
        let long = rules.limits(durations: [40, 30, 20])
        #expect(abs(long.stall - 5 * Estimator.percentile([20, 30, 40], 0.95)) < 1e-9)
        #expect(abs(long.ceiling - 10 * Estimator.percentile([20, 30, 40], 0.95)) < 1e-9)
        #expect(long.basis.hasPrefix("p95 of its last 3 runs"))
    }

    @Test func aTimeoutRaisesTheNextLimitsToTwiceWhatItRan() {
        // Killed after 60 s with a history of 2 s: next time it gets at least 120 s, for both limits.
        let l = rules.limits(durations: [2], censored: 60)
        #expect(l.stall == 120 && l.ceiling == 120)
        #expect(l.basis.contains("stopped after 1m 0s") || l.basis.contains("stopped after 60"))
        // Without history it already had 300 s of silence: stopped at 400 s, it gets 800 s next time.
        let silent = rules.limits(durations: [], censored: 400)
        #expect(silent.stall == 800 && silent.ceiling == 1800)
        // Never more than the no-history ceiling: a test that hangs every run costs at most that.
        let hung = rules.limits(durations: [], censored: 1800)
        #expect(hung.stall == 1800 && hung.ceiling == 1800)
        // Old reports recorded time-outs with no duration: they change nothing.
        #expect(rules.limits(durations: [2], censored: 0) == rules.limits(durations: [2]))
    }

    @Test func aClassesOwnLimitsWinOverHistoryAndTimeouts() {
        let explicit = TimeLimitRules.ClassLimits(stall: nil, ceiling: 20)
        let l = rules.limits(durations: [100], censored: 500, explicit: explicit)
        #expect(l.ceiling == 20 && l.stall == 20, "a ceiling below the stall window is the stall window too")
        #expect(l.basis == "configured for its class")
        let both = rules.limits(durations: [], explicit: .init(stall: 5, ceiling: 50))
        #expect(both.stall == 5 && both.ceiling == 50)
    }

    @Test func aDestinationsFloorRaisesBothLimits() {
        let l = rules.limits(durations: [0.5], floor: 300)
        #expect(l.stall == 300 && l.ceiling == 300)
    }

    // MARK: - The watch

    @Test func aComputingTestIsNeverStalledOnlyCeilinged() {
        var w = watch([a: rules.limits(durations: [])])
        w.started(a, at: 0)
        // Three minutes of CPU with no output at all (a first run: no history): alive.
        #expect(drive(&w, from: 0, to: 180, cpuRate: 1) == nil)
        // Computing at a quarter of a core (8 processes sharing 2 cores) is progress too.
        #expect(drive(&w, from: 180, to: 1799, step: 1, cpuRate: 0.25, cpuStart: 180) == nil)
        // A busy infinite loop: the ceiling stops it once it has had the ceiling's worth of time on a core (it had
        // 585 s of CPU by 1800 s: 1215 s more at a full core).
        let hit = drive(&w, from: 1800, to: 3100, step: 1, cpuRate: 1, cpuStart: 585)
        #expect(hit?.kind == .ceiling && hit?.test == a && hit?.limit == 1800)
        #expect((hit?.elapsed ?? 0) > 3000 && (hit?.elapsed ?? 0) <= 3017, "\(hit?.elapsed ?? 0)")
    }

    /// History says its class computes (a core to itself, p95 12 s: ceiling 120 s). Slowed to a quarter of a core by
    /// others sharing the cores, it needs 4 × as long: still computing, it is not stopped as a busy loop.
    @Test func aComputingTestSlowedBySharedCoresIsNotCeilinged() {
        let l = rules.limits(durations: [12, 11, 12], cpuShare: 0.97)
        #expect(l.ceiling == 120 && l.computeShare == 0.97)
        var w = watch([a: l])
        w.started(a, at: 0)
        #expect(drive(&w, from: 0, to: 119, step: 1, cpuRate: 0.25) == nil)
        // Past the wall ceiling, at a quarter of a core: it has had 30 s of CPU of the 116 s its ceiling allows.
        #expect(drive(&w, from: 119, to: 300, step: 1, cpuRate: 0.25, cpuStart: 29.75) == nil)
        // A real busy loop, even a starved one: stopped once its CPU reaches the ceiling's worth (here at ~466 s).
        let hit = drive(&w, from: 300, to: 600, step: 1, cpuRate: 0.25, cpuStart: 75)
        #expect(hit?.kind == .ceiling && hit?.limit == 120)
        #expect((hit?.elapsed ?? 0) > 440 && (hit?.elapsed ?? 0) <= TestLimits.contendedCeilingFactor * 120)
        #expect(hit?.basis?.hasSuffix("of time on a core") == true, "\(hit?.basis ?? "")")
    }

    /// A computing test alone on a core, looping forever, is stopped at its ceiling as before; one starved of CPU is
    /// stopped at 4 × the ceiling however little CPU it got.
    @Test func aComputingBusyLoopIsStillCeilinged() {
        let l = rules.limits(durations: [12], cpuShare: 1)
        var alone = watch([a: l])
        alone.started(a, at: 0)
        let hit = drive(&alone, from: 0, to: 200, step: 1, cpuRate: 1)
        #expect(hit?.kind == .ceiling && (hit?.elapsed ?? 0) > 120 && (hit?.elapsed ?? 0) <= 122)
        var starved = watch([a: l])
        starved.started(a, at: 0)
        let late = drive(&starved, from: 0, to: 600, step: 1, cpuRate: 0.05)
        #expect(late?.kind == .ceiling && (late?.elapsed ?? 0) > 480 && (late?.elapsed ?? 0) <= 482)
    }

    /// The share comes from history only for a computing class; a waiting test that keeps logging is stopped at its
    /// wall-clock ceiling; a configured ceiling is wall-clock time even for a test that computes.
    @Test func aWaitingTestAndAConfiguredCeilingAreWallClock() {
        #expect(rules.limits(durations: [], cpuShare: 1).computeShare == nil)
        #expect(rules.limits(durations: [2], cpuShare: 0.02).computeShare == nil)
        #expect(rules.limits(durations: [2], cpuShare: 1.8).computeShare == 1, "a share above a core counts as one")
        let configured = rules.limits(durations: [2], explicit: .init(ceiling: 30), cpuShare: 1)
        #expect(configured.computeShare == nil && configured.wallClockCeiling)
        var w = watch([a: rules.limits(durations: [12], cpuShare: 0.02)])
        w.started(a, at: 0)
        let hit = drive(&w, from: 0, to: 200, step: 1, cpuRate: 0, outputEvery: 5)
        #expect(hit?.kind == .ceiling && (hit?.elapsed ?? 0) <= 122, "a waiting test's ceiling is wall-clock time")
        var spin = watch([a: configured])
        spin.started(a, at: 0)
        let stopped = drive(&spin, from: 0, to: 60, step: 1, cpuRate: 0.25)
        #expect(stopped?.kind == .ceiling && (stopped?.elapsed ?? 0) <= 32, "a configured ceiling: wall-clock time")
        #expect(stopped?.basis?.hasSuffix("of time on a core") == false)
    }

    /// A history gone wrong (the case seen in the benchmark: another test's 0.00 s gave a 10 s computing test a
    /// 120 s ceiling, and 8 slots crowding 2 cores gave it 8 % of a core): its own CPU samples say it computes, so
    /// the ceiling counts time on a core, and it finishes.
    @Test func aCrowdedComputingTestWithAWrongHistoryIsNotCeilinged() {
        let l = rules.limits(durations: [0.001, 0.002])
        #expect(l.ceiling == 120 && l.computeShare == nil)
        var w = watch([a: l])
        w.started(a, at: 0)
        #expect(drive(&w, from: 0, to: 130, step: 1, cpuRate: 0.08) == nil)
        w.ended(a, at: 130)
        #expect(w.check(at: 131) == nil)
    }

    @Test func aTestThatBlocksSilentlyFor75SecondsPasses() {
        var w = watch([a: rules.limits(durations: []), b: rules.limits(durations: [])])
        w.started(a, at: 0)
        #expect(drive(&w, from: 0, to: 75, cpuRate: 0) == nil)
        w.ended(a, at: 75)
        w.started(b, at: 75)
        w.ended(b, at: 75.1)
        #expect(w.check(at: 76) == nil)
    }

    @Test func aTestBlockedForeverIsCaughtWithinItsStallWindow() {
        var w = watch([a: rules.limits(durations: [])])
        w.output(at: 0.2)
        w.started(a, at: 1)
        let hit = drive(&w, from: 1, to: 400, cpuRate: 0, cpuStart: 0.3)
        #expect(hit?.kind == .stalled && hit?.test == a && hit?.limit == 300)
        let elapsed = hit?.elapsed ?? 0
        #expect(elapsed > 300 && elapsed <= 301)
    }

    @Test func onceATestHasHistoryAHangIsCaughtWithinASmallMultipleOfItsDuration() {
        // Usually 2 s: a silent hang is stopped after 10 s (5 ×), not 300 s.
        var w = watch([a: rules.limits(durations: [2, 2.1, 1.9])])
        w.started(a, at: 0)
        let hit = drive(&w, from: 0, to: 60, cpuRate: 0)
        #expect(hit?.kind == .stalled)
        #expect((hit?.elapsed ?? 0) <= 12)
    }

    @Test func outputIsProgressToo() {
        var w = watch([a: rules.limits(durations: [2])])
        w.started(a, at: 0)
        // No CPU, but a line every 5 s (a test polling a server and logging): not stalled, until its ceiling.
        let hit = drive(&w, from: 0, to: 200, cpuRate: 0, outputEvery: 5)
        #expect(hit?.kind == .ceiling && hit?.limit == 120)
    }

    @Test func aTrickleOfCPUIsNotProgress() {
        // A blocked test whose runtime threads wake now and then: 0.01 s of CPU every 10 s.
        var w = watch([a: rules.limits(durations: [])])
        w.started(a, at: 0)
        var hit: TimeLimitHit?
        var t = 0.0
        while hit == nil, t < 400 {
            w.cpu(0.001 * t, at: t)
            hit = w.check(at: t)
            t += 0.5
        }
        #expect(hit?.kind == .stalled && hit?.limit == 300)
    }

    @Test func withoutCPUSamplesOnlyTheCeilingApplies() {
        // A transport that cannot measure CPU: a silent test may be computing, so it is never called stalled.
        var w = watch([a: rules.limits(durations: [])])
        w.started(a, at: 0)
        #expect(!w.measuresCPU)
        #expect(w.check(at: 1000) == nil)
        #expect(w.check(at: 1801)?.kind == .ceiling)
    }

    @Test func aUnitThatKeepsFinishingTestsIsNeverStopped() {
        // 200 tests of 50 s each, each well within its own ceiling: 10,000 s in all, and never a limit.
        let tests = (0..<200).map { TestID(module: "M", suite: "Big", name: "test\($0)") }
        var w = watch(Dictionary(uniqueKeysWithValues: tests.map { ($0, rules.limits(durations: [50])) }))
        var t = 0.0
        for test in tests {
            w.started(test, at: t)
            #expect(drive(&w, from: t, to: t + 50, step: 5, cpuRate: 1, cpuStart: t) == nil)
            t += 50
            w.ended(test, at: t)
        }
        #expect(w.check(at: t + 1) == nil)
    }

    @Test func silenceBetweenTestsUsesTheUnitsMostGenerousLimits() {
        // Class set-up that hangs after the first test: no test runs, the defaults apply from that test's end.
        var w = watch([a: rules.limits(durations: [1]), b: rules.limits(durations: [1])])
        w.started(a, at: 0)
        w.ended(a, at: 1)
        #expect(drive(&w, from: 1, to: 250, cpuRate: 0) == nil)
        let hit = drive(&w, from: 250, to: 400, cpuRate: 0)
        #expect(hit?.kind == .stalled && hit?.test == nil && hit?.limit == 300)
    }

    @Test func testsRunningAtOnceShareTheMostGenerousWindowAndTheCPU() {
        var w = watch([a: rules.limits(durations: [20]), b: rules.limits(durations: [30])])
        w.started(a, at: 0)
        w.started(b, at: 0)
        w.cpu(0, at: 0)
        w.cpu(4, at: 2)
        #expect(w.cpuByTest[a] == 2 && w.cpuByTest[b] == 2)
        // a alone would be stalled after 100 s; with b running (150 s), the unit is not.
        #expect(drive(&w, from: 2, to: 140, cpuRate: 0, cpuStart: 4) == nil)
        let hit = drive(&w, from: 140, to: 200, cpuRate: 0, cpuStart: 4)
        #expect(hit?.kind == .stalled && hit?.limit == 150 && hit?.test == a, "the oldest running test is named")
    }

    @Test func theHitSaysWhatHappenedInWords() {
        let hit = TimeLimitHit(kind: .stalled, limit: 300, test: a, elapsed: 312, basis: "no history: the defaults")
        #expect(hit.description.hasPrefix("timed out: no output and no CPU time for"))
        #expect(hit.description.contains("no history: the defaults"))
        #expect(UnitEnding.timedOut(limit: 60).description == "timed out after \(formatSeconds(60))")
    }

    // MARK: - What the collector keeps of a stopped test

    @Test func aStoppedTestKeepsHowLongItRanAsItsDuration() {
        let unit = WorkUnit(id: 7, items: [WorkItem(suite: a.suite, framework: .xctest, destination: "local",
                                                    tests: ["testA", "testB"], isWholeSuite: true, estimate: 1,
                                                    source: .noHistory(secondsPerTest: 0.1))])
        var c = UnitCollector(unit: unit, agent: "local")
        c.consume(.started(a))
        let hit = TimeLimitHit(kind: .stalled, limit: 300, test: a, elapsed: 301.5, basis: "no history: the defaults")
        let r = c.finish(.timedOut(hit), diagnostics: "", runningFor: [a: 301.5])
        let attempt = r.attempts[a]
        #expect(attempt?.outcome == .timedOut && attempt?.duration == 301.5, "a censored observation, not 0")
        #expect(attempt?.issues.last?.message.hasPrefix("Fanout stopped the test: no output and no CPU time for 5 m") == true)
        #expect(r.leftovers.flatMap(\.tests) == ["testB"], "the rest goes back to the queue")
    }
}
