/// A binary min-heap: slot free times in plan simulation (thousands of slots, a hundred thousand pops), and the
/// event queue of the benchmark's simulated fleets.
public struct MinHeap<Element> {
    private var storage: [Element] = []
    private let less: (Element, Element) -> Bool

    public init(_ less: @escaping (Element, Element) -> Bool) { self.less = less }

    public var isEmpty: Bool { storage.isEmpty }
    public var count: Int { storage.count }

    public mutating func push(_ e: Element) {
        storage.append(e)
        var i = storage.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard less(storage[i], storage[parent]) else { break }
            storage.swapAt(i, parent)
            i = parent
        }
    }

    public mutating func pop() -> Element? {
        guard !storage.isEmpty else { return nil }
        storage.swapAt(0, storage.count - 1)
        let top = storage.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < storage.count, less(storage[l], storage[m]) { m = l }
            if r < storage.count, less(storage[r], storage[m]) { m = r }
            if m == i { break }
            storage.swapAt(i, m)
            i = m
        }
        return top
    }
}
