/// Splits classes that are too long for one slot into groups of methods.
///
/// A class whose estimate exceeds one slot's share of the work (total / slots) would by itself keep the run above
/// that lower bound: no schedule of whole classes can finish before it does. Such a class is cut into groups of
/// methods balanced by their own timing history (methods never seen share what is left of the class's estimate),
/// each group a work item of its own. Groups aim at half a share, so the pull queue can still balance the end.
public struct MethodSplitter: Sendable, Hashable {
    public var slots: Int
    /// Start-up cost of a test process: a group is never smaller than a few of these.
    public var overhead: Double
    /// Percentile of a method's recent durations used as its estimate.
    public var percentile: Double

    public init(slots: Int, overhead: Double = 0.02, percentile: Double = 0.8) {
        self.slots = max(1, slots)
        self.overhead = overhead
        self.percentile = percentile
    }

    /// The items with every oversized class (not kept whole) replaced by its groups.
    public func split(_ items: [WorkItem], history: TimingHistory, keepWhole: (SuiteID) -> Bool = { _ in false })
        -> [WorkItem]
    {
        let total = items.reduce(0) { $0 + $1.estimate }
        let share = total / Double(slots)
        guard share > 0 else { return items }
        // Splitting a class shorter than this saves less than it costs in extra process starts.
        let worthSplitting = max(1.0, 50 * overhead)
        let fitted = items.flatMap { item -> [WorkItem] in
            if let count = coldGroupCount(item, share: share, keepWhole: keepWhole) {
                return groups(of: item, count: count, methods: methodEstimates(item, history: history))
            }
            guard item.estimate > share, item.estimate >= worthSplitting, item.tests.count > 1, !keepWhole(item.suite),
                  !item.exclusive
            else { return [item] }
            return groups(of: item, share: share, history: history)
        }
        return balanceTail(fitted, history: history, keepWhole: keepWhole)
    }

    /// Tests per group for a class with no timing history of its own.
    public static let coldGroupSize = 8

    /// A class never timed here with many methods starts as a few groups of methods rather than one process: its
    /// real length is unknown (a guess of 0.1 s a test may hide 20 s), and groups let idle slots share it from the
    /// first second; work stealing evens out the rest. Only a class large next to the rest (a quarter of a slot's
    /// share or more): a suite of many equal classes gains nothing from more processes. Groups of about
    /// `coldGroupSize` tests (each pays one process start-up and the class's set-up), at most one per slot. XCTest
    /// only: Swift Testing runs a suite's tests in parallel inside its process already.
    func coldGroupCount(_ item: WorkItem, share: Double, keepWhole: (SuiteID) -> Bool) -> Int? {
        switch item.source {
        case .noHistory, .testCount: break
        case .history, .borrowed, .methods, .tests: return nil
        }
        let n = item.tests.count
        guard item.framework == .xctest, n >= 2 * Self.coldGroupSize, item.estimate >= share / 4, !item.exclusive,
              !keepWhole(item.suite) else {
            return nil
        }
        return min(slots, (n + Self.coldGroupSize - 1) / Self.coldGroupSize)
    }

    /// Whole classes that cannot share out evenly (60 classes of 0.45 s on 8 slots: half the slots run one class
    /// more than the others) leave the last round of the run to a few slots. When longest-first over the items is
    /// predicted to end more than 1% (and 5 start-ups) after the ideal end (work and start-ups spread evenly), the
    /// `slots` smallest items, the ones that run last, are cut into pieces of about 1% of the ideal end, never less
    /// than 5 start-ups. Only classes with timing history of their own are cut. The pieces fill the last round
    /// evenly (the scheduler keeps the smallest items for it); the first rounds keep whole classes.
    public func balanceTail(_ items: [WorkItem], history: TimingHistory,
                            keepWhole: (SuiteID) -> Bool = { _ in false }) -> [WorkItem] {
        guard items.count > 1 else { return items }
        let work = items.reduce(0) { $0 + $1.estimate }
        let ideal = (work + Double(items.count) * overhead) / Double(slots)
        let predicted = Scheduler.longestFirstMakespan(items.map(\.estimate), slots: slots, overhead: overhead)
        guard predicted > ideal * 1.01, predicted - ideal >= 5 * overhead else { return items }
        let piece = max(0.01 * ideal, 5 * overhead)
        let smallest = items.indices.sorted { (items[$0].estimate, $0) < (items[$1].estimate, $1) }.prefix(slots)
        var pieces: [Int: [WorkItem]] = [:]
        for i in smallest {
            let item = items[i]
            let count = min(item.tests.count, Int((item.estimate / piece).rounded(.down)))
            // Only classes timed before: a guess (test count, another destination) is no basis for cutting.
            guard case .history = item.source, count >= 2, !keepWhole(item.suite), !item.exclusive else { continue }
            pieces[i] = groups(of: item, count: count, methods: methodEstimates(item, history: history))
        }
        guard !pieces.isEmpty else { return items }
        return items.indices.flatMap { pieces[$0] ?? [items[$0]] }
    }

    /// Per-method estimates: history where known, the class's remaining mean elsewhere.
    public func methodEstimates(_ item: WorkItem, history: TimingHistory) -> (estimates: [Double], known: Int) {
        let known = item.tests.map { name -> Double? in
            let id = TestID(suite: item.suite, name: name)
            // A test Fanout stopped takes at least as long as it ran then (a censored observation).
            let censored = history.censoredDuration(of: id)
            guard let samples = history.tests[id], !samples.isEmpty else { return censored }
            return max(Estimator.percentile(Array(samples.prefix(10)), percentile), censored ?? 0)
        }
        let knownCount = known.compactMap { $0 }.count
        let knownSum = known.compactMap { $0 }.reduce(0, +)
        let unknownCount = item.tests.count - knownCount
        let unknownEach = unknownCount > 0
            ? max(item.estimate - knownSum, 0.001 * Double(unknownCount)) / Double(unknownCount) : 0
        return (known.map { $0 ?? unknownEach }, knownCount)
    }

    func groups(of item: WorkItem, share: Double, history: TimingHistory) -> [WorkItem] {
        let methods = methodEstimates(item, history: history)
        let classTotal = methods.estimates.reduce(0, +)
        let longest = methods.estimates.max() ?? 0
        let target = max(share / 2, longest, overhead * 10)
        let count = min(item.tests.count, max(2, Int((classTotal / target).rounded(.up))))
        return groups(of: item, count: count, methods: methods)
    }

    /// The class's methods in `count` groups of near-equal estimates.
    func groups(of item: WorkItem, count: Int, methods: (estimates: [Double], known: Int)) -> [WorkItem] {
        let (estimates, known) = methods
        // Longest method first into the lightest group; each group keeps the binary's order of its tests.
        var bins = Array(repeating: (sum: 0.0, tests: [Int]()), count: count)
        for i in estimates.indices.sorted(by: { (estimates[$0], $1) > (estimates[$1], $0) }) {
            let lightest = bins.indices.min { (bins[$0].sum, $0) < (bins[$1].sum, $1) } ?? 0
            bins[lightest].sum += estimates[i]
            bins[lightest].tests.append(i)
        }
        return bins.filter { !$0.tests.isEmpty }.map { bin in
            WorkItem(suite: item.suite, framework: item.framework, destination: item.destination,
                     tests: bin.tests.sorted().map { item.tests[$0] }, isWholeSuite: false, estimate: bin.sum,
                     source: .methods(known: known, of: item.tests.count), requeues: item.requeues)
        }
    }

    /// `item` cut in two: the tests in `picked` and the rest, each in the binary's order and estimated from its
    /// methods' own history (methods never seen share what is left of the class's estimate). Nil when either part
    /// would be empty. Everything else about the item (its marks, its destination) stays with both parts.
    public func separating(_ picked: Set<String>, from item: WorkItem, history: TimingHistory) -> (picked: WorkItem, rest: WorkItem)? {
        let chosen = item.tests.indices.filter { picked.contains(item.tests[$0]) }
        guard !chosen.isEmpty, chosen.count < item.tests.count else { return nil }
        let methods = methodEstimates(item, history: history)
        let isChosen = Set(chosen)
        func part(_ indices: [Int]) -> WorkItem {
            var p = item
            p.tests = indices.map { item.tests[$0] }
            p.isWholeSuite = false
            p.estimate = indices.reduce(0) { $0 + methods.estimates[$1] }
            p.source = .methods(known: methods.known, of: item.tests.count)
            return p
        }
        return (part(chosen), part(item.tests.indices.filter { !isChosen.contains($0) }))
    }
}
