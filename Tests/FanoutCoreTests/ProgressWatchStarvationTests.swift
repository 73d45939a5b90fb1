import Testing
@testable import FanoutCore

/// A computing test starved of CPU by other work on its machine is not hung. Seen on swift-collections 1.6.0
/// (`fanout-bench real`, see BENCHMARKS.md's real suites): at nice 19 on a 2-core machine at load 15, a warm run
/// stopped ten computing units as stalled ("no output and no CPU time for 10.0 s, its stall window (p95 of its last
/// 1 run: 0.13 s)") and re-queued them until the benchmark's 15-minute timeout, where the first run (no history:
/// 300 s windows) had passed every test in 443 s. CPU samples alone cannot tell the two apart; the run-queue wait
/// (``ResourceUsage/cpuWaitSeconds``) can: a starved test is ready to run all along, a blocked one is asleep.
/// Virtual clock: samples every 0.5 s.
@Suite struct ProgressWatchStarvationTests {
    let test = TestID(module: "M", suite: "C", name: "testComputes")
    let rules = TimeLimitRules()

    /// Feeds `w` a sample every 0.5 s from 0 to `until`: `cpuRate(t)` and `waitRate(t)` of a core over the step
    /// ending at t (`waitRate` nil: the transport cannot tell), and the threads `ready(t)` at t; returns the first
    /// limit hit.
    func run(_ w: inout ProgressWatch, until end: Double, cpuRate: (Double) -> Double,
             waitRate: ((Double) -> Double)?, ready: (Double) -> Int? = { _ in nil }) -> TimeLimitHit? {
        var cpu = 0.0, wait = 0.0
        for step in 0...Int(end * 2) {
            let t = Double(step) * 0.5
            cpu += 0.5 * cpuRate(t)
            wait += 0.5 * (waitRate?(t) ?? 0)
            w.cpu(cpu, waiting: waitRate == nil ? nil : wait, ready: ready(t), at: t)
            if let hit = w.check(at: t) { return hit }
        }
        return nil
    }

    /// History: it took 0.13 s, so its stall window is the minimum, 10 s.
    func watch() -> ProgressWatch {
        var w = ProgressWatch(start: 0, limits: [test: rules.limits(durations: [0.13])], fallback: rules.limits(durations: []))
        w.started(test, at: 0)
        return w
    }

    /// 2 s at a full core, then 15 s at 1 % of a core (runnable all along: the machine's cores are taken by other
    /// work), then a full core again until it ends at 20 s.
    static func starvedCPU(_ t: Double) -> Double { t <= 2 || t > 17 ? 1.0 : 0.01 }
    static func starvedWait(_ t: Double) -> Double { t <= 2 || t > 17 ? 0 : 0.99 }

    @Test func aComputingTestStarvedOfCPUIsNotStalled() {
        var w = watch()
        let hit = run(&w, until: 20, cpuRate: Self.starvedCPU, waitRate: Self.starvedWait)
        #expect(hit == nil, "stopped as \(String(describing: hit?.kind)) after \(hit?.elapsed ?? 0) s")
        #expect(abs(w.cpuWaitByTest[test, default: 0] - 14.85) < 0.01, "its wait is its own: \(w.cpuWaitByTest)")
    }

    @Test func aTestThatGetsNoCoreAtAllIsReadyAtEverySampleThoughTheKernelCountsNoWaitYet() {
        // The kernel adds to a thread's wait when it gets a core again: one that gets none for 15 s shows no wait
        // then, and one of 14.85 s at once when it runs again. Every sample found it ready to run.
        var w = watch()
        var settled = false
        let hit = run(&w, until: 20, cpuRate: { $0 <= 2 || $0 > 17 ? 1 : 0 },
                      waitRate: { t in
                          guard t > 17, !settled else { return 0 }
                          settled = true
                          return 2 * 14.85 // the whole wait, counted in the half second it got a core again
                      },
                      ready: { _ in 1 })
        #expect(hit == nil, "stopped as \(String(describing: hit?.kind)) after \(hit?.elapsed ?? 0) s")
        #expect(w.cpuWaitByTest[test, default: 0] >= 14.85, "\(w.cpuWaitByTest)")
    }

    @Test func aBlockedTestFoundReadyAtSomeSamplesIsStillStalled() {
        // Its threads wake now and then and a sample catches one ready, never two samples in a row.
        var w = watch()
        let hit = run(&w, until: 60, cpuRate: { $0 <= 1 ? 1 : 0.002 }, waitRate: { _ in 0.01 },
                      ready: { t in Int(t * 2) % 3 == 0 ? 1 : 0 })
        #expect(hit?.kind == .stalled)
        #expect((hit?.elapsed ?? 0) <= 12, "\(String(describing: hit))")
    }

    @Test func withoutRunQueueSamplesCPUTimeAloneDecides() {
        // macOS agents and kernels without schedstat: the starved test looks blocked, as it did before.
        var w = watch()
        let hit = run(&w, until: 20, cpuRate: Self.starvedCPU, waitRate: nil)
        #expect(hit?.kind == .stalled)
    }

    @Test func aBlockedTestThatWakesNowAndThenIsStillStalledWithinItsWindow() {
        // Asleep on a socket, its runtime's threads wake briefly: a little CPU, a little wait (a loaded machine).
        var w = watch()
        let hit = run(&w, until: 60, cpuRate: { $0 <= 1 ? 1 : 0.005 }, waitRate: { $0 <= 1 ? 0 : 0.1 })
        #expect(hit?.kind == .stalled)
        #expect((hit?.elapsed ?? 0) <= 12, "within its 10 s window of the last progress at 1 s: \(String(describing: hit))")
    }

    @Test func aStarvedTestWithoutHistoryIsAComputingTestAtItsCeiling() {
        // No history: ceiling 1800 s, stall 300 s. Starved from the start: 1 % of a core, ready all along. Past its
        // ceiling it has not had its ceiling's CPU time, so it runs on, up to 4 × the ceiling.
        let limits = rules.limits(durations: [])
        var w = ProgressWatch(start: 0, limits: [test: limits], fallback: limits)
        w.started(test, at: 0)
        let hit = run(&w, until: 4 * limits.ceiling + 10, cpuRate: { _ in 0.01 }, waitRate: { _ in 0.99 })
        #expect(hit?.kind == .ceiling)
        #expect((hit?.elapsed ?? 0) > 4 * limits.ceiling, "\(String(describing: hit))")
        let basis = hit?.basis ?? ""
        #expect(basis.contains("of time on a core"), "\(basis)")
    }
}
