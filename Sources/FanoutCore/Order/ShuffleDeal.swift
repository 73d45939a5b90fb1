/// `--shuffle SEED`: which tests share a process, at random but reproducibly.
///
/// Neither framework lets Fanout choose the order inside a process on Linux: XCTest runs the classes it is given in
/// the binary's order, and Swift Testing runs suites at the same time. What Fanout does choose is which classes share
/// a process, and so which tests run before which. Under `--shuffle`, the items of each repetition, framework and
/// destination are put in a seeded random order and dealt to one process per slot (`processes`), round robin, each
/// process's items kept together as a `batch` the scheduler never mixes. The same seed, items and slots give the
/// same processes, hence the same order in each; another seed puts other tests before each test.
public enum ShuffleDeal {
    /// The items in their shuffled order, each with its process's `batch` number; never cut by stealing (that would
    /// change what shares a process).
    public static func deal(_ items: [WorkItem], seed: Int, processes: Int) -> [WorkItem] {
        var groups: [String: [WorkItem]] = [:]
        var keys: [String] = []
        for item in items {
            let key = "\(item.repetition ?? 0)|\(item.framework.rawValue)|\(item.destination)"
            if groups[key] == nil { keys.append(key) }
            groups[key, default: []].append(item)
        }
        var dealt: [WorkItem] = []
        var nextBatch = 0
        for key in keys {
            guard var group = groups[key] else { continue }
            // The input order is the preparation's (catalog order): sort first, so the seed alone decides.
            group.sort { ($0.suite, $0.tests.first ?? "") < ($1.suite, $1.tests.first ?? "") }
            var random = SeededRandom(seed: UInt64(truncatingIfNeeded: seed) &+ UInt64(truncatingIfNeeded: key.stableHash))
            group.shuffle(using: &random)
            var batches: [[WorkItem]] = Array(repeating: [], count: max(1, processes))
            var turn = 0
            for item in group {
                // Round robin, skipping a process it may not share (an exclusive item, a piece of the same class, a
                // same-named XCTest class of another module): then a process of its own.
                var placed = false
                for step in 0..<batches.count {
                    let b = (turn + step) % batches.count
                    if batches[b].allSatisfy({ Scheduler.canShareUnit($0, item) }) {
                        batches[b].append(item)
                        turn = b + 1
                        placed = true
                        break
                    }
                }
                if !placed { batches.append([item]) }
            }
            for batch in batches where !batch.isEmpty {
                for var item in batch {
                    item.batch = nextBatch
                    item.keepWhole = true
                    dealt.append(item)
                }
                nextBatch += 1
            }
        }
        return dealt
    }
}

extension String {
    /// FNV-1a: a hash that is the same in every process (Swift's `hashValue` is seeded per process).
    var stableHash: UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return h
    }
}
