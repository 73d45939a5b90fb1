import FanoutCore

/// Escaping for XML 1.0 that is total: any Swift string, whatever a test printed or named itself, comes out as text a
/// strict parser accepts and reads back as the same characters (minus what XML cannot carry at all).
enum XMLEscaping {
    /// Element content. Escapes all five special characters (not only `&` and `<`) so one rule serves everywhere, and
    /// writes CR as a reference because parsers fold a literal CR into LF.
    static func text(_ value: String) -> String {
        escape(value, inAttribute: false)
    }

    /// An attribute value (always written in double quotes). Tab, LF and CR are written as references: a parser
    /// replaces literal ones with spaces (attribute-value normalization), which would join a multi-line message.
    static func attribute(_ value: String) -> String {
        escape(value, inAttribute: true)
    }

    private static func escape(_ value: String, inAttribute: Bool) -> String {
        let stripped = TextSanitizer.strippingANSI(value)
        var out = ""
        out.reserveCapacity(stripped.utf8.count)
        for scalar in stripped.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\r": out += "&#13;"
            case "\t" where inAttribute: out += "&#9;"
            case "\n" where inAttribute: out += "&#10;"
            default:
                // Not even as a character reference: XML 1.0 forbids `&#1;` just as it forbids the raw byte.
                out.unicodeScalars.append(TextSanitizer.isXMLChar(scalar) ? scalar : "\u{FFFD}")
            }
        }
        return out
    }
}
