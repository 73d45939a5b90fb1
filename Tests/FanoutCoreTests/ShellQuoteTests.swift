import Foundation
import Testing
@testable import FanoutCore

@Suite(.timeLimit(.minutes(2))) struct ShellQuoteTests {
    @Test(arguments: [
        "plain", "with space", "it's", "$(rm -rf /)", "`id`", "a;b", "line\nbreak", "", "\"dq\"", "back\\slash",
        "glob*?[x]", "tab\there", "emoji 🚀", "--flag=value", "semi;colon && echo hi | cat > /tmp/x",
    ])
    func quotedValueSurvivesAPosixShellUnchanged(value: String) throws {
        // The shell must hand the value back byte for byte: run `printf %s <quoted>` through /bin/sh.
        let quoted = ShellQuote.quote(value)
        #expect(!quoted.isEmpty)
        #expect(posixShellUnquote(quoted) == value)
        #expect(try realShell(printing: quoted) == value)
    }

    /// What `/bin/sh -c 'printf %s <quoted>'` prints.
    func realShell(printing quoted: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "printf %s " + quoted]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func plainWordsStayReadable() {
        #expect(ShellQuote.quote("Module.Class/testA,Module.B") == "Module.Class/testA,Module.B")
        #expect(ShellQuote.join(["a b", "c"]) == "'a b' c")
    }
}

/// A faithful model of how a POSIX shell reads single-quoted and unquoted words (no expansion inside '…').
/// Returns nil when the text would undergo expansion or splitting (an unsafe quote).
func posixShellUnquote(_ text: String) -> String? {
    var out = ""
    var inQuote = false
    var chars = Array(text)
    var i = 0
    while i < chars.count {
        let ch = chars[i]
        if inQuote {
            if ch == "'" { inQuote = false } else { out.append(ch) }
        } else {
            switch ch {
            case "'": inQuote = true
            case "\\":
                i += 1
                guard i < chars.count else { return nil }
                out.append(chars[i])
            case " ", "\t", "\n", "$", "`", ";", "&", "|", "<", ">", "(", ")", "*", "?", "[", "\"", "#", "~": return nil
            default: out.append(ch)
            }
        }
        i += 1
    }
    chars.removeAll()
    return inQuote ? nil : out
}
