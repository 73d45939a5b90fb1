import Dispatch
import class Foundation.NSLock

/// Runs independent pieces of CPU work at once on the machine's cores and returns their results in order.
///
/// For synchronous code paths that handle large reports (decoding the shards' report.json files, rendering every
/// output format of one report): each piece is a pure function of Sendable values, so the only shared state is the
/// result slots, guarded by a lock.
public enum Parallel {
    public static func map<T: Sendable, R: Sendable>(_ items: [T], _ transform: @Sendable (T) -> R) -> [R] {
        guard items.count > 1 else { return items.map(transform) }
        let slots = Slots<R>(count: items.count)
        DispatchQueue.concurrentPerform(iterations: items.count) { i in
            slots.set(i, transform(items[i]))
        }
        return slots.values()
    }

    private final class Slots<R>: @unchecked Sendable {
        private let lock = NSLock()
        private var storage: [R?]

        init(count: Int) { storage = Array(repeating: nil, count: count) }

        func set(_ index: Int, _ value: R) {
            lock.lock()
            storage[index] = value
            lock.unlock()
        }

        /// Every slot is set once concurrentPerform returns.
        func values() -> [R] {
            lock.lock()
            defer { lock.unlock() }
            return storage.compactMap { $0 }
        }
    }
}
