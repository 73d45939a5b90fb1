import Testing
@testable import FanoutCore

/// A computing test starved of CPU by other work on its machine is not hung, but CPU samples alone cannot tell the
/// two apart. Seen on swift-collections 1.6.0 (`fanout-bench real`, see BENCHMARKS.md's real suites): at nice 19 on a
/// 2-core machine at load 15, a warm run stopped ten computing units as stalled ("no output and no CPU time for
/// 10.0 s, its stall window (p95 of its last 1 run: 0.13 s)") and re-queued them until the benchmark's 15-minute
/// timeout, where the first run (no history: 300 s windows) had passed every test in 443 s.
///
/// A fix needs a second input: whether the process was runnable while it got no CPU (Linux: state `R` in
/// /proc/PID/stat, or the run-queue wait, the second field of /proc/PID/schedstat, growing), which transports would
/// sample with the CPU time. Until then this test records the known issue; when it passes, withKnownIssue fails and
/// it should become a plain expectation fed with that input.
@Suite struct ProgressWatchStarvationTests {
    let test = TestID(module: "M", suite: "C", name: "testComputes")

    @Test func aComputingTestStarvedOfCPUIsNotStalled() {
        let rules = TimeLimitRules()
        // History: it took 0.13 s, so its stall window is the minimum, 10 s.
        let limits = rules.limits(durations: [0.13])
        var w = ProgressWatch(start: 0, limits: [test: limits], fallback: rules.limits(durations: []))
        w.started(test, at: 0)
        var cpu = 0.0, hit: TimeLimitHit?
        // 2 s at a full core, then 15 s at 1 % of a core (runnable all along: the machine's cores are taken by
        // other work), then a full core again until it ends at 20 s.
        for step in 0...40 {
            let t = Double(step) * 0.5
            cpu += 0.5 * (t <= 2 || t > 17 ? 1.0 : 0.01)
            w.cpu(cpu, at: t)
            if hit == nil { hit = w.check(at: t) }
        }
        withKnownIssue("ProgressWatch calls a CPU-starved computing test stalled") {
            #expect(hit == nil, "stopped as \(String(describing: hit?.kind)) after \(hit?.elapsed ?? 0) s")
        }
    }
}
