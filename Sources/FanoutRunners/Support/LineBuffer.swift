/// Splits a byte stream into lines as chunks arrive. A chunk may end in the middle of a line (or of a UTF-8
/// sequence): the rest waits for the next chunk. Invalid UTF-8 is repaired, never fatal, and a line longer than
/// `maxLineLength` is cut so garbage output cannot grow memory without bound.
public struct LineBuffer: Sendable {
    private var pending: [UInt8] = []
    public let maxLineLength: Int

    public init(maxLineLength: Int = 1 << 20) {
        self.maxLineLength = maxLineLength
    }

    public mutating func append(_ chunk: [UInt8]) -> [String] {
        var lines: [String] = []
        var start = chunk.startIndex
        for i in chunk.indices where chunk[i] == UInt8(ascii: "\n") {
            pending.append(contentsOf: chunk[start..<i])
            lines.append(take())
            start = i + 1
        }
        pending.append(contentsOf: chunk[start...])
        if pending.count > maxLineLength { lines.append(take()) }
        return lines
    }

    /// The last line when the stream ends without a newline.
    public mutating func flush() -> String? {
        pending.isEmpty ? nil : take()
    }

    private mutating func take() -> String {
        var bytes = pending
        pending.removeAll(keepingCapacity: true)
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
