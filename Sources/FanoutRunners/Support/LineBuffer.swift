import Foundation

/// Splits a byte stream into lines as chunks arrive. A chunk may end in the middle of a line (or of a UTF-8
/// sequence): the rest waits for the next chunk. Invalid UTF-8 is repaired, never fatal, and a line longer than
/// `maxLineLength` bytes is cut into pieces of exactly that many bytes, so garbage output cannot grow memory without
/// bound, and the pieces are the same however the stream is chunked.
public struct LineBuffer: Sendable {
    private var pending: [UInt8] = []
    public let maxLineLength: Int

    public init(maxLineLength: Int = 1 << 20) {
        // A limit of 0 would cut empty pieces forever.
        self.maxLineLength = max(1, maxLineLength)
    }

    public mutating func append(_ chunk: [UInt8]) -> [String] {
        var lines: [String] = []
        chunk.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var start = 0
            while start < buffer.count {
                let newline = memchr(base + start, 0x0A, buffer.count - start)
                    .map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base }
                let stop = newline ?? buffer.count
                // Cut where the line reaches the limit, counted from the line's start, not from the chunk's.
                while pending.count + (stop - start) > maxLineLength {
                    let take = maxLineLength - pending.count
                    pending.append(contentsOf: UnsafeBufferPointer(start: base + start, count: take))
                    lines.append(String(decoding: pending, as: UTF8.self))
                    pending.removeAll(keepingCapacity: true)
                    start += take
                }
                guard newline != nil else {
                    pending.append(contentsOf: UnsafeBufferPointer(start: base + start, count: stop - start))
                    return
                }
                if pending.isEmpty {
                    lines.append(Self.line(UnsafeBufferPointer(start: base + start, count: stop - start)))
                } else {
                    pending.append(contentsOf: UnsafeBufferPointer(start: base + start, count: stop - start))
                    lines.append(pending.withUnsafeBufferPointer(Self.line))
                    pending.removeAll(keepingCapacity: true)
                }
                start = stop + 1
            }
        }
        return lines
    }

    /// The last line when the stream ends without a newline.
    public mutating func flush() -> String? {
        guard !pending.isEmpty else { return nil }
        defer { pending.removeAll(keepingCapacity: true) }
        return pending.withUnsafeBufferPointer(Self.line)
    }

    /// A line without its `\r` (CRLF line ends).
    private static func line(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let end = bytes.last == UInt8(ascii: "\r") ? bytes.count - 1 : bytes.count
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
    }
}
