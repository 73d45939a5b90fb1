/// Cleans text that came from test processes or agents (names, messages, locations, logs, remote stderr) before it
/// reaches an output with rules about characters. Test output is untrusted: colored loggers, progress bars and raw
/// bytes end up in names and logs, and a hostile test could set the window title, write the clipboard (OSC 52) or
/// fake and hide progress lines. The console summary, the JUnit writer and the CLI's live progress lines all use this
/// one sanitizer.
public enum TextSanitizer {
    /// Removes ANSI/VT100 escape sequences: colors and cursor moves (CSI), window titles and hyperlinks (OSC),
    /// device strings (DCS, SOS, PM, APC) and two-character escapes. CI viewers show them as garbage, and in XML the
    /// ESC character is not even legal.
    public static func strippingANSI(_ text: String) -> String {
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
    public static func isXMLChar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: true
        case 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    /// Line endings folded to LF: CRLF from Windows-style loggers, lone CR from progress bars redrawing a line.
    public static func normalizingNewlines(_ text: String) -> String {
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
    /// control character shown as U+FFFD so foreign bytes can neither move the cursor nor break the layout. Bidi
    /// controls are shown as U+FFFD too: they reorder what is displayed ("Trojan Source"), so a name could read as
    /// something it is not. With `singleLine`, line breaks become spaces, for text that must stay on its line (a test
    /// id, a location, a progress line) and could otherwise print a fake line of its own.
    public static func terminalSafe(_ text: String, singleLine: Bool = false) -> String {
        let cleaned = normalizingNewlines(strippingANSI(text))
        var out = String.UnicodeScalarView()
        for s in cleaned.unicodeScalars {
            switch s.value {
            case 0x0A: out.append(singleLine ? " " : s)
            case 0x09: out.append(contentsOf: "    ".unicodeScalars)
            case 0x00...0x1F, 0x7F...0x9F, 0xFFFE, 0xFFFF: out.append("\u{FFFD}")
            case _ where isBidiControl(s): out.append("\u{FFFD}")
            default: out.append(s)
            }
        }
        return String(out)
    }

    /// The explicit directional formatting characters: embeddings and overrides (U+202A-202E), isolates
    /// (U+2066-2069), and the marks LRM, RLM (U+200E, U+200F) and ALM (U+061C).
    public static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
        default: false
        }
    }
}
