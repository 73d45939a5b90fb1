import Testing
@testable import FanoutCore

@Suite(.timeLimit(.minutes(2))) struct TextSanitizerTests {
    @Test(arguments: [
        ("\u{1B}[31mred\u{1B}[0m", "red"),
        ("\u{1B}[38;5;196mcolor256\u{1B}[m", "color256"),
        ("\u{1B}[38;2;255;0;0mtruecolor\u{1B}[39m", "truecolor"),
        ("a\u{1B}[2K\u{1B}[1Gb", "ab"),
        ("\u{1B}[?25lhidden cursor\u{1B}[?25h", "hidden cursor"),
        ("\u{1B}]8;;https://example.com\u{7}link\u{1B}]8;;\u{1B}\\", "link"),
        ("\u{1B}]0;window title\u{7}text", "text"),
        ("\u{1B}(Bcharset", "charset"),
        ("\u{1B}7saved\u{1B}8", "saved"),
        ("\u{9B}32mC1 CSI\u{9B}0m", "C1 CSI"),
        ("lone \u{1B}", "lone "),
        ("cut \u{1B}[31", "cut "),
        ("unterminated \u{1B}]8;;http://x\nnext line", "unterminated \nnext line"),
        ("no escapes at all: [31m is text", "no escapes at all: [31m is text"),
    ])
    func stripsANSI(input: String, expected: String) {
        #expect(TextSanitizer.strippingANSI(input) == expected)
    }

    @Test func foldsLineEndings() {
        #expect(TextSanitizer.normalizingNewlines("a\r\nb\rc\n\rd") == "a\nb\nc\n\nd")
    }

    @Test func terminalSafeLeavesNoControlCharacters() {
        let safe = TextSanitizer.terminalSafe("\u{1B}[31mx\u{1B}[0m\t\u{7}\u{0}y\r\nz\u{9B}")
        #expect(safe == "x    \u{FFFD}\u{FFFD}y\nz")
        #expect(!safe.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
    }

    /// What hostile tests print to take over a terminal: none of it may survive, whatever is around it.
    static let hostile: [String] = [
        "\u{1B}]0;pwned title\u{7}",                      // window title (OSC 0)
        "\u{1B}]52;c;cm0gLXJmIH4K\u{7}",                  // write the clipboard (OSC 52)
        "\u{1B}]52;c;cm0gLXJmIH4K\u{1B}\\",               // ... ended by ST
        "\u{9D}52;c;Y2xpcA==\u{9C}",                       // ... as C1 OSC and ST
        "\u{1B}[2K\u{1B}[1A\u{1B}[2K",                     // erase lines, move up: hide earlier output
        "\r[  12.0s] 50/50 tests · ETA 0s",                // a fake progress line drawn over the real one
        "\u{1B}[8mconcealed\u{1B}[28m",                    // invisible text
        "\u{1B}P+q544e\u{1B}\\",                           // DCS: query the terminal
        "\u{1B}[6n",                                        // ask the terminal to answer (cursor position report)
        "\u{1B}c",                                          // reset the terminal
        "\u{202E}gnp.exe\u{202C}",                         // right-to-left override
        "\u{2066}isolate\u{2069}\u{200E}\u{200F}\u{061C}",
    ]

    @Test(arguments: hostile)
    func terminalSafeDisarmsWhatHostileTestsPrint(attack: String) {
        for text in [attack, "before " + attack + " after", attack + attack] {
            let safe = TextSanitizer.terminalSafe(text, singleLine: true)
            #expect(!safe.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
                    "no C0 or C1 control: \(safe.debugDescription)")
            #expect(!safe.unicodeScalars.contains(where: TextSanitizer.isBidiControl), "\(safe.debugDescription)")
            #expect(!safe.contains("\n"))
        }
        #expect(TextSanitizer.terminalSafe("before " + attack + " after").hasPrefix("before "))
        #expect(TextSanitizer.terminalSafe("before " + attack + " after").hasSuffix(" after"), "text around it stays")
    }

    @Test func bidiControlsAreShownNotObeyed() {
        #expect(TextSanitizer.terminalSafe("a\u{202E}b\u{2066}c\u{200F}d\u{061C}e") == "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e")
        #expect(TextSanitizer.terminalSafe("שלום עולם") == "שלום עולם", "right-to-left text itself is fine")
        for v: UInt32 in [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C] {
            let s: Unicode.Scalar? = Unicode.Scalar(v)
            #expect(s.map(TextSanitizer.isBidiControl) == true, "U+\(String(v, radix: 16))")
        }
        #expect(!TextSanitizer.isBidiControl("a") && !TextSanitizer.isBidiControl("\u{200D}"))
    }

    @Test func singleLineKeepsTextOnItsLine() {
        #expect(TextSanitizer.terminalSafe("a\nb\r\nc", singleLine: true) == "a b c")
        #expect(TextSanitizer.terminalSafe("a\nb") == "a\nb")
    }
}
