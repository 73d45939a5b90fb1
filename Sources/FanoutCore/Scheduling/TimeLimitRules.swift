/// When a test counts as hung, and how long it may run at all.
///
/// Fanout kills a test only when it stops making progress, never because a guess of its duration ran out:
/// - **Stall window:** neither output nor CPU time from the unit's processes for this long. A computing test is
///   alive however long it computes; a test may also block legitimately (a sleep, a socket read, an expectation)
///   with neither, so without history the window is minutes. With history it follows the test's own durations
///   (`stallFactor` × its p95, never under `minimumStall`).
/// - **Ceiling:** the longest a test may run even while busy, which catches a busy infinite loop. Without history a
///   generous default; with history `ceilingFactor` × its p95, never under `minimumCeiling`.
/// - **A timeout is data:** a test killed after running `c` seconds takes at least `c`: its next limits are at least
///   2 × `c` (up to the no-history ceiling), so the same test is not killed twice for a limit that was too tight.
/// - Per-class values (`classes`) are taken as they are: neither history nor earlier kills change them.
/// - **A computing test's ceiling is time on a core.** A test that uses CPU is past its ceiling only once it has
///   also had the CPU time it would have used in that long with a core to itself: eight of them sharing two cores
///   run four times longer, and are not stopped for it (see ``TestLimits/computeShare``). Configured ceilings stay
///   wall-clock limits.
public struct TimeLimitRules: Sendable, Hashable {
    /// Without history: the stall window and the ceiling of a test, in seconds.
    public var stall: Double
    public var ceiling: Double
    /// With history: multiples of the test's typical (p95) duration.
    public var stallFactor: Double
    public var ceilingFactor: Double
    /// With history, the limits are never shorter than these.
    public var minimumStall: Double
    public var minimumCeiling: Double
    /// The percentile (0-1) of a test's recent durations that is its typical duration.
    public var percentile: Double

    public static let defaultStall = 300.0
    public static let defaultCeiling = 1800.0

    public init(stall: Double = defaultStall, ceiling: Double = defaultCeiling, stallFactor: Double = 5,
                ceilingFactor: Double = 10, minimumStall: Double = 10, minimumCeiling: Double = 120,
                percentile: Double = 0.95) {
        self.stall = stall
        self.ceiling = ceiling
        self.stallFactor = stallFactor
        self.ceilingFactor = ceilingFactor
        self.minimumStall = minimumStall
        self.minimumCeiling = minimumCeiling
        self.percentile = percentile
    }

    /// Explicit limits for the classes a pattern matches (`timeout: classes:` in fanout.yml).
    public struct ClassLimits: Sendable, Hashable {
        public var stall: Double?
        public var ceiling: Double?

        public init(stall: Double? = nil, ceiling: Double? = nil) {
            self.stall = stall
            self.ceiling = ceiling
        }
    }

    /// The limits of one test.
    /// - Parameters:
    ///   - durations: its recent durations that ended normally (passed or failed), any order.
    ///   - censored: the longest it ran before Fanout killed it recently (it takes at least this long).
    ///   - explicit: its class's configured limits, which win over everything else.
    ///   - floor: the least either limit may be on its destination (a simulator's UI tests wait on the app).
    ///   - cpuShare: the share of a core its class used in recent runs (from history), which makes the ceiling of a
    ///     computing test one of CPU time; configured limits stay wall-clock limits.
    public func limits(durations: [Double], censored: Double? = nil, explicit: ClassLimits? = nil,
                       floor: Double = 0, cpuShare: Double? = nil) -> TestLimits {
        var stall = stall, ceiling = ceiling
        var basis = "no history: the defaults"
        let known = durations.filter { $0.isFinite && $0 >= 0 }
        if !known.isEmpty {
            let typical = Estimator.percentile(known, percentile)
            stall = max(minimumStall, stallFactor * typical)
            ceiling = max(minimumCeiling, ceilingFactor * typical)
            basis = "p\(Int((percentile * 100).rounded())) of its last \(known.count) run\(known.count == 1 ? "" : "s"): "
                + formatSeconds(typical)
        }
        if let censored, censored > 0 {
            // Never tighter than twice what it already ran, within the ceiling a test without history gets.
            let raised = min(2 * censored, max(self.ceiling, ceiling))
            if raised > stall || raised > ceiling {
                basis += "; it was stopped after \(formatSeconds(censored)) before"
            }
            stall = max(stall, raised)
            ceiling = max(ceiling, raised)
        }
        var computeShare = known.isEmpty ? nil : cpuShare.flatMap { $0 >= TestLimits.computing ? min($0, 1) : nil }
        var wallClock = false
        if let explicit, explicit.stall != nil || explicit.ceiling != nil {
            stall = explicit.stall ?? stall
            ceiling = explicit.ceiling ?? ceiling
            basis = "configured for its class"
            computeShare = nil
            wallClock = true
        }
        if floor > 0, stall < floor || ceiling < floor {
            stall = max(stall, floor)
            ceiling = max(ceiling, floor)
            basis += "; at least \(formatSeconds(floor)) on its destination"
        }
        // The ceiling is the most a test may run at all: a stall window past it would never be reached.
        return TestLimits(stall: min(stall, ceiling), ceiling: ceiling, basis: basis, computeShare: computeShare,
                          wallClockCeiling: wallClock)
    }
}

/// The time limits of one test, and where they came from.
public struct TestLimits: Sendable, Hashable {
    /// Seconds without output or CPU time after which the test counts as hung.
    public var stall: Double
    /// Seconds after which the test is stopped even while busy.
    public var ceiling: Double
    /// Where they came from, for people: `no history: the defaults`, `p95 of its last 8 runs: 2.10 s`.
    public var basis: String
    /// The share of a core the test's class used in recent runs, when history says it computes (at least
    /// ``computing``). A test that computes, by history or by its CPU samples (at least
    /// ``ProgressWatch/cpuProgressRate`` of a core over its run), is past its ceiling only once it has also used
    /// `(computeShare ?? 1) × ceiling` seconds of CPU, so a test slowed by others sharing the cores is not stopped as a
    /// busy loop; past ``contendedCeilingFactor`` × the ceiling it is stopped in any case.
    public var computeShare: Double?
    /// A configured ceiling: wall-clock time, whatever the test computes.
    public var wallClockCeiling: Bool

    /// The least share of a core at which a test counts as computing for its ceiling.
    public static let computing = 0.1
    /// However starved of CPU, a computing test is stopped past this many times its ceiling.
    public static let contendedCeilingFactor = 4.0

    public init(stall: Double, ceiling: Double, basis: String, computeShare: Double? = nil, wallClockCeiling: Bool = false) {
        self.stall = stall
        self.ceiling = ceiling
        self.basis = basis
        self.computeShare = computeShare
        self.wallClockCeiling = wallClockCeiling
    }

    /// The more generous of two limits, for what runs between tests (start-up, class set-up) or several tests
    /// running at once in one process (Swift Testing).
    public func union(_ other: TestLimits) -> TestLimits {
        TestLimits(stall: max(stall, other.stall), ceiling: max(ceiling, other.ceiling),
                   basis: other.stall > stall ? other.basis : basis,
                   computeShare: computeShare.flatMap { a in other.computeShare.map { max(a, $0) } },
                   wallClockCeiling: wallClockCeiling && other.wallClockCeiling)
    }
}
