/// One of N shards of a run split across CI jobs: `index` counts from 1.
public struct Shard: Sendable, Hashable, Codable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    public var description: String { "\(index)/\(count)" }

    /// `I/N` with 1 ≤ I ≤ N; nil for anything else.
    public init?(parsing text: String) {
        let parts = text.filter { $0 != " " }.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1, (1...n).contains(i) else { return nil }
        self.init(index: i, count: n)
    }
}

/// Splits a run's work items into N shards that N CI jobs run independently. Every job computes the SAME split from
/// the same inputs (the discovered catalog and the same history file), with no coordination between jobs:
///
/// - work never timed here (a guess from test counts) is estimated at the median of the timed items' estimates per
///   test times its test count, so one unknown class does not sink or float a shard;
/// - longest first into the least-loaded shard (LPT), ties broken by destination, class name and tests, and then by
///   the lowest shard index, so the order items arrive in does not matter;
/// - items are split into method groups before this (the caller's `MethodSplitter`, for `splitSlots(count)` slots), so
///   a class longer than a shard's share is spread over several shards.
public enum ShardPlanner {
    /// The slots a sharded run splits classes for: the same in every job whatever its own slots (`--slots`, or twice
    /// its cores by default), since jobs that split differently cut different shards (tests in two shards, others in
    /// none: seen with jobs of 2, 2, 2 and 1 slots on GRDB, 414 of 2,777 tests in no shard). Eight a shard: the
    /// pieces stay small enough for any job's slots.
    public static let slotsPerShard = 8
    public static func splitSlots(_ count: Int) -> Int { slotsPerShard * max(1, count) }

    /// The items of every shard, in shard order; each item is in exactly one shard.
    public static func shards(_ items: [WorkItem], count: Int) -> [[WorkItem]] {
        let n = max(1, count)
        let weighed = balancedEstimates(items)
        let order = weighed.indices.sorted { a, b in
            let x = weighed[a], y = weighed[b]
            return x.estimate != y.estimate ? x.estimate > y.estimate : Scheduler.longestFirst(x, y)
        }
        var loads = Array(repeating: 0.0, count: n)
        var shards = Array(repeating: [WorkItem](), count: n)
        for i in order {
            var lightest = 0
            for s in 1..<n where loads[s] < loads[lightest] { lightest = s }
            loads[lightest] += weighed[i].estimate
            shards[lightest].append(items[i])
        }
        return shards
    }

    /// The estimates the split uses: guesses replaced by the median timed rate per test (when anything was timed).
    static func balancedEstimates(_ items: [WorkItem]) -> [WorkItem] {
        let rates = items.filter { !$0.source.isGuess && !$0.tests.isEmpty }.map { $0.estimate / Double($0.tests.count) }
        guard !rates.isEmpty else { return items }
        let median = Estimator.percentile(rates, 0.5)
        return items.map { item in
            guard item.source.isGuess else { return item }
            var guessed = item
            guessed.estimate = median * Double(max(1, item.tests.count))
            return guessed
        }
    }

    /// The estimated seconds of each shard (what `fanout plan --shards N` shows).
    public static func loads(_ shards: [[WorkItem]]) -> [Double] {
        let all = balancedEstimates(shards.flatMap { $0 })
        var offset = 0
        return shards.map { shard in
            defer { offset += shard.count }
            return all[offset..<(offset + shard.count)].reduce(0) { $0 + $1.estimate }
        }
    }
}
