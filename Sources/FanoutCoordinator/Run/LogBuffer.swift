/// Keeps a bounded log of a unit's output: the head and the tail, with a marker where the middle was dropped.
/// A test that prints gigabytes must not take the coordinator's memory with it.
struct LogBuffer: Sendable {
    let limit: Int
    private(set) var head: [UInt8] = []
    private var tail: [UInt8] = []
    private var dropped = 0

    init(limit: Int = 256 * 1024) {
        self.limit = limit
    }

    mutating func append(_ bytes: [UInt8]) {
        let half = limit / 2
        if head.count < half {
            let n = min(half - head.count, bytes.count)
            head += bytes[0..<n]
            if n == bytes.count { return }
            appendTail(bytes[n...])
        } else {
            appendTail(bytes[...])
        }
    }

    private mutating func appendTail(_ bytes: ArraySlice<UInt8>) {
        tail += bytes
        let half = limit / 2
        if tail.count > half * 2 {
            let cut = tail.count - half
            dropped += cut
            tail.removeFirst(cut)
        }
    }

    var text: String {
        var s = String(decoding: head, as: UTF8.self)
        if dropped > 0 { s += "\n[… \(dropped) bytes not kept …]\n" }
        s += String(decoding: tail, as: UTF8.self)
        return s
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var s = Substring(self)
        while s.last == "\n" || s.last == "\r" { s = s.dropLast() }
        return String(s)
    }
}
