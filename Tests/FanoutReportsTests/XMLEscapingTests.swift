import Testing
@testable import FanoutReports

@Suite(.timeLimit(.minutes(2))) struct XMLEscapingTests {
    @Test func escapesTheFiveSpecialCharacters() {
        #expect(XMLEscaping.text(#"a & b < c > d "e" 'f'"#) == "a &amp; b &lt; c &gt; d &quot;e&quot; &apos;f&apos;")
        #expect(XMLEscaping.attribute("<&>") == "&lt;&amp;&gt;")
        #expect(XMLEscaping.text("&amp;") == "&amp;amp;", "already-escaped text is escaped again, not trusted")
    }

    @Test func whitespaceInAttributesIsWrittenAsReferences() {
        #expect(XMLEscaping.attribute("a\nb\tc\rd") == "a&#10;b&#9;c&#13;d")
        #expect(XMLEscaping.text("a\nb\tc\rd") == "a\nb\tc&#13;d")
    }

    @Test func charactersIllegalInXMLAreReplaced() {
        // ESC is illegal too, but it starts an escape sequence, which is removed whole (tested below).
        let illegal = (0x00...0x1F).filter { ![0x09, 0x0A, 0x0D, 0x1B].contains($0) }.compactMap(Unicode.Scalar.init)
            + ["\u{FFFE}", "\u{FFFF}"]
        for scalar in illegal {
            let text = "a" + String(Character(scalar)) + "b"
            #expect(XMLEscaping.text(text) == "a\u{FFFD}b", "U+\(String(scalar.value, radix: 16))")
            #expect(XMLEscaping.attribute(text) == "a\u{FFFD}b")
        }
    }

    @Test func aLoneEscapeIsRemoved() {
        #expect(XMLEscaping.text("end\u{1B}") == "end")
        #expect(XMLEscaping.attribute("a\u{1B}\u{1}") == "a\u{FFFD}")
    }

    @Test func legalUnicodeIsKept() {
        let text = "emoji 🚀👩‍💻, CJK 漢字, accents é, private use \u{E000}, DEL \u{7F}, NEL \u{85}, "
            + "max \u{10FFFF}"
        #expect(XMLEscaping.text(text) == text)
    }

    @Test func ansiSequencesAreRemovedBeforeEscaping() {
        #expect(XMLEscaping.text("\u{1B}[1;31merror\u{1B}[0m: <x>") == "error: &lt;x&gt;")
    }
}
