import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// The shell lines of README.md's "Install and first run", Quickstart and "In CI" sections, taken from the README itself and run as
/// written wherever that fits in a test: a script whose run bit is missing in git, a renamed flag or a line that no
/// longer works fails here. Scripts that take minutes (a release build, the demo, the test suite) are checked for
/// what makes them run as written: tracked with mode 755, a shebang whose interpreter exists, the flags the README
/// names for them, and `--help` run directly from a clean copy of HEAD where they have one. Every `fanout` line runs
/// for real against the demo suite's built product.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ReadmeCommandLinesTests {
    /// One command of a README line (lines are split at `&&`).
    struct Line: CustomStringConvertible {
        var section: String
        /// The whole line, without its comment.
        var text: String
        var comment: String
        var commands: [String]
        var description: String { "[\(section)] \(text)" }
    }

    static let readme = repositoryRoot.appendingPathComponent("README.md").path
    /// The user's first screen, and the demo and tests (for contributors).
    static let install = "Install and first run"
    static let quickstart = "Quickstart: the demo and this project's tests"

    /// The fenced `sh` lines of a `## title` section, comments split off (a line of only a comment continues the one
    /// before it).
    static func lines(of title: String) throws -> [Line] {
        let text = try String(contentsOfFile: readme, encoding: .utf8)
        var inSection = false, inFence = false
        var found: [Line] = []
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if raw.hasPrefix("## ") { inSection = raw == "## " + title; continue }
            guard inSection else { continue }
            if raw.hasPrefix("```") { inFence = !inFence && raw == "```sh"; continue }
            guard inFence else { continue }
            let (code, comment) = split(raw)
            if code.isEmpty {
                if !comment.isEmpty, !found.isEmpty { found[found.count - 1].comment += " " + comment }
                continue
            }
            found.append(Line(section: title, text: code, comment: comment,
                              commands: code.components(separatedBy: " && ").map { $0.trimmingCharacters(in: .whitespaces) }))
        }
        return found
    }

    /// A line's code and its comment: `#` after whitespace, outside quotes.
    static func split(_ line: String) -> (String, String) {
        var quote: Character?
        var previous: Character = " "
        for (i, c) in zip(line.indices, line) {
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "'" || c == "\"" {
                quote = c
            } else if c == "#", previous == " " {
                return (line[..<i].trimmingCharacters(in: .whitespaces), line[line.index(after: i)...].trimmingCharacters(in: .whitespaces))
            }
            previous = c
        }
        return (line.trimmingCharacters(in: .whitespaces), "")
    }

    static func allLines() throws -> [Line] {
        try [Self.quickstart, Self.install, "In CI"].flatMap { try lines(of: $0) }
    }

    /// Runs `script` with /bin/sh in `cwd`, with this build's `fanout` first on PATH; exit code and all output.
    func sh(_ script: String, in cwd: String, timeout: Double = 120) async throws -> (Int32, String) {
        let bin = cwd + "/.readme-bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: bin + "/fanout") {
            try FileManager.default.createSymbolicLink(atPath: bin + "/fanout", withDestinationPath: try fanoutExecutable())
        }
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let (ending, out, err) = await LocalTransport(slots: 1).capture(
            Command(executable: "/bin/sh", arguments: ["-c", "cd \(ShellQuote.quote(cwd)) && \(script)"], environment: ["PATH": path]),
            timeout: timeout)
        let code: Int32 = if case .exited(let c) = ending { c } else { -1 }
        return (code, String(decoding: out + err, as: UTF8.self))
    }

    /// A folder with the config every `fanout` line here reads: the demo suite's built product, made quick.
    func demoConfig(in folder: String, append: Bool = false) async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let text = """
            bundle: \(bundle)
            skip: ['Performance|SessionTimeout|Straggler|Flaky']
            destination:
              name: local
              environment: { DEMO_LATENCY_SCALE: "0.05" }

            """
        let path = folder + "/fanout.yml"
        let before = append ? try String(contentsOfFile: path, encoding: .utf8) : ""
        try (before + "\n" + text).write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test func theSectionsHoldTheLinesThisTestRuns() throws {
        let all = try Self.allLines()
        for (section, least) in [(Self.quickstart, 2), (Self.install, 4), ("In CI", 5)] {
            #expect(all.filter { $0.section == section }.count >= least, "README's \(section) section lost its fenced sh lines")
        }
        for line in all {
            for command in line.commands {
                let first = command.split(separator: " ").first.map(String.init) ?? ""
                #expect(first == "fanout" || first == "cd" || first.hasPrefix("scripts/"), "a line this test does not know how to check: \(line)")
            }
        }
    }

    /// `scripts/…` lines: executable in git, a shebang that resolves, the flags the README names, `--help` run
    /// directly (no `bash` in front: that is what hid a missing run bit) from a clean copy of HEAD.
    @Test func theScriptsTheLinesCallRunAsWritten() async throws {
        let dir = try TempDir()
        let (archived, archiveOut) = try await sh("git -C \(ShellQuote.quote(repositoryRoot.path)) archive --format=tar HEAD | tar -xf -", in: dir.path)
        try #require(archived == 0, "a clean copy of HEAD (git archive): \(archiveOut)")
        let scripts = try Self.allLines().filter { $0.commands.first?.hasPrefix("scripts/") == true }
        #expect(scripts.count >= 3, "install.sh, demo.sh, test.sh")
        for line in scripts {
            let words = line.text.split(separator: " ").map(String.init)
            let script = words[0]
            let (lsCode, mode) = try await sh("git -C \(ShellQuote.quote(repositoryRoot.path)) ls-files -s -- \(ShellQuote.quote(script))", in: dir.path)
            #expect(lsCode == 0 && mode.hasPrefix("100755 "), "\(script) is executable in git (git ls-files -s: '\(mode.trimmingCharacters(in: .whitespacesAndNewlines))'); fix: git update-index --chmod=+x \(script)")
            let text = try String(contentsOfFile: dir.file(script), encoding: .utf8)
            let shebang = text.split(separator: "\n").first.map(String.init) ?? ""
            #expect(shebang.hasPrefix("#!"), "\(script) starts with a shebang")
            let interpreter = shebang.dropFirst(2).split(separator: " ").map(String.init)
            let program = interpreter.first == "/usr/bin/env" ? interpreter.dropFirst().first ?? "" : interpreter.first ?? ""
            let (found, _) = try await sh("command -v \(ShellQuote.quote(program))", in: dir.path)
            #expect(found == 0, "\(script)'s interpreter \(program) exists")
            // Flags the line or its comment names for the script: its code (not only its comments) reads them.
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }.joined(separator: "\n")
            for flag in (line.text + " " + line.comment).split(separator: " ").map(String.init) where flag.hasPrefix("--") {
                let name = flag.trimmingCharacters(in: CharacterSet(charactersIn: ":,.;`"))
                let read = code.contains(name)
                #expect(read, "\(script) reads \(name) (README: \(line))")
            }
            if text.contains("--help)") || text.contains("--help |") {
                let (code, out) = try await sh(line.text + " --help", in: dir.path)
                #expect(code == 0, "\(line.text) --help, run directly from a clean copy: exit \(code): \(out)")
                #expect(!out.contains("Permission denied"), "\(out)")
            }
        }
    }

    /// `fanout --version`; `cd path/to/your/package && fanout init`; `fanout plan && fanout run`, in one shell as a
    /// user types them. The package is a copy of the demo suite; the only liberty: its fanout.yml then names the
    /// demo's built product, so `plan` and `run` do not build inside a test.
    @Test func theInstallLinesRunAsWritten() async throws {
        let dir = try TempDir()
        let fanoutLines = try Self.lines(of: Self.install).filter { $0.commands.first?.hasPrefix("scripts/") != true }
        #expect(fanoutLines.count >= 3)
        guard let version = fanoutLines.first(where: { $0.text.contains("--version") }),
              let initLine = fanoutLines.first(where: { $0.text.hasSuffix("fanout init") }),
              let runLine = fanoutLines.first(where: { $0.text.contains("fanout run") }) else {
            Issue.record("the Install section's fanout lines changed: \(fanoutLines)")
            return
        }
        let (vCode, vOut) = try await sh(version.text, in: dir.path)
        #expect(vCode == 0 && vOut.trimmingCharacters(in: .whitespacesAndNewlines) == Coordinator.version, "\(version): \(vOut)")

        // The package the line cds into: the demo suite's tracked files.
        let target = initLine.commands.first { $0.hasPrefix("cd ") }.map { String($0.dropFirst(3)) } ?? "."
        let package = dir.file(target)
        let demo = "Tests/Fixtures/DemoSuite"
        let (copied, copyOut) = try await sh("mkdir -p \(ShellQuote.quote(package)) && git -C \(ShellQuote.quote(repositoryRoot.path)) archive --format=tar HEAD \(demo) | tar -xf - -C \(ShellQuote.quote(package)) --strip-components=3", in: dir.path)
        try #require(copied == 0, "\(copyOut)")
        let (initCode, initOut) = try await sh(initLine.text, in: dir.path)
        #expect(initCode == 0, "\(initLine): \(initOut)")
        #expect(FileManager.default.fileExists(atPath: package + "/fanout.yml"), "\(initOut)")
        try await demoConfig(in: package, append: true)
        // The next line runs where the one before cd'ed to.
        let (runCode, runOut) = try await sh(runLine.text, in: package)
        #expect(runCode == 0, "\(runLine): \(runOut)")
        #expect(runOut.contains("predicted (s)"), "fanout plan showed its split: \(runOut)")
        #expect(runOut.contains("PASSED"), "fanout run ran: \(runOut)")
    }

    /// The "In CI" lines as a pipeline runs them: the shard job's lines once per shard (the README's `2/4` and
    /// `shard-2` as each job numbers them), the merge job's, then a second pipeline's first line, which imports the
    /// history the first one left (the first pipeline skips it, as its comment says).
    @Test func theCILinesRunAsWritten() async throws {
        let ci = try Self.lines(of: "In CI")
        guard let importLine = ci.first, importLine.text.hasPrefix("fanout history import"),
              let shardStart = ci.firstIndex(where: { $0.text.contains("--shard 2/4") }),
              let merge = ci.firstIndex(where: { $0.text.hasPrefix("fanout report merge") }), shardStart < merge else {
            Issue.record("the In CI section's lines changed: \(ci)")
            return
        }
        // Each job on a machine of its own: a fresh folder with the config, the reports of the shards gathered into
        // the merge job's folder as artifacts. (Jobs in one folder would share the history each writes, and a later
        // shard would plan from an earlier one's timings: a split no real pipeline makes.)
        let first = try TempDir()
        for shard in 1...4 {
            let job = try TempDir()
            try await demoConfig(in: job.path)
            for line in ci[shardStart..<merge] {
                let text = line.text.replacingOccurrences(of: "2/4", with: "\(shard)/4").replacingOccurrences(of: "shard-2", with: "shard-\(shard)")
                let (code, out) = try await sh(text, in: job.path)
                #expect(code == 0, "shard \(shard): \(text): \(out)")
            }
            let (copied, out) = try await sh("mkdir -p \(ShellQuote.quote(first.file("reports"))) && cp -R reports/shard-\(shard) \(ShellQuote.quote(first.file("reports/")))", in: job.path)
            #expect(copied == 0, "\(out)")
        }
        for line in ci[merge...] {
            let (code, out) = try await sh(line.text, in: first.path)
            #expect(code == 0, "\(line): \(out)")
        }
        let merged = try jsonReport(first.file("merged/report.json"))
        #expect(testIDs(merged).count > 100, "the merged report holds the whole run")
        #expect(FileManager.default.fileExists(atPath: first.file("fanout-history.json")), "the cache the next pipeline restores")

        let second = try TempDir()
        try FileManager.default.copyItem(atPath: first.file("fanout-history.json"), toPath: second.file("fanout-history.json"))
        let (code, out) = try await sh(importLine.text, in: second.path)
        #expect(code == 0, "\(importLine): \(out)")
    }
}
