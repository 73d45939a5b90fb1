import FanoutCore

/// The one way text from a report reaches report.html: terminal escapes removed, control and bidi characters shown as
/// U+FFFD (`TextSanitizer`), then `& < > " '` as entities, so a test named `<script>` or `"><img onerror=…>` shows as
/// text in element content and in quoted attribute values alike.
enum HTMLEscaping {
    /// Sanitized and escaped; `singleLine` turns newlines into spaces (names, ids, attribute values).
    static func escape(_ text: String, singleLine: Bool = false) -> String {
        let clean = TextSanitizer.terminalSafe(text, singleLine: singleLine)
        guard clean.unicodeScalars.contains(where: { "&<>\"'".unicodeScalars.contains($0) }) else { return clean }
        var out = ""
        out.reserveCapacity(clean.utf8.count + 16)
        for ch in clean {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(ch)
            }
        }
        return out
    }

    /// At most `limit` characters of a text, with a marker saying how much was cut (before escaping).
    static func clipped(_ text: String, to limit: Int) -> String {
        guard text.count > limit else { return text }
        return String(text.prefix(limit)) + " … [\(text.count - limit) more characters cut]"
    }
}
