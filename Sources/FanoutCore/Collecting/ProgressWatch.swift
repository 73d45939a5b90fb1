/// Watches one running unit and decides when it stopped making progress. Pure: it is told what happened and when
/// (seconds on any clock), and asked whether a limit was reached; the caller kills the process.
///
/// - Progress is any output, a test starting or ending, or the unit's processes using at least ``cpuProgressRate``
///   of a core between two CPU samples, or being ready to run (on a core or waiting for one) at least
///   ``runnableProgressRate`` of that time, or having a thread ready to run at two samples in a row: a computing
///   test starved of CPU by other work on its machine gets almost no CPU time, but it is ready to run all along,
///   and a blocked test, asleep, is not (where the transport cannot tell, CPU time alone decides). The stall window
///   of the running test (the most generous one when several run at once) is measured from the last progress.
/// - Until the transport has reported CPU time once, the watch cannot tell a computing test from a blocked one, so
///   it never calls a unit stalled; only the ceiling applies.
/// - The ceiling of each running test is measured from its own start. Between tests (start-up, class set-up and
///   tear-down), the unit's most generous limits apply from the last test's end: a unit that keeps finishing
///   tests is never stopped, however long it runs in total.
/// - CPU time is shared among the tests that were running when it was sampled (evenly when several run at once),
///   so a test's CPU time is approximate at the sampling interval.
/// - A computing test (by history, ``TestLimits/computeShare``, or by its CPU and run-queue samples) is past its
///   ceiling only when it has also used its share of a core for the whole ceiling, or ran
///   ``TestLimits/contendedCeilingFactor`` × the ceiling: slowed by shared cores is not stuck. A configured ceiling
///   is wall-clock time.
public struct ProgressWatch: Sendable {
    /// The share of one core the unit's processes must use between two samples for it to count as progress: a
    /// blocked process's runtime threads wake now and then, a computing one uses a good part of a core even when
    /// eight of them share two.
    public static let cpuProgressRate = 0.02
    /// The share of the time the unit's processes must be ready to run (CPU time plus run-queue wait, per
    /// ``ResourceUsage/cpuWaitSeconds``) between two samples for it to count as progress without CPU time: a
    /// computing thread that others keep off the cores waits about as long as the wall clock; a blocked one, asleep,
    /// waits only for its rare wake-ups.
    public static let runnableProgressRate = 0.5

    private let limits: [TestID: TestLimits]
    /// For what runs between tests and for tests the unit did not expect.
    private let between: TestLimits
    private var lastProgress: Double
    /// Since when nothing has run (the unit's start or the last test's end), while no test runs.
    private var idleSince: Double
    private var running: [TestID: Double] = [:]
    private var lastCPU: Double?
    private var lastWait: Double?
    /// Whether the last sample found a thread of the unit ready to run.
    private var lastReady = false
    private var lastSample: Double?
    /// CPU seconds attributed to each test so far.
    public private(set) var cpuByTest: [TestID: Double] = [:]
    /// Seconds each test's processes waited for a core, ready to run, so far (shared like ``cpuByTest``): the
    /// kernel's count, or the time between two samples that both found a thread ready, whichever is more.
    public private(set) var cpuWaitByTest: [TestID: Double] = [:]

    /// - Parameters:
    ///   - limits: the limits of every test of the unit.
    ///   - fallback: the limits of anything else (used when `limits` is empty).
    public init(start: Double, limits: [TestID: TestLimits], fallback: TestLimits) {
        self.limits = limits
        between = limits.values.reduce(fallback) { $0.union($1) }
        lastProgress = start
        idleSince = start
    }

    /// Whether the transport measures CPU time for this unit (a stall can only be called when it does).
    public var measuresCPU: Bool { lastCPU != nil }

    public mutating func output(at t: Double) {
        lastProgress = max(lastProgress, t)
    }

    public mutating func started(_ test: TestID, at t: Double) {
        running[test] = t
        lastProgress = max(lastProgress, t)
    }

    public mutating func ended(_ test: TestID, at t: Double) {
        running[test] = nil
        if running.isEmpty { idleSince = t }
        lastProgress = max(lastProgress, t)
    }

    /// The unit's cumulative CPU seconds, how long its threads waited for a core, and how many are ready to run
    /// right now (nil: the transport cannot tell), as sampled at `t`.
    public mutating func cpu(_ seconds: Double, waiting: Double? = nil, ready: Int? = nil, at t: Double) {
        let used = lastCPU.map { max(0, seconds - $0) }
        var waited = lastWait.flatMap { last in waiting.map { max(0, $0 - last) } }
        let readyNow = (ready ?? 0) > 0
        if readyNow, lastReady, let used, let since = lastSample, t > since {
            // Ready at both ends: the kernel counts a thread's wait only once it gets a core again, so a thread that
            // got none shows no wait yet. A blocked test's threads are ready only for the moment they wake.
            waited = max(waited ?? 0, t - since - used)
        }
        if !running.isEmpty {
            let n = Double(running.count)
            for test in running.keys {
                if let used { cpuByTest[test, default: 0] += used / n }
                if let waited { cpuWaitByTest[test, default: 0] += waited / n }
            }
        }
        if let used, let since = lastSample, t > since, used / (t - since) >= Self.cpuProgressRate
            || (used + (waited ?? 0)) / (t - since) >= Self.runnableProgressRate {
            lastProgress = max(lastProgress, t)
        }
        lastCPU = max(lastCPU ?? seconds, seconds)
        if let waiting { lastWait = max(lastWait ?? waiting, waiting) }
        lastReady = readyNow
        lastSample = t
    }

    /// Since when each running test has run.
    public var runningTests: [TestID: Double] { running }

    /// The limit reached at `t`, if any: the first test past its ceiling, else a stall.
    public func check(at t: Double) -> TimeLimitHit? {
        for (test, since) in running.sorted(by: { ($0.value, $0.key) < ($1.value, $1.key) }) {
            let l = limits[test] ?? between
            guard t - since > l.ceiling else { continue }
            let cpu = cpuByTest[test, default: 0], ready = cpu + cpuWaitByTest[test, default: 0]
            let computes = measuresCPU && !l.wallClockCeiling
                && (l.computeShare != nil || cpu / (t - since) >= Self.cpuProgressRate
                    || ready / (t - since) >= Self.runnableProgressRate)
            if computes, t - since <= TestLimits.contendedCeilingFactor * l.ceiling, cpu < (l.computeShare ?? 1) * l.ceiling {
                continue  // It computes, but the cores are shared: it has not had its ceiling's worth of CPU yet.
            }
            return TimeLimitHit(kind: .ceiling, limit: l.ceiling, test: test, elapsed: t - since,
                                basis: l.basis + (computes ? ", of time on a core" : ""))
        }
        if running.isEmpty, t - idleSince > between.ceiling {
            return TimeLimitHit(kind: .ceiling, limit: between.ceiling, elapsed: t - idleSince,
                                basis: "between tests: " + between.basis)
        }
        guard measuresCPU else { return nil }
        let window = running.isEmpty ? between
            : running.keys.map { limits[$0] ?? between }.reduce(TestLimits(stall: 0, ceiling: 0, basis: "")) { $0.union($1) }
        guard t - lastProgress > window.stall else { return nil }
        let oldest = running.min { ($0.value, $0.key) < ($1.value, $1.key) }
        return TimeLimitHit(kind: .stalled, limit: window.stall, test: oldest?.key, elapsed: oldest.map { t - $0.value },
                            basis: oldest == nil ? "between tests: " + window.basis : window.basis)
    }
}
