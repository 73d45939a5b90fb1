/// Measuring and fitting plain text into terminal columns. Widths are display columns, not characters: emoji and
/// East Asian wide characters take two, combining marks none (a `Character` is already a whole cluster).
enum ConsoleText {
    static func width(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    static func width(of character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if first.properties.isEmojiPresentation
            || character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) && first.properties.isEmoji {
            return 2
        }
        switch first.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }

    /// Fits `text` into `width` columns by cutting its middle: both the module (start) and the test (end) of a
    /// long name stay recognizable.
    static func truncateMiddle(_ text: String, to width: Int) -> String {
        guard Self.width(text) > width else { return text }
        guard width > 1 else { return String(repeating: "…", count: max(0, width)) }
        let available = width - 1
        let headBudget = (available + 1) / 2, tailBudget = available - headBudget
        var head = "", tail = "", used = 0
        for c in text {
            let w = Self.width(of: c)
            if used + w > headBudget { break }
            head.append(c); used += w
        }
        used = 0
        for c in text.reversed() {
            let w = Self.width(of: c)
            if used + w > tailBudget { break }
            tail.insert(c, at: tail.startIndex); used += w
        }
        return head + "…" + tail
    }

    /// `text` cut at the end to `width` columns, with an ellipsis when cut.
    static func truncateEnd(_ text: String, to width: Int) -> String {
        guard Self.width(text) > width else { return text }
        var out = "", used = 0
        for c in text {
            let w = Self.width(of: c)
            if used + w > width - 1 { break }
            out.append(c); used += w
        }
        return out + "…"
    }

    static func padRight(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - Self.width(text)))
    }

    static func padLeft(_ text: String, to width: Int) -> String {
        String(repeating: " ", count: max(0, width - Self.width(text))) + text
    }

    /// Wraps text into lines of at most `width` columns: the first line starts with `indent`, the following ones
    /// (including every line after a newline in `text`) with `continuation`. Breaks at spaces where it can and
    /// inside a word only when one word is wider than a line; nothing is dropped, so no message is lost.
    static func wrap(_ text: String, width: Int, indent: String = "", continuation: String? = nil) -> [String] {
        let continuation = continuation ?? indent
        var out: [String] = []
        var line = "", lineWidth = 0, prefixWidth = 0, hasText = false
        func start(_ prefix: String) {
            line = prefix; lineWidth = Self.width(prefix); prefixWidth = lineWidth; hasText = false
        }
        func flush() {
            while line.last == " " { line.removeLast() }
            out.append(line)
        }
        for (index, paragraph) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            start(index == 0 ? indent : continuation)
            var pendingSpaces: Substring = ""
            for token in tokens(paragraph) {
                if token.first == " " {
                    // Spaces between words wait for the next word: a line never ends with them. Leading spaces
                    // (a backtrace's indentation) are kept.
                    if hasText {
                        pendingSpaces = token
                    } else {
                        let kept = token.prefix(max(0, width - lineWidth))
                        line += kept
                        lineWidth += kept.count
                    }
                    continue
                }
                let tokenWidth = Self.width(token)
                if hasText, lineWidth + pendingSpaces.count + tokenWidth > width {
                    flush()
                    start(continuation)
                } else {
                    line += pendingSpaces
                    lineWidth += pendingSpaces.count
                }
                pendingSpaces = ""
                for c in token {
                    let w = Self.width(of: c)
                    if lineWidth + w > width, lineWidth > prefixWidth {
                        flush()
                        start(continuation)
                    }
                    line.append(c)
                    lineWidth += w
                    hasText = true
                }
            }
            flush()
        }
        return out
    }

    /// Runs of spaces and runs of everything else, in order.
    private static func tokens(_ text: Substring) -> [Substring] {
        var out: [Substring] = []
        var index = text.startIndex
        while index < text.endIndex {
            let isSpace = text[index] == " "
            var end = index
            while end < text.endIndex, (text[end] == " ") == isSpace { end = text.index(after: end) }
            out.append(text[index..<end])
            index = end
        }
        return out
    }
}
