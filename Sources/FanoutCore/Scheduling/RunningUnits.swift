/// The units running, as the dispatcher tracks them, and the rules that read them: which agent a measuring unit
/// holds and whether a measurement was taken alone (README "Performance tests"), what the running units of a machine
/// use (CPU-aware packing, `CapacityPolicy`), and how a running unit looks to work stealing (`StealPolicy`): its
/// tests not started yet, with this run's own test times. A plain value: the Coordinator's `Dispatcher` owns one
/// and feeds it what the units' processes report; every rule here is tested on plain values, with no actor and no
/// clock (times are handed in).
public struct RunningUnits: Sendable {
    /// One unit running on a slot.
    public struct Entry: Sendable {
        public var unit: WorkUnit
        public var start: Double
        public var agent: String
        /// The other copy of a straggler and its backup.
        public var twin: Int?
        public var isBackup: Bool
        /// Tests this process has started, and the one it runs now (since when).
        public var started: Set<TestID> = []
        public var current: Current?
        /// Work stealing: the unit whose tests this one took over.
        public var takenFrom: Int?
        /// Cores it used between its last two CPU samples, the last sample, and its peak memory so far.
        public var cpuRate: Double?
        public var lastUsage: Sample?
        public var peakMemory: Int64?
        /// It printed a measurement: its agent takes nothing else until it ends.
        public var measuring = false

        public struct Current: Sendable, Hashable {
            public var test: TestID
            public var since: Double
        }

        public struct Sample: Sendable, Hashable {
            public var cpu: Double
            public var at: Double
        }

        public init(unit: WorkUnit, start: Double, agent: String, twin: Int? = nil, isBackup: Bool = false,
                    takenFrom: Int? = nil) {
            self.unit = unit
            self.start = start
            self.agent = agent
            self.twin = twin
            self.isBackup = isBackup
            self.takenFrom = takenFrom
        }
    }

    /// When a unit ran on an agent.
    public struct Span: Sendable, Hashable {
        public var unit: Int
        public var start: Double
        public var end: Double
    }

    private var entries: [Int: Entry] = [:]
    /// Each agent's cores, memory and machine, as it reported them when it was admitted.
    public var resources: [String: AgentResources] = [:]
    /// Work stealing: the tests each running unit handed over to others.
    private var handedOver: [Int: Set<TestID>] = [:]
    /// This run's test times, per destination and class: what a first run has instead of history.
    private var observed: [String: (sum: Double, count: Int)] = [:]
    /// Per destination: how many classes have a time in `observed`, and the seconds and count of every test timed.
    private var timed: [String: (classes: Int, seconds: Double, tests: Int)] = [:]
    /// Units that ended on each agent while a unit there may still be measuring over their time, and whether each
    /// running unit's measurements were taken alone.
    private var endedSpans: [String: [Span]] = [:]
    private var measuredAlone: [Int: [TestID: Bool]] = [:]

    public init() {}

    public subscript(id: Int) -> Entry? {
        get { entries[id] }
        set { entries[id] = newValue }
    }

    public var values: Dictionary<Int, Entry>.Values { entries.values }
    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }

    /// A unit starts on a slot.
    public mutating func start(_ entry: Entry) { entries[entry.unit.id] = entry }

    /// A unit ended at `end`: it leaves, and its span is kept while a unit still running on its agent may be
    /// measuring over it. Returns it as it was (nil: it was not running), with the tests it handed over to others
    /// and whether each of its measurements was taken alone.
    public mutating func end(_ id: Int, at end: Double) -> (entry: Entry?, handedOver: Set<TestID>, measuredAlone: [TestID: Bool]) {
        let entry = entries.removeValue(forKey: id)
        if let entry {
            let earliest = entries.values.filter { $0.agent == entry.agent }.map(\.start).min()
            var spans = endedSpans[entry.agent] ?? []
            spans.append(Span(unit: id, start: entry.start, end: end))
            endedSpans[entry.agent] = earliest.map { e in spans.filter { $0.end > e } } ?? []
        }
        return (entry, handedOver.removeValue(forKey: id) ?? [], measuredAlone.removeValue(forKey: id) ?? [:])
    }

    // MARK: - What its process reports

    /// Its process starts a test. True: that test was taken over by another unit, so this process must stop now
    /// (and the test is not this unit's to report).
    public mutating func testStarted(_ id: TestID, unit: Int, now: Double) -> Bool {
        if handedOver[unit]?.contains(id) == true { return true }
        entries[unit]?.started.insert(id)
        entries[unit]?.current = Entry.Current(test: id, since: now)
        return false
    }

    /// The tests this unit handed over to others so far.
    public func handedOver(by unit: Int) -> Set<TestID> { handedOver[unit] ?? [] }

    /// A test ended: this run learns its time (a passed or failed test that took time), and the unit's current
    /// test is cleared.
    public mutating func testEnded(_ id: TestID, _ attempt: Attempt, destination: String, unit: Int) {
        if entries[unit]?.current?.test == id { entries[unit]?.current = nil }
        guard attempt.outcome == .passed || attempt.outcome == .failed, attempt.duration > 0 else { return }
        let key = "\(destination)|\(id.suite)"
        let seen = observed[key] ?? (0, 0)
        observed[key] = (seen.sum + attempt.duration, seen.count + 1)
        let before = timed[destination] ?? (0, 0, 0)
        timed[destination] = (before.classes + (seen.count == 0 ? 1 : 0), before.seconds + attempt.duration, before.tests + 1)
    }

    /// What a first run knows of its tests' pace at `now`: per destination, the mean seconds per test of this
    /// run's tests there, once two classes or more have a time. The tests running count with the time they have
    /// run so far, so a long test weighs in before it ends (the short ones end first). The scheduler packs the
    /// classes this pace calls short (`Scheduler.next`).
    public func paces(now: Double) -> [String: Double] {
        var paces: [String: Double] = [:]
        for (destination, t) in timed where t.classes >= 2 {
            let current = entries.values.filter { $0.unit.destination == destination }.compactMap(\.current)
            let seconds = t.seconds + current.reduce(0) { $0 + max(0, now - $1.since) }
            paces[destination] = seconds / Double(t.tests + current.count)
        }
        return paces
    }

    // MARK: - Measured alone

    /// Whether the agent is held by a unit that measures (it printed a measurement, or it is a class known to
    /// measure): nothing else may start there.
    public func isHeldForMeasuring(_ agent: String) -> Bool {
        entries.values.contains { $0.agent == agent && ($0.measuring || $0.unit.items.contains(where: \.exclusive)) }
    }

    /// A running unit printed a measurement of `test`: from now on its agent is held (unless its class was said not
    /// to be a performance class), and the measurement is alone when no other unit ran on the agent between the
    /// test's start and now.
    public mutating func measured(_ unit: Int, test: TestID, now: Double) {
        guard let me = entries[unit] else { return }
        let shared = me.unit.items.contains { $0.suite == test.suite && $0.shared }
        if !me.measuring && !shared { entries[unit]?.measuring = true }
        let since = me.current?.test == test ? me.current?.since ?? me.start : me.start
        let others = entries.contains { $0.key != unit && $0.value.agent == me.agent }
        let overlapped = (endedSpans[me.agent] ?? []).contains { $0.unit != unit && $0.end > since && $0.start < now }
        measuredAlone[unit, default: [:]][test] = !others && !overlapped && (measuredAlone[unit]?[test] ?? true)
    }

    // MARK: - Capacity

    /// The machine an agent runs on: its reported identity, else the agent itself.
    public func machine(of agent: String) -> String { resources[agent]?.machine ?? "agent:" + agent }

    /// What the agent's machine offers and what its running units use now; nil when the agent did not report its
    /// cores (then nothing is held back).
    public func machineState(of agent: String) -> CapacityPolicy.Machine? {
        guard let own = resources[agent] else { return nil }
        let name = machine(of: agent)
        let mine = entries.values.filter { machine(of: $0.agent) == name }
        return CapacityPolicy.Machine(
            cores: own.cores, memoryBytes: own.memoryBytes,
            load: mine.reduce(0) { $0 + (Self.cpuLoad(of: $1) ?? 0) },
            memoryInUse: mine.reduce(0) { $0 + ($1.peakMemory ?? Self.expectedPeak($1.unit) ?? 0) },
            runningUnits: mine.count)
    }

    /// Cores a running unit uses: as measured between its last two samples, else as its classes used before.
    public static func cpuLoad(of r: Entry) -> Double? { r.cpuRate ?? expectedShare(r.unit) }

    /// Whether a running unit computes (rather than waits).
    public static func isComputing(_ r: Entry) -> Bool { (cpuLoad(of: r) ?? 0) >= CapacityPolicy.computingShare }

    /// The cores a unit is expected to use: its items' shares weighted by their estimates (nil: none measured).
    public static func expectedShare(_ unit: WorkUnit) -> Double? {
        let known = unit.items.filter { $0.cpuShare != nil }
        guard !known.isEmpty else { return nil }
        let weight = known.reduce(0) { $0 + max($1.estimate, 0.001) }
        return known.reduce(0) { $0 + ($1.cpuShare ?? 0) * max($1.estimate, 0.001) } / weight
    }

    public static func expectedPeak(_ unit: WorkUnit) -> Int64? {
        unit.items.compactMap(\.peakMemory).max()
    }

    /// A running unit's CPU time and memory so far, as its transport sampled them at `t`: its rate is taken over at
    /// least half a second. Returns true when the unit stopped computing (a core is free: held slots look again).
    public mutating func usage(_ id: Int, _ usage: ResourceUsage, at t: Double) -> Bool {
        guard var r = entries[id] else { return false }
        let wasComputing = Self.isComputing(r)
        if let last = r.lastUsage, t - last.at >= 0.5 {
            r.cpuRate = max(0, usage.cpuSeconds - last.cpu) / (t - last.at)
            r.lastUsage = Entry.Sample(cpu: usage.cpuSeconds, at: t)
        } else if r.lastUsage == nil {
            r.lastUsage = Entry.Sample(cpu: usage.cpuSeconds, at: t)
        }
        if let peak = usage.peakMemoryBytes { r.peakMemory = max(r.peakMemory ?? 0, peak) }
        entries[id] = r
        return wasComputing && !Self.isComputing(r)
    }

    // MARK: - Work stealing

    /// A running unit as `StealPolicy` sees it: its tests not started yet in the order its process runs them
    /// (module, class, then method: XCTest's binary order), with this run's observed times where it has them. A
    /// twin, a backup, a unit that measures or one with a class that must not be cut is not stealable.
    public func stealCandidate(_ r: Entry, now: Double) -> StealPolicy.Candidate {
        let ordered = r.unit.items.sorted { $0.suite < $1.suite }.flatMap(\.testIDs)
        let unstarted = ordered.filter { !r.started.contains($0) }.map { StealPolicy.Pending($0, estimate($0, in: r.unit)) }
        let remaining = r.current.map { max(0, estimate($0.test, in: r.unit) - (now - $0.since)) } ?? 0
        let stealable = r.twin == nil && !r.isBackup && !r.measuring && r.unit.items.allSatisfy(\.canBeCut)
        return StealPolicy.Candidate(unit: r.unit.id, unstarted: unstarted, currentRemaining: remaining,
                                     stealable: stealable)
    }

    /// Seconds a test is expected to take: the mean of its class's tests that ended in this run, else its item's
    /// estimate shared evenly among its tests.
    public func estimate(_ id: TestID, in unit: WorkUnit) -> Double {
        if let seen = observed["\(unit.destination)|\(id.suite)"], seen.count > 0 { return seen.sum / Double(seen.count) }
        guard let item = unit.items.first(where: { $0.suite == id.suite }) else { return 0 }
        return item.estimate / Double(max(1, item.tests.count))
    }

    /// The running unit `id` hands `tests` over to other units: they leave its work, and its process stops as it
    /// starts the first of them (``testStarted(_:unit:now:)``).
    public mutating func handOver(_ tests: Set<TestID>, from id: Int) {
        guard var original = entries[id] else { return }
        handedOver[id, default: []].formUnion(tests)
        if let rest = original.unit.removing(tests) { original.unit = rest } else { original.unit.items = [] }
        entries[id] = original
    }

    /// The work items of a part cut from `unit`: the taken tests of each class, in order, estimated test by test.
    public static func items(of unit: WorkUnit, taking tests: [TestID], estimate: (TestID) -> Double) -> [WorkItem] {
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
