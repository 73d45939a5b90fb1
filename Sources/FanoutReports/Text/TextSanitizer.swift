/// Cleans text that came from test processes (names, messages, logs) before it reaches an output with rules about
/// characters. Test output is untrusted: colored loggers, progress bars and raw bytes end up in names and logs.
enum TextSanitizer {
    /// Removes ANSI/VT100 escape sequences: colors and cursor moves (CSI), window titles and hyperlinks (OSC),
    /// device strings (DCS, SOS, PM, APC) and two-character escapes. CI viewers show them as garbage, and in XML the
    /// ESC character is not even legal.
    static func strippingANSI(_ text: String) -> String {
        // Fast path: most text has no escapes, and copying every log scalar by scalar would be wasted work.
        guard text.unicodeScalars.contains(where: { $0 == "\u{1B}" || $0 == "\u{9B}" || $0 == "\u{9D}" }) else {
            return text
        }
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        while i < scalars.count {
            let s = scalars[i]
            switch s {
            case "\u{1B}":
                i = endOfEscape(scalars, afterESC: i + 1)
            case "\u{9B}":
                i = endOfCSI(scalars, from: i + 1)
            case "\u{9D}":
                i = endOfString(scalars, from: i + 1)
            default:
                out.append(s)
                i += 1
            }
        }
        return String(out)
    }

    /// Index just past the escape sequence whose ESC was at `start - 1`.
    private static func endOfEscape(_ s: [Unicode.Scalar], afterESC start: Int) -> Int {
        guard start < s.count else { return start }
        switch s[start].value {
        case 0x5B: // '[' CSI
            return endOfCSI(s, from: start + 1)
        case 0x5D, 0x50, 0x58, 0x5E, 0x5F: // ']' OSC, 'P' DCS, 'X' SOS, '^' PM, '_' APC: strings ended by ST or BEL
            return endOfString(s, from: start + 1)
        case 0x20...0x2F: // intermediates, then one final byte (e.g. ESC ( B)
            var i = start
            while i < s.count, (0x20...0x2F).contains(s[i].value) { i += 1 }
            if i < s.count, (0x30...0x7E).contains(s[i].value) { i += 1 }
            return i
        case 0x30...0x7E: // two-character escape (ESC 7, ESC M, ESC c, ...)
            return start + 1
        default: // a lone ESC: drop it, keep what follows
            return start
        }
    }

    /// CSI: parameter bytes 0x30-0x3F, intermediate bytes 0x20-0x2F, one final byte 0x40-0x7E. A sequence broken by
    /// anything else ends there, so a truncated log never swallows the text after it.
    private static func endOfCSI(_ s: [Unicode.Scalar], from start: Int) -> Int {
        var i = start
        while i < s.count, (0x30...0x3F).contains(s[i].value) { i += 1 }
        while i < s.count, (0x20...0x2F).contains(s[i].value) { i += 1 }
        if i < s.count, (0x40...0x7E).contains(s[i].value) { i += 1 }
        return i
    }

    /// OSC and friends end with BEL, ESC \ or the C1 string terminator. An unterminated one runs to the end of a line
    /// at most: dropping a whole log because of one cut-off hyperlink would be worse than leaving a fragment.
    private static func endOfString(_ s: [Unicode.Scalar], from start: Int) -> Int {
        var i = start
        while i < s.count {
            switch s[i].value {
            case 0x07, 0x9C: return i + 1
            case 0x1B: return i + 1 < s.count && s[i + 1] == "\\" ? i + 2 : i + 1
            case 0x0A: return i
            default: i += 1
            }
        }
        return i
    }

    /// The `Char` production of XML 1.0: tab, LF, CR, and everything from U+0020 except U+FFFE and U+FFFF
    /// (surrogates cannot occur in a Swift string).
    static func isXMLChar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: true
        case 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    /// Line endings folded to LF: CRLF from Windows-style loggers, lone CR from progress bars redrawing a line.
    static func normalizingNewlines(_ text: String) -> String {
        guard text.unicodeScalars.contains("\r") else { return text }
        var out = String.UnicodeScalarView()
        var previousWasCR = false
        for s in text.unicodeScalars {
            if s == "\r" {
                out.append("\n")
                previousWasCR = true
            } else {
                if !(s == "\n" && previousWasCR) { out.append(s) }
                previousWasCR = false
            }
        }
        return String(out)
    }

    /// Text made safe to print on a terminal: escapes removed, line endings folded, tabs as spaces, and any other
    /// control character shown as U+FFFD so foreign bytes can neither move the cursor nor break the layout.
    static func terminalSafe(_ text: String) -> String {
        let cleaned = normalizingNewlines(strippingANSI(text))
        var out = String.UnicodeScalarView()
        for s in cleaned.unicodeScalars {
            switch s.value {
            case 0x0A: out.append(s)
            case 0x09: out.append(contentsOf: "    ".unicodeScalars)
            case 0x00...0x1F, 0x7F...0x9F, 0xFFFE, 0xFFFF: out.append("\u{FFFD}")
            default: out.append(s)
            }
        }
        return String(out)
    }
}
