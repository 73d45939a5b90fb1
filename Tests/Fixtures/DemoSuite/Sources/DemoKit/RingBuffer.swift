/// Fixed-size ring buffer that overwrites the oldest element when full.
public struct RingBuffer<Element> {
    private var slots: [Element?]
    private var head = 0
    public private(set) var count = 0

    public init(capacity: Int) {
        precondition(capacity > 0)
        slots = Array(repeating: nil, count: capacity)
    }

    public var capacity: Int { slots.count }
    public var isFull: Bool { count == capacity }
    public var isEmpty: Bool { count == 0 }

    public mutating func push(_ e: Element) {
        let tail = (head + count) % capacity
        slots[tail] = e
        if isFull { head = (head + 1) % capacity } else { count += 1 }
    }

    public mutating func pop() -> Element? {
        guard !isEmpty else { return nil }
        let e = slots[head]
        slots[head] = nil
        head = (head + 1) % capacity
        count -= 1
        return e
    }

    public var elements: [Element] {
        (0..<count).compactMap { slots[(head + $0) % capacity] }
    }
}
