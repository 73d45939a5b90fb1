extension Sequence {
    /// The elements ordered by a key computed once per element, not twice per comparison; equal keys keep their
    /// order. For sorting large values (100,000 test results) by a derived key: only indices move while sorting.
    public func sorted<Key: Comparable>(byKey key: (Element) throws -> Key, descending: Bool = false) rethrows -> [Element] {
        let items = Array(self)
        let keys = try items.map(key)
        // The standard library's sort is stable: equal keys keep their indices' order.
        let order = descending ? items.indices.sorted { keys[$0] > keys[$1] } : items.indices.sorted { keys[$0] < keys[$1] }
        return order.map { items[$0] }
    }
}
