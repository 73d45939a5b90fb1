/// A class of the test product as discovery lists it: `Module.Class` and its number of test methods.
struct ListedClass: Sendable, Hashable, Codable {
    var module: String
    var name: String
    var tests: Int

    var qualified: String { "\(module).\(name)" }
}

/// The static splitters CI setups use: every shard is fixed before anything runs, one process per shard.
enum StaticStrategy: String, CaseIterable, Codable, Sendable {
    /// Equal class counts, dealt round-robin in discovery order (`--shard-index i --shard-count N` style).
    case count
    /// Equal class counts in contiguous ranges of sorted class names (e.g. `circleci tests split --split-by=name`).
    case name
    /// Longest first into the least-loaded shard, with class durations from the last run's report
    /// (Flank, `circleci tests split --split-by=timings`, Knapsack: what CI timing splitters do).
    case timings

    var label: String {
        switch self {
        case .count: "split by count"
        case .name: "split by name"
        case .timings: "static longest-first (history)"
        }
    }

    /// Splits `classes` into at most `shards` non-empty shards.
    func shards(of classes: [ListedClass], shards n: Int, history: [String: Double]) -> [[ListedClass]] {
        let n = max(1, n)
        var out = Array(repeating: [ListedClass](), count: n)
        switch self {
        case .count:
            for (i, c) in classes.enumerated() { out[i % n].append(c) }
        case .name:
            let sorted = classes.sorted { $0.qualified < $1.qualified }
            let base = sorted.count / n, extra = sorted.count % n
            var start = 0
            for s in 0..<n {
                let size = base + (s < extra ? 1 : 0)
                out[s] = Array(sorted[start..<(start + size)])
                start += size
            }
        case .timings:
            // Classes the history does not know get the mean of those it does (as timing splitters do).
            let known = classes.compactMap { history[$0.qualified] }
            let fallback = known.isEmpty ? 1 : known.reduce(0, +) / Double(known.count)
            let weighted = classes.map { ($0, history[$0.qualified] ?? fallback) }
                .sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0.qualified < $1.0.qualified }
            var load = Array(repeating: 0.0, count: n)
            for (c, d) in weighted {
                let s = load.indices.min { load[$0] < load[$1] } ?? 0
                out[s].append(c)
                load[s] += d
            }
        }
        return out.filter { !$0.isEmpty }
    }
}
