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

    @Test func anExecutableHoldingAnEqualsSignIsNeverReadAsAnAssignment() throws {
        // Unquoted, `X=1 arg` in command position would assign X and run `arg`.
        #expect(ShellQuote.commandWord("X=1") == "'X=1'")
        #expect(ShellQuote.commandWord("/opt/A=B/tool") == "'/opt/A=B/tool'")
        #expect(ShellQuote.commandWord("/usr/bin/tool") == "/usr/bin/tool")
        #expect(ShellQuote.commandWord("a b=c") == "'a b=c'")
        let command = Command(executable: "/opt/A=B/tool", arguments: ["--x=1"], environment: ["V": "a b", "A": "1"])
        #expect(command.shellLine() == "A=1 V='a b' '/opt/A=B/tool' --x=1")
        #expect(command.shellLine(exec: true) == "A=1 V='a b' exec '/opt/A=B/tool' --x=1")
        #expect(command.description == command.shellLine())
        // A name no shell can assign is quoted: the shell then fails to find a command of that name, loudly.
        #expect(Command(executable: "/bin/true", arguments: [], environment: ["A;B": "1"]).shellLine() == "'A;B'=1 /bin/true")
    }

    @Test(arguments: [("PATH", true), ("_x9", true), ("a", true), ("9A", false), ("A-B", false), ("", false),
                      ("A B", false), ("É", false), ("A=B", false), ("A$", false)])
    func variableNames(name: String, valid: Bool) {
        #expect(ShellQuote.isVariableName(name) == valid)
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
