import FanoutAgents
import FanoutCore
import Foundation
import Testing

/// Every flag of every `fanout` command is passed by at least one test, or listed below as deliberately untested with
/// the reason: a flag nobody runs drifts from its help and its docs unnoticed. The commands and their flags come
/// from the executable itself (`--experimental-dump-help`, swift-argument-parser's description of the whole tool).
///
/// "Passed by a test": the flag's spelling (`--keep-whole`, or `-c` for a flag with only a short name) appears in a
/// string of a test source (Tests/, fixtures aside) or of a file the tests run as written (config/ci/, README's
/// command lines), in a file that also names one of the commands that have it. A flag several commands share with
/// the same help (`run`, `plan` and `list` share their options: one parsing, one meaning) counts once. A reading of
/// text, not of a run: it keeps the list honest, and a test that names a flag without using it is for review to catch.
struct FlagCoverageTests {
    /// `command path` → `--flag` → why no test passes it.
    static let deliberatelyUntested: [String: [String: String]] = [:]

    /// Flags every command has, from the argument parser itself.
    static let builtIn: Set = ["--help", "-h", "--version", "--generate-completion-script", "--experimental-dump-help"]

    struct Flag: Hashable {
        var command: String
        var names: [String]
        var help: String
        var spelled: String { names.first { $0.hasPrefix("--") } ?? names[0] }
    }

    /// Every (command, flag) of the tool, from `fanout --experimental-dump-help`.
    static func flags() async throws -> [Flag] {
        let (ending, out, err) = await LocalTransport(slots: 1).capture(
            Command(executable: try fanoutExecutable(), arguments: ["--experimental-dump-help"]), timeout: 60)
        try #require(ending == .exited(0), "fanout --experimental-dump-help: \(String(decoding: err, as: UTF8.self))")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(out)) as? [String: Any])
        var found: [Flag] = []
        func walk(_ command: [String: Any], path: [String]) {
            let name = command["commandName"] as? String ?? "?"
            let here = path + [name]
            for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["kind"] as? String != "positional" {
                let names = (argument["names"] as? [[String: Any]] ?? []).compactMap { n -> String? in
                    guard let kind = n["kind"] as? String, let value = n["name"] as? String else { return nil }
                    return kind == "short" ? "-" + value : "--" + value
                }
                guard !names.isEmpty, Set(names).isDisjoint(with: builtIn) else { continue }
                found.append(Flag(command: here.joined(separator: " "), names: names,
                                  help: argument["abstract"] as? String ?? ""))
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] { walk(sub, path: here) }
        }
        walk(try #require(json["command"] as? [String: Any]), path: [])
        return found
    }

    /// The text the check reads: test sources and the files tests run as written.
    static func corpus() throws -> [String: String] {
        let fm = FileManager.default
        var files: [String: String] = [:]
        let tests = repositoryRoot.appendingPathComponent("Tests").path
        for case let path as String in fm.enumerator(atPath: tests)! where path.hasSuffix(".swift") && !path.hasPrefix("Fixtures/") && !path.hasSuffix("/FlagCoverageTests.swift") {
            files["Tests/" + path] = try String(contentsOfFile: tests + "/" + path, encoding: .utf8)
        }
        let ci = repositoryRoot.appendingPathComponent("config/ci").path
        for name in try fm.contentsOfDirectory(atPath: ci) {
            files["config/ci/" + name] = try String(contentsOfFile: ci + "/" + name, encoding: .utf8)
        }
        files["README.md (its command lines)"] = try ReadmeCommandLinesTests.allLines().map(\.text).joined(separator: "\n")
        return files
    }

    /// `--keep-whole` as a whole word: not the prefix of `--keep-whole-x`.
    static func mentions(_ text: String, _ flag: String) -> Bool {
        var search = text.startIndex..<text.endIndex
        while let r = text.range(of: flag, range: search) {
            let after = r.upperBound < text.endIndex ? text[r.upperBound] : " "
            let before = r.lowerBound > text.startIndex ? text[text.index(before: r.lowerBound)] : " "
            let wordChar: (Character) -> Bool = { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
            if !wordChar(after) && !wordChar(before) { return true }
            search = r.upperBound..<text.endIndex
        }
        return false
    }

    @Test func everyFlagIsPassedByATestOrListedWithAReason() async throws {
        let flags = try await Self.flags()
        #expect(flags.count > 50, "the tool's flags were read: \(flags.count)")
        let files = try Self.corpus()
        var untested: [String] = []
        // One flag shared by several commands (an option group) is one entry, named by all of them.
        let groups = Dictionary(grouping: flags) { "\($0.names)\u{1}\($0.help)" }.values.map { group in
            (commands: group.map(\.command), flag: group[0])
        }.sorted { ($0.commands[0], $0.flag.spelled) < ($1.commands[0], $1.flag.spelled) }
        for (commands, flag) in groups {
            let listed = commands.lazy.compactMap { Self.deliberatelyUntested[$0]?[flag.spelled] }.first
            let words = Set(commands.flatMap { $0.split(separator: " ").dropFirst().map(String.init) })
            // The file names one of the commands: `"plan"`, or `plan` as a word (top-level flags: any file).
            let namesCommand: (String) -> Bool = { text in
                words.isEmpty || words.contains { text.contains("\"\($0)\"") || Self.mentions(text, $0) }
            }
            let passed = files.contains { _, text in Self.mentions(text, flag.spelled) && namesCommand(text) }
            let name = commands.map { $0.replacingOccurrences(of: "fanout ", with: "") }.joined(separator: "/") + " " + flag.spelled
            if passed, let listed {
                Issue.record("\(name) is passed by a test now: take it off the list (\(listed))")
            }
            if !passed && listed == nil { untested.append(name) }
        }
        #expect(untested.isEmpty, """
            flags no test passes (\(untested.count)); pass each in a test of what it does, or list it in \
            FlagCoverageTests.deliberatelyUntested with the reason: \(untested.joined(separator: ", "))
            """)
        // The list names only flags that exist.
        for (command, listed) in Self.deliberatelyUntested {
            for name in listed.keys {
                #expect(flags.contains { $0.command == command && $0.names.contains(name) }, "listed but not a flag: \(command) \(name)")
            }
        }
    }

    /// The check's reading: a flag no file names is not found (this file, which names it, is not read); a flag
    /// every run passes is; a longer flag is not its prefix's mention.
    @Test func aFlagNoTestPassesIsFound() throws {
        let files = try Self.corpus()
        #expect(!files.contains { Self.mentions($0.value, "--no-such-flag-anywhere-x") }, "this file is not read")
        #expect(files.contains { Self.mentions($0.value, "--slots") })
        #expect(!Self.mentions("--keep-whole-x", "--keep-whole") && Self.mentions("[\"--keep-whole\", x]", "--keep-whole"))
    }
}

/// Every key fanout.yml accepts is documented in config/fanout.example.yml: the keys come from the parser's own
/// `mapping(allowed: [...])` lists (ConfigFile.swift), each must appear there as `key:` (commented or not).
struct ConfigKeyCoverageTests {
    @Test func everyKeyTheParserAcceptsIsInTheExampleConfig() throws {
        let parser = try String(contentsOf: repositoryRoot.appendingPathComponent("Sources/FanoutCoordinator/Config/ConfigFile.swift"),
                                encoding: .utf8)
        let example = try String(contentsOf: repositoryRoot.appendingPathComponent("config/fanout.example.yml"), encoding: .utf8)
        var keys: Set<String> = []
        var rest = parser[...]
        while let r = rest.range(of: "allowed: [") {
            let list = rest[r.upperBound...].prefix { $0 != "]" }
            for part in list.split(separator: ",") {
                let key = part.trimmingCharacters(in: .whitespacesAndNewlines).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                if !key.isEmpty { keys.insert(key) }
            }
            rest = rest[r.upperBound...]
        }
        #expect(keys.count > 60 && keys.contains("not_exclusive") && keys.contains("proxy_jump"), "the parser's keys were read: \(keys.count)")
        let documented = { (key: String) in
            example.split(separator: "\n").contains { line in
                let text = line.drop { $0 == " " || $0 == "#" || $0 == "-" || $0 == "{" }
                return text.hasPrefix(key + ":") || line.contains(" " + key + ":") || line.contains("{" + key + ":")
                    || line.contains("{ " + key + ":")
            }
        }
        let missing = keys.filter { !documented($0) }.sorted()
        #expect(missing.isEmpty, "keys fanout.yml accepts that config/fanout.example.yml does not show: \(missing)")
    }
}
