/// Tuning of the pull queue.
public struct SchedulerOptions: Sendable, Hashable {
    public var slots: Int
    /// Estimated cost of starting one test process, in seconds: paid once per unit, so small classes are batched.
    public var overhead: Double
    /// A batch aims at (remaining work) / (slots × batchesPerSlot): batches shrink as the queue drains, so the
    /// last units are small and the slots finish together.
    public var batchesPerSlot: Double
    /// How many queued items one pull may look at to fill a batch (bounds the cost of a pull on huge suites).
    public var fillWindow: Int

    public init(slots: Int, overhead: Double = 0.02, batchesPerSlot: Double = 4, fillWindow: Int = 256) {
        self.slots = max(1, slots)
        self.overhead = max(0, overhead)
        self.batchesPerSlot = max(1, batchesPerSlot)
        self.fillWindow = max(1, fillWindow)
    }
}

/// One unit of a predicted schedule.
public struct PlannedUnit: Sendable, Hashable {
    public var unit: WorkUnit
    public var slot: Int
    public var start: Double
    public var end: Double
    /// Predicted work stealing: the unit whose not-yet-started tests this one is expected to take over.
    public var takenFrom: Int?
}

/// A predicted schedule: what `fanout plan` shows and what the run is measured against.
public struct Plan: Sendable, Hashable {
    public var slots: Int
    public var totalWork: Double
    public var longestItem: Double
    /// max(total work / slots, longest item): no schedule of these items can end earlier.
    public var lowerBound: Double
    public var predictedMakespan: Double
    public var units: [PlannedUnit]
}

/// The pull queue: each free slot asks for the next unit; the longest estimate goes first, and small items are
/// packed behind it into a batch whose size shrinks as the queue drains. Pure and deterministic: time is whatever
/// the caller says `now` is, so the same type drives the real run and the virtual-clock plan.
public struct Scheduler: Sendable {
    public let options: SchedulerOptions
    /// The end predicted by plain longest-first over single items; no batch may push its slot past it.
    public private(set) var predictedEnd: Double

    private var queue: [WorkItem]
    private var taken: [Bool]
    private var cursor = 0
    /// Items that came back (crash leftovers, lost agents), kept longest first.
    private var returned: [WorkItem] = []
    private var remaining: Double
    private var pending: Int
    /// Tests in the items still queued.
    private var remainingTests: Int
    private var nextID: Int
    /// Every estimate is a guess from test counts (nothing timed yet): see `leastDivisibleFirst`. Only then does
    /// `next` use a pace (so a caller need not work one out otherwise).
    public let firstRun: Bool

    public init(items: [WorkItem], options: SchedulerOptions, firstUnitID: Int = 1) {
        self.options = options
        // Sorting indices moves 8-byte values instead of WorkItems (arrays and strings: retain/release on every
        // swap); at 100,000 items that is 0.3 s against 0.01 s. Equal estimates fall back to the full order.
        let firstRun = !items.isEmpty && items.allSatisfy(\.source.isGuess)
        self.firstRun = firstRun
        let order = items.indices.sorted { i, j in
            // `--repeat`: repetition by repetition, so every test's repetitions start in order and spread over the
            // slots (and `--until-failure` stops with every earlier repetition run).
            let ri = items[i].repetition ?? 0, rj = items[j].repetition ?? 0
            if ri != rj { return ri < rj }
            // `feedback_first`: the likely failures first, so a broken change reports within seconds.
            let fi = items[i].startsFirst == true, fj = items[j].startsFirst == true
            if fi != fj { return fi }
            // A class measured alone holds its agent: nothing else runs there meanwhile. On one agent that stretch
            // is serial wherever it goes; first, it needs no drain (an agent busy with other work never goes idle
            // until the queue is down to such classes). On a fleet each idle agent takes one.
            let ei = items[i].exclusive, ej = items[j].exclusive
            if ei != ej { return ei }
            if firstRun { return Self.leastDivisibleFirst(items[i], items[j]) }
            let a = items[i].estimate, b = items[j].estimate
            return a != b ? a > b : Self.longestFirst(items[i], items[j])
        }
        let sorted = order.map { items[$0] }
        queue = sorted
        taken = Array(repeating: false, count: sorted.count)
        remaining = sorted.reduce(0) { $0 + $1.estimate }
        pending = sorted.count
        remainingTests = sorted.reduce(0) { $0 + $1.tests.count }
        nextID = firstUnitID
        predictedEnd = sorted.contains { $0.startsFirst == true }
            ? Self.listMakespan(sorted.map(\.estimate), slots: options.slots, overhead: options.overhead)
            : Self.longestFirstMakespan(sorted.map(\.estimate), slots: options.slots, overhead: options.overhead)
    }

    /// The items still queued, in no particular order.
    public var queuedItems: [WorkItem] {
        queue.indices.filter { !taken[$0] }.map { queue[$0] } + returned
    }

    /// Estimated seconds of work still queued.
    public var remainingWork: Double { remaining }
    /// Items still queued.
    public var pendingCount: Int { pending }
    public var isEmpty: Bool { pending == 0 }

    /// The next unit for a slot that is free at `now`, or nil when nothing it accepts is queued. `overhead` is the
    /// start-up cost measured on that slot's agent, when known (it sizes the batch). `pace`: on a first run, the
    /// seconds per test this run has shown so far on each destination (``RunningUnits/paces``), when it has.
    public mutating func next(now: Double, overhead: Double? = nil, pace: [String: Double] = [:],
                              accepts: (WorkItem) -> Bool = { _ in true }) -> WorkUnit? {
        guard let head = takeHead(accepts) else { return nil }
        if let batch = head.batch {
            // `--shuffle`: a dealt process runs its batch, all of it and nothing else (`ShuffleDeal`).
            var items = [head]
            while let r = returned.firstIndex(where: { $0.batch == batch && Self.canShareUnit($0, head) }) {
                items.append(takeReturned(r))
            }
            for q in queue.indices[cursor...] where !taken[q] && queue[q].batch == batch && Self.canShareUnit(queue[q], head) {
                items.append(takeQueued(q))
            }
            let unit = WorkUnit(id: nextID, items: items)
            nextID += 1
            return unit
        }
        var items = [head]
        var total = head.estimate
        let startUp = overhead ?? options.overhead
        // A batch aims at a share of what is left (shrinking as the queue drains), but at least 20 start-ups long so
        // start-up stays near 5% of the time (it matters for xcodebuild's seconds, hardly for a 15 ms .xctest).
        let target = max((remaining + head.estimate) / (Double(options.slots) * options.batchesPerSlot), 20 * startUp)
        let room = max(predictedEnd - now - startUp, head.estimate)
        let limit = min(target, room)
        // On a first run a batch's length is a guess: several classes in one process would run one after another
        // however long they turn out to be. There a batch holds at most its share of the items still queued, so a
        // suite of a few dozen classes runs a class per process and one of thousands still pays few start-ups.
        let most = firstRun ? (pending + 1) / (options.slots * Int(options.batchesPerSlot)) : Int.max
        if total < limit, most > 1 {
            fill(&items, total: &total, limit: limit, most: most, accepts: accepts)
        }
        if firstRun, let secondsPerTest = pace[head.destination], secondsPerTest > 0 {
            packShortClasses(&items, secondsPerTest: secondsPerTest, startUp: startUp, accepts: accepts)
        }
        let unit = WorkUnit(id: nextID, items: items)
        nextID += 1
        return unit
    }

    /// Drops everything still queued (`--until-failure` found its failure); returns how many items were dropped.
    @discardableResult
    public mutating func drain() -> Int {
        let dropped = pending
        for i in taken.indices { taken[i] = true }
        cursor = queue.count
        returned.removeAll()
        remaining = 0
        pending = 0
        remainingTests = 0
        return dropped
    }

    /// Takes every queued item `matching` out of the queue (a destination no agent is left to serve); returns them.
    public mutating func remove(where matching: (WorkItem) -> Bool) -> [WorkItem] {
        var out: [WorkItem] = []
        for i in queue.indices where !taken[i] && matching(queue[i]) {
            taken[i] = true
            out.append(queue[i])
        }
        let kept = returned.filter { !matching($0) }
        out += returned.filter(matching)
        returned = kept
        for item in out {
            remaining -= item.estimate
            pending -= 1
            remainingTests -= item.tests.count
        }
        return out
    }

    /// A unit of these items with a fresh id, outside the queue (a backup copy of a straggler).
    public mutating func makeUnit(_ items: [WorkItem]) -> WorkUnit {
        defer { nextID += 1 }
        return WorkUnit(id: nextID, items: items)
    }

    /// Puts items back in the queue (the rest of a crashed class, the work of a lost agent).
    public mutating func requeue(_ items: [WorkItem]) {
        for item in items {
            let index = returned.firstIndex { Self.longestFirst(item, $0) } ?? returned.endIndex
            returned.insert(item, at: index)
            remaining += item.estimate
            pending += 1
            remainingTests += item.tests.count
        }
    }

    /// Predicts the schedule from here on a virtual clock, every slot free at time 0; with `stealing`, idle slots at
    /// the end take over the tests running units have not started, as the run does.
    public func plan(stealing: StealPolicy? = nil) -> Plan {
        var copy = self
        var units: [PlannedUnit] = []
        var slots = MinHeap<(Double, Int)> { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }
        for s in 0..<options.slots { slots.push((0, s)) }
        var makespan = 0.0
        while let (t, s) = slots.pop(), let unit = copy.next(now: t) {
            let end = t + options.overhead + unit.estimate
            units.append(PlannedUnit(unit: unit, slot: s, start: t, end: end))
            makespan = max(makespan, end)
            slots.push((end, s))
        }
        if let policy = stealing { Self.simulateSteals(&units, slots: options.slots, policy: policy, ids: &copy) }
        makespan = units.map(\.end).max() ?? 0
        let all = queue.enumerated().filter { !taken[$0.offset] }.map(\.element) + returned
        let work = all.reduce(0) { $0 + $1.estimate }
        let longest = all.map(\.estimate).max() ?? 0
        return Plan(slots: options.slots, totalWork: work, longestItem: longest,
                    lowerBound: Self.lowerBound(work: work, longest: longest, slots: options.slots),
                    predictedMakespan: makespan, units: units)
    }

    /// Work stealing on the virtual clock: each time a slot falls idle (earliest first), the units running then are
    /// seen as the run sees them, tests in order at their estimates (an item's estimate shared evenly among its
    /// tests), and `policy` decides; the parts start on the idle slots and the original ends after its head.
    static func simulateSteals(_ units: inout [PlannedUnit], slots: Int, policy: StealPolicy, ids: inout Scheduler) {
        var free = Array(repeating: 0.0, count: slots)
        for u in units { free[u.slot] = max(free[u.slot], u.end) }
        var done = Set<Int>() // slots that found nothing worth taking when they fell idle
        var emptied = Set<Int>() // units that handed over every test: they had started none
        defer { units = units.enumerated().filter { !emptied.contains($0.offset) }.map(\.element) }
        for _ in 0..<(4 * units.count + 4 * slots) {
            guard let slot = free.indices.filter({ !done.contains($0) }).min(by: { (free[$0], $0) < (free[$1], $1) })
            else { break }
            let t = free[slot]
            let idle = free.indices.filter { !done.contains($0) && free[$0] <= t + 1e-9 }
            var views: [Int: (current: Double, pending: [StealPolicy.Pending])] = [:]
            var candidates: [StealPolicy.Candidate] = []
            for (i, u) in units.enumerated() where u.start <= t && u.end > t + 1e-9 && !emptied.contains(i) {
                let (remaining, pending) = Self.view(of: u.unit, elapsed: t - u.start - policy.overhead)
                views[i] = (remaining, pending)
                let stealable = u.unit.items.allSatisfy(\.canBeCut)
                candidates.append(.init(unit: i, unstarted: pending, currentRemaining: remaining, stealable: stealable))
            }
            guard let steal = policy.steal(from: candidates, idleSlots: idle.count), let view = views[steal.unit] else {
                done.insert(slot)
                continue
            }
            let seconds = Dictionary(view.pending.map { ($0.test, $0.seconds) }, uniquingKeysWith: { a, _ in a })
            let original = units[steal.unit]
            units[steal.unit].end = t + view.current + steal.kept.reduce(0) { $0 + (seconds[$1] ?? 0) }
            free[original.slot] = units[steal.unit].end
            // The original keeps the tests before the taken ones (in its order), so its clock stays right.
            // Handing over every test means it had started none: it would stop at once, so it leaves the plan.
            if let rest = original.unit.removing(Set(steal.stolen)) { units[steal.unit].unit = rest } else { emptied.insert(steal.unit) }
            for (part, s) in zip(steal.parts, idle) {
                let taken = Set(part)
                let items = original.unit.items.compactMap { item -> WorkItem? in
                    var piece = item
                    piece.tests = item.tests.filter { taken.contains(TestID(suite: item.suite, name: $0)) }
                    guard !piece.tests.isEmpty else { return nil }
                    piece.isWholeSuite = false
                    piece.estimate = piece.testIDs.reduce(0) { $0 + (seconds[$1] ?? 0) }
                    return piece
                }
                guard !items.isEmpty else { continue }
                let unit = ids.makeUnit(items)
                let end = t + policy.overhead + unit.estimate
                units.append(PlannedUnit(unit: unit, slot: s, start: t, end: end, takenFrom: original.unit.id))
                free[s] = end
            }
        }
    }

    /// A planned unit `elapsed` seconds into its tests: what is left of the test running then, and the tests after it.
    static func view(of unit: WorkUnit, elapsed: Double) -> (current: Double, pending: [StealPolicy.Pending]) {
        var clock = 0.0
        var current = 0.0
        var pending: [StealPolicy.Pending] = []
        for item in unit.items.sorted(by: { $0.suite < $1.suite }) {
            let each = item.estimate / Double(max(1, item.tests.count))
            for id in item.testIDs {
                if clock + each <= elapsed { clock += each; continue }
                if clock < elapsed, clock + each > elapsed { current = clock + each - elapsed; clock += each; continue }
                pending.append(.init(id, each))
                clock += each
            }
        }
        return (current, pending)
    }

    /// LB = max(work / slots, longest): the theoretical best makespan of any schedule.
    public static func lowerBound(work: Double, longest: Double, slots: Int) -> Double {
        max(work / Double(max(1, slots)), longest)
    }

    /// Makespan of plain longest-first list scheduling, one process per item.
    public static func longestFirstMakespan(_ estimates: [Double], slots: Int, overhead: Double) -> Double {
        listMakespan(estimates.sorted(by: >), slots: slots, overhead: overhead)
    }

    /// Makespan of list scheduling in the given order, one process per item: each item starts on the slot that is
    /// free first.
    public static func listMakespan(_ estimates: [Double], slots: Int, overhead: Double) -> Double {
        var heap = MinHeap<Double>(<)
        for _ in 0..<max(1, slots) { heap.push(0) }
        var end = 0.0
        for e in estimates {
            let t = (heap.pop() ?? 0) + overhead + e
            end = max(end, t)
            heap.push(t)
        }
        return end
    }

    // MARK: - Queue mechanics

    /// The queue's order on a first run, when every estimate is a guess from test counts. Longest-first by count
    /// would start the classes of many tests first and leave the classes of one or two tests for the end; but a
    /// class's few tests may each be long (a class of 2 tests held a 4.1 s test in a 9.5 s run), and work stealing
    /// shares out a running class's unstarted tests, never a test already running. So what cannot be cut starts
    /// first: work that may not be shared at all (keep-whole, exclusive, Swift Testing), longest first; then the
    /// classes of fewest tests; the classes of many tests come last, where idle slots can take their tests over.
    static func leastDivisibleFirst(_ a: WorkItem, _ b: WorkItem) -> Bool {
        if a.canBeCut != b.canBeCut { return !a.canBeCut }
        if a.canBeCut, a.tests.count != b.tests.count { return a.tests.count < b.tests.count }
        return longestFirst(a, b)
    }

    static func longestFirst(_ a: WorkItem, _ b: WorkItem) -> Bool {
        if a.estimate != b.estimate { return a.estimate > b.estimate }
        if a.destination != b.destination { return a.destination < b.destination }
        if a.suite != b.suite { return a.suite < b.suite }
        return a.tests.lexicographicallyPrecedes(b.tests)
    }

    private mutating func takeHead(_ accepts: (WorkItem) -> Bool) -> WorkItem? {
        let fromQueue = queue.indices[cursor...].first { !taken[$0] && accepts(queue[$0]) }
        let fromReturned = returned.firstIndex(where: accepts)
        switch (fromQueue, fromReturned) {
        case (nil, nil):
            return nil
        case (let q?, let r?) where Self.longestFirst(returned[r], queue[q]):
            return takeReturned(r)
        case (nil, let r?):
            return takeReturned(r)
        case (let q?, _):
            return takeQueued(q)
        }
    }

    /// A first run once its tests have shown their pace: a class's time is its tests × `secondsPerTest` (this run's
    /// mean), and a process whose classes are short against a start-up takes more of them, up to 20 start-ups
    /// (start-up near 5 % of the process, the floor of a timed batch) and the room a balanced end leaves (the
    /// queued tests at this pace, shared by the slots), as a timed batch has. Classes the pace calls longer still
    /// run one per process, as the count rule says; the classes of fewest tests started first, and what a process
    /// has not started yet, idle slots can take over.
    private mutating func packShortClasses(_ items: inout [WorkItem], secondsPerTest: Double, startUp: Double,
                                           accepts: (WorkItem) -> Bool) {
        let seconds: (WorkItem) -> Double = { Double(max(1, $0.tests.count)) * secondsPerTest }
        var total = items.reduce(0) { $0 + seconds($1) }
        // The room a balanced end leaves this slot: the queued tests at this pace, shared by the slots.
        let room = Double(remainingTests + items.reduce(0) { $0 + $1.tests.count }) * secondsPerTest
            / Double(options.slots) - startUp
        let limit = min(20 * startUp, room)
        guard total < limit else { return }
        fill(&items, total: &total, limit: limit, most: .max, seconds: seconds, accepts: accepts)
    }

    private mutating func fill(_ items: inout [WorkItem], total: inout Double, limit: Double, most: Int,
                               seconds: (WorkItem) -> Double = \.estimate, accepts: (WorkItem) -> Bool) {
        func fits(_ c: WorkItem) -> Bool {
            items.count < most && total + seconds(c) <= limit && accepts(c) && items.allSatisfy { Self.canShareUnit($0, c) }
        }
        var r = 0
        while r < returned.count, total < limit, items.count < most {
            if fits(returned[r]) {
                total += seconds(returned[r])
                items.append(takeReturned(r))
            } else {
                r += 1
            }
        }
        // Fill with the largest items that still fit (first fit, longest first): the smallest items stay at the end
        // of the queue, where they balance the slots' last minutes. (Filling from the smallest end took them early
        // and left coarse items for the end: 1.034 × LB against 1.010 in the 100,000-class simulation.)
        // The `slots` smallest items never pad a batch: they are the last round, one each per slot.
        let reserve = queue.count - options.slots
        var looked = 0
        var q = cursor
        while q < reserve, looked < options.fillWindow, total < limit, items.count < most {
            if !taken[q] {
                looked += 1
                if fits(queue[q]) {
                    total += seconds(queue[q])
                    items.append(takeQueued(q))
                }
            }
            q += 1
        }
    }

    /// Same framework and destination; never an exclusive item with another; never two parts of one class; never two XCTest classes of the same name from
    /// different modules (Linux console lines carry no module name, nor do xcodebuild's parallel-clone lines, so
    /// their results could not be told apart).
    public static func canShareUnit(_ a: WorkItem, _ b: WorkItem) -> Bool {
        guard a.framework == b.framework, a.destination == b.destination, a.suite != b.suite,
              !a.exclusive, !b.exclusive else { return false }
        // One process has one FANOUT_SEED, that of one repetition and retry (`WorkUnit.seed(run:)`).
        guard a.repetition == b.repetition, a.retry == b.retry, a.batch == b.batch else { return false }
        if a.framework != .swiftTesting, a.suite.name == b.suite.name { return false }
        return true
    }

    private mutating func takeQueued(_ i: Int) -> WorkItem {
        taken[i] = true
        while cursor < queue.count, taken[cursor] { cursor += 1 }
        remaining -= queue[i].estimate
        pending -= 1
        remainingTests -= queue[i].tests.count
        return queue[i]
    }

    private mutating func takeReturned(_ i: Int) -> WorkItem {
        let item = returned.remove(at: i)
        remaining -= item.estimate
        pending -= 1
        remainingTests -= item.tests.count
        return item
    }
}
