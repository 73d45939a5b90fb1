/// Work stealing at test boundaries. When slots sit idle with nothing left in the queue while a unit still has
/// tests it has not started, the not-yet-started tail of that unit is cut into contiguous parts that new units run on
/// the idle slots. The original keeps the head and is stopped as soon as it starts the first stolen test, so at most
/// the start of one test is thrown away and every test runs exactly once.
///
/// Why contiguous tails: a test process runs its tests in a fixed order, so "everything from test k on" is the only
/// cut that the original can honour by being stopped at one moment. If the predicted order is wrong, nothing is
/// lost: tests the original had not reached when it was stopped simply go back to the queue.
public struct StealPolicy: Sendable, Hashable {
    /// Start-up cost of one new test process (measured per agent during the run).
    public var overhead: Double
    /// A steal must end the unit's work at least this much sooner (and more than two start-ups), so noise in short
    /// units does not start processes for nothing.
    public var minimumGain: Double

    public init(overhead: Double = 0.02, minimumGain: Double = 0.2) {
        self.overhead = overhead
        self.minimumGain = minimumGain
    }

    /// A test that has not started yet, with the seconds it is expected to take.
    public struct Pending: Sendable, Hashable {
        public var test: TestID
        public var seconds: Double

        public init(_ test: TestID, _ seconds: Double) {
            self.test = test
            self.seconds = seconds
        }
    }

    /// A running unit as stealing sees it.
    public struct Candidate: Sendable, Hashable {
        public var unit: Int
        /// Its tests that have not started, in the order its process will run them.
        public var unstarted: [Pending]
        /// Expected seconds left of the test running now (0 between tests or before the first).
        public var currentRemaining: Double
        /// False for units that must not be cut: keep-whole and exclusive classes, Swift Testing units (their tests
        /// run in parallel inside the process: there is no single "next test" to stop at), twins of stragglers.
        public var stealable: Bool

        public init(unit: Int, unstarted: [Pending], currentRemaining: Double, stealable: Bool = true) {
            self.unit = unit
            self.unstarted = unstarted
            self.currentRemaining = currentRemaining
            self.stealable = stealable
        }

        /// Expected seconds until the unit ends if nothing is stolen.
        public var remaining: Double { currentRemaining + unstarted.reduce(0) { $0 + max(0, $1.seconds) } }
    }

    /// What to take from which unit.
    public struct Steal: Sendable, Hashable {
        public var unit: Int
        /// The unstarted tests the original keeps (it reaches them before the first stolen one).
        public var kept: [TestID]
        /// One list of tests per new unit, each a contiguous run of the original's order, in that order.
        public var parts: [[TestID]]
        /// Expected seconds until the original's work is all done, before and after the steal.
        public var before: Double
        public var after: Double

        public var gain: Double { before - after }
        public var stolen: [TestID] { parts.flatMap { $0 } }
    }

    /// The steal worth most for `idleSlots` idle slots, or nil when none is worth a process start.
    public func steal(from running: [Candidate], idleSlots: Int) -> Steal? {
        guard idleSlots > 0 else { return nil }
        var best: Steal?
        for candidate in running where candidate.stealable && !candidate.unstarted.isEmpty {
            guard let s = split(candidate, thieves: min(idleSlots, candidate.unstarted.count)),
                  s.gain > max(minimumGain, 2 * overhead) else { continue }
            if best == nil || s.gain > best!.gain || (s.gain == best!.gain && s.unit < best!.unit) { best = s }
        }
        return best
    }

    /// Cuts the unstarted tail into at most `thieves` parts for new units plus the head the original keeps, so that
    /// the latest expected end (each new part paying a start-up) is as early as contiguous parts allow.
    func split(_ c: Candidate, thieves: Int) -> Steal? {
        let tests = c.unstarted.map { max(0, $0.seconds) }
        guard thieves > 0, !tests.isEmpty else { return nil }
        let before = c.remaining
        // Binary search on the latest end T: the smallest T for which the tail fits in the head plus `thieves` parts.
        var low = max(c.currentRemaining, (tests.max() ?? 0) + overhead)
        var high = max(low, before + overhead)
        guard let feasible = cut(tests, current: c.currentRemaining, limit: high, parts: thieves) else { return nil }
        var best = feasible
        for _ in 0..<50 where high - low > 1e-4 {
            let mid = (low + high) / 2
            if let found = cut(tests, current: c.currentRemaining, limit: mid, parts: thieves) {
                best = found
                high = mid
            } else {
                low = mid
            }
        }
        // best: the index where each part starts (the head is tests[0..<best[0]]); empty when nothing is worth cutting.
        guard let first = best.first else { return nil }
        let ids = c.unstarted.map(\.test)
        var parts: [[TestID]] = []
        var after = c.currentRemaining + tests[..<first].reduce(0, +)
        for (i, start) in best.enumerated() {
            let end = i + 1 < best.count ? best[i + 1] : ids.count
            parts.append(Array(ids[start..<end]))
            after = max(after, overhead + tests[start..<end].reduce(0, +))
        }
        return Steal(unit: c.unit, kept: Array(ids[..<first]), parts: parts, before: before, after: after)
    }

    /// Greedy contiguous packing under `limit`: the head (after the current test) takes what fits, then each new
    /// part (paying a start-up) takes what fits. Returns each part's first index (none when the head holds it all), or
    /// nil when `parts` parts do not suffice.
    private func cut(_ tests: [Double], current: Double, limit: Double, parts: Int) -> [Int]? {
        var i = 0
        var load = current
        while i < tests.count, load + tests[i] <= limit { load += tests[i]; i += 1 }
        var starts: [Int] = [] // stays empty when the original alone ends within the limit
        while i < tests.count {
            guard starts.count < parts else { return nil }
            starts.append(i)
            load = overhead + tests[i]
            i += 1
            while i < tests.count, load + tests[i] <= limit { load += tests[i]; i += 1 }
        }
        return starts
    }
}
