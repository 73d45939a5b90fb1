/// A tiny least-recently-used cache (not thread-safe; tests own their instance).
public final class LRUCache<Key: Hashable, Value> {
    public let capacity: Int
    private var storage: [Key: Value] = [:]
    private var order: [Key] = []
    public private(set) var hits = 0
    public private(set) var misses = 0
    public private(set) var evictions = 0

    public init(capacity: Int) {
        precondition(capacity > 0, "capacity must be positive")
        self.capacity = capacity
    }

    public var count: Int { storage.count }
    public var keysByRecency: [Key] { order }

    public func value(for key: Key) -> Value? {
        guard let v = storage[key] else { misses += 1; return nil }
        hits += 1
        touch(key)
        return v
    }

    public func set(_ value: Value, for key: Key) {
        if storage[key] != nil {
            storage[key] = value
            touch(key)
            return
        }
        if storage.count == capacity, let oldest = order.first {
            storage[oldest] = nil
            order.removeFirst()
            evictions += 1
        }
        storage[key] = value
        order.append(key)
    }

    @discardableResult
    public func remove(_ key: Key) -> Value? {
        guard let v = storage.removeValue(forKey: key) else { return nil }
        order.removeAll { $0 == key }
        return v
    }

    public func removeAll() {
        storage.removeAll()
        order.removeAll()
    }

    private func touch(_ key: Key) {
        order.removeAll { $0 == key }
        order.append(key)
    }
}
