import Foundation

/// Base64 as SSH files use it, on Foundation's codec: padded for key blobs (known_hosts), unpadded for SHA256
/// fingerprints (as OpenSSH prints them), and a decoder lenient enough for PEM key bodies.
enum Base64 {
    static func encode(_ bytes: [UInt8], padding: Bool = true) -> String {
        let text = Data(bytes).base64EncodedString()
        return padding ? text : String(text.prefix { $0 != "=" })
    }

    private static let ignored = Set(" \n\r\t=".utf8)

    /// Decodes standard base64, ignoring whitespace; nil on any other invalid character.
    ///
    /// Foundation's decoder is stricter than the text we feed it, so the text is normalized first:
    /// - Whitespace is dropped: PEM bodies are lines joined together, with a "\r" each from a CRLF file. Foundation's
    ///   only way to skip whitespace, `.ignoreUnknownCharacters`, would skip invalid characters such as "!" too.
    /// - "=" is dropped wherever it stands and the padding added back: Foundation refuses text without padding, and
    ///   decodes an "=" inside the text into wrong bytes.
    /// - A lone last character (6 bits, less than a byte) is checked and dropped, where Foundation would refuse the
    ///   whole text. This keeps the behaviour of the hand-written decoder this replaced, for truncated key files.
    static func decode(_ text: some Sequence<UInt8>) -> [UInt8]? {
        var compact = text.filter { !ignored.contains($0) }
        if compact.count % 4 == 1 {
            guard let last = compact.popLast(), isAlphabet(last) else { return nil }
        }
        compact += repeatElement(UInt8(ascii: "="), count: (4 - compact.count % 4) % 4)
        return Data(base64Encoded: Data(compact)).map { Array($0) }
    }

    private static func isAlphabet(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }
}
