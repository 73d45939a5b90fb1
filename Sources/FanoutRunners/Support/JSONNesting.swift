import Foundation

/// How deep a JSON text nests its arrays and objects, counted without parsing it.
///
/// Foundation's `JSONDecoder` traps, instead of throwing, on a text that ends right where its nesting limit of 512 is
/// reached (`{"a":` followed by 512 `[`; Swift 6.3, Linux). The parsers decode whatever a test binary prints, so they
/// look at the depth first: nothing they decode nests more than a few levels.
enum JSONNesting {
    /// Far deeper than an event-stream record (~5 levels) or a `--dump-tests-json` tree (~7), far below 512.
    static let limit = 64

    /// Whether `text` has more than `limit` arrays and objects open at once (brackets inside strings do not count).
    static func exceedsLimit(_ text: Substring) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            // A text with few brackets in all cannot nest deeply: the common case, decided by two memchr scans.
            guard openings(in: bytes, upTo: limit) > limit else { return false }
            var depth = 0
            var inString = false
            var escaped = false
            for byte in bytes {
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    }
                } else if byte == UInt8(ascii: "\"") {
                    inString = true
                } else if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") {
                    depth += 1
                    if depth > limit { return true }
                } else if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
                    depth -= 1
                }
            }
            return false
        }
    }

    /// How many `[` and `{` the bytes hold, counting no further than just past `bound`.
    private static func openings(in bytes: UnsafeBufferPointer<UInt8>, upTo bound: Int) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var count = 0
        for opening in [UInt8(ascii: "["), UInt8(ascii: "{")] {
            var i = 0
            while count <= bound, i < bytes.count, let hit = memchr(base + i, Int32(opening), bytes.count - i) {
                count += 1
                i = UnsafePointer(hit.assumingMemoryBound(to: UInt8.self)) - base + 1
            }
        }
        return count
    }
}
