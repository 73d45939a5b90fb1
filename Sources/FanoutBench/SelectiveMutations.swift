import ArgumentParser
import FanoutCore
import Foundation

/// `fanout-bench selective-mutations`: proves selective testing's one promise, "no false green", on a real package
/// by mutation (docs/selective.md, "How the promise is checked").
///
/// On a private copy of the package, after a full pass recorded by `fanout run --selective`:
/// - each of N files of the package (a seeded sample of every file: sources, resources, fixtures, examples,
///   manifests) is changed in a way that alters behaviour where it can (a character of a string literal or a
///   number of a Swift source, a character of any other text, a byte of a binary file);
/// - Fanout decides (`fanout run --selective --no-record`: against the recorded pass, every time the same);
/// - the truth for every target Fanout skipped: the framework's own verdict under `swift test --filter` of that
///   target on the mutated build. A skipped target that fails there, and fails again on a second try, is a
///   **false green**. Targets Fanout ran cannot be one;
/// - the file is restored.
/// Reported: mutations tried, false greens (the promise: 0), the targets skipped on average (the saving), the
/// mutations some target caught, and the decision's overhead. `--overhead-rounds` also times the recording run
/// with and without observation.
struct SelectiveMutations: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "selective-mutations",
        abstract: "Mutate files of a real package one at a time: every target --selective skips must still pass (no false green).")

    @OptionGroup var common: CommonBenchOptions
    @Option(help: "The Swift package (a checkout; it is copied, never changed).")
    var package: String
    @Option(help: "A name for the results (default: the folder's name).")
    var name: String?
    @Option(help: "Mutations to try (files are drawn without repetition while there are any left).")
    var mutations = 50
    @Option(help: "The seed of the sample of files and of each mutation.")
    var seed: UInt64 = 1
    @Option(help: "Slots of fanout.")
    var slots = 4
    @Option(help: "Rounds of the recording run with and without observation, and of the run with nothing changed (0: not measured).")
    var overheadRounds = 3
    @OptionGroup var output: ResultsFileOption

    struct Mutation: Codable {
        var file: String
        var how: String
        var ran: [String]
        var skipped: [String]
        /// Targets Fanout ran that failed under the mutation (the mutation was caught).
        var caught: [String]
        /// Skipped targets whose own tests fail under the mutation: false greens.
        var falseGreens: [String]
        /// Skipped targets that failed once and passed on the second try (not counted as false greens).
        var flakyTruth: [String]
        /// Seconds Fanout took to decide.
        var decide: Double
    }

    struct Results: Codable {
        var package: String
        var commit: String?
        var testTargets: [String]
        var files: Int
        var mutations: [Mutation]
        /// Mutations that did not build (left out of the count, replaced by others).
        var didNotBuild: [String]
        /// The recording run (everything runs, verdicts recorded) with and without observation: walls and
        /// makespans in seconds, per round.
        var observedWalls: [Double]
        var unobservedWalls: [Double]
        var observedMakespans: [Double]
        var unobservedMakespans: [Double]
        /// Seconds to decide with nothing changed (one per `--overhead-rounds`), and those runs' walls: the cost of
        /// `--selective` when it skips everything.
        var decideUnchanged: [Double] = []
        var unchangedWalls: [Double] = []
        /// Test targets skipped with nothing changed (all of them, when every target passed at the start).
        var skippedUnchanged: Int = 0
        /// The tag or commit of the package, for people.
        var version: String?
        /// The recording run observed by strace instead (`selective.observe: strace`), per round; nil in results
        /// from before the preloaded observer.
        var straceWalls: [Double]? = nil
        /// How the observed rounds observed (the report's words, e.g. "a preloaded library").
        var observer: String? = nil

        var falseGreens: Int { mutations.reduce(0) { $0 + $1.falseGreens.count } }
        var skipRate: Double {
            mutations.isEmpty ? 0 : mutations.map { Double($0.skipped.count) / Double(max(1, $0.ran.count + $0.skipped.count)) }
                .reduce(0, +) / Double(mutations.count)
        }
    }

    mutating func run() async throws {
        let label = name ?? URL(fileURLWithPath: package).lastPathComponent
        let work = "\(common.dir)/work/mutations/\(label)"
        let copy = "\(work)/package"
        try? FileManager.default.removeItem(atPath: work)
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let cp = await Processes.run("/bin/cp", ["-a", package, copy])
        guard cp.succeeded else { throw BenchError("cannot copy \(package): \(cp.tail)") }
        for leftover in [".build", ".swiftpm", ".fanout"] { try? FileManager.default.removeItem(atPath: "\(copy)/\(leftover)") }
        let commit = await Processes.run("/usr/bin/env", ["git", "-C", package, "rev-parse", "HEAD"])
        let history = "\(work)/history.sqlite"
        var n = 0
        func fanout(_ extra: [String], history: String = history) async throws -> (ProcessResult, [String: Any], String) {
            n += 1
            let dir = "\(work)/run-\(n)"
            // From the package's root, as a user runs it (some suites read files relative to it).
            let r = await Processes.run("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", copy, common.fanout, "run", "--package", copy,
                                                    "--slots", String(slots), "--history", history, "--report-dir", dir] + extra,
                                        environment: ["NO_COLOR": "1"], timeout: 3600)
            let data = FileManager.default.contents(atPath: dir + "/report.json")
            let json = data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            return (r, json ?? [:], dir)
        }

        progress("\(label): the first run with --selective (builds, runs every target, records the passes)")
        let (first, firstReport, _) = try await fanout(["--selective"])
        guard let verdicts = (firstReport["selective"] as? [String: Any])?["verdicts"] as? [[String: Any]] else {
            throw BenchError("the first run wrote no selective verdicts (\(first.ending)):\n\(first.tail)")
        }
        let targets = verdicts.compactMap { $0["target"] as? String }.sorted()
        let failing = verdicts.filter { $0["verdict"] as? String != "passed" }.compactMap { $0["target"] as? String }
        if !failing.isEmpty { progress("\(label): not a full pass at the start (they always run): \(failing.joined(separator: ", "))") }
        var unchanged: [(Double, Double)] = []
        var skippedUnchanged = 0
        for _ in 0..<max(1, overheadRounds) {
            let (r, again, dir) = try await fanout(["--selective", "--no-record"])
            skippedUnchanged = Self.decisions(again).skipped.count
            unchanged.append((Self.decisions(again).seconds, r.seconds))
            try? FileManager.default.removeItem(atPath: dir)
        }
        progress("\(label): unchanged, \(skippedUnchanged) of \(targets.count) test targets skipped")
        let described = await Processes.run("/usr/bin/env", ["git", "-C", package, "describe", "--tags", "--always"])

        var files = Self.files(under: copy)
        var random = SeededRandom(seed: seed)
        files.sort()
        var pool = files
        var results = Results(package: label, commit: commit.succeeded ? commit.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : nil,
                              testTargets: targets, files: files.count, mutations: [], didNotBuild: [],
                              observedWalls: [], unobservedWalls: [], observedMakespans: [], unobservedMakespans: [])
        if overheadRounds > 0 {
            results.decideUnchanged = unchanged.map(\.0)
            results.unchangedWalls = unchanged.map(\.1)
        }
        results.skippedUnchanged = skippedUnchanged
        results.version = described.succeeded ? described.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : nil
        var attempts = 0
        while results.mutations.count < mutations, attempts < mutations * 3 {
            attempts += 1
            if pool.isEmpty { pool = files }
            let file = pool.remove(at: Int.random(in: 0..<pool.count, using: &random))
            let path = "\(copy)/\(file)"
            guard let original = FileManager.default.contents(atPath: path) else { continue }
            let (mutated, how) = Mutator.mutate(original, file: file, random: &random)
            try mutated.write(to: URL(fileURLWithPath: path))
            defer { try? original.write(to: URL(fileURLWithPath: path)) }
            let (r, report, dir) = try await fanout(["--selective", "--no-record"])
            let (ran, skipped, decide) = Self.decisions(report)
            if report.isEmpty || Self.buildFailed(r) {
                results.didNotBuild.append("\(file) (\(how))")
                progress("\(label): \(file) (\(how)): did not build, another file instead")
                continue
            }
            let failedModules = Set((report["results"] as? [[String: Any]] ?? []).compactMap { result -> String? in
                guard ["failed", "crashed", "timedOut"].contains(result["outcome"] as? String ?? "") else { return nil }
                return ((result["id"] as? [String: Any])?["suite"] as? [String: Any])?["module"] as? String
            })
            let modules = Self.modules(report)
            var mutation = Mutation(file: file, how: how, ran: ran, skipped: skipped,
                                    caught: ran.filter { failedModules.contains(modules[$0] ?? $0) }, falseGreens: [],
                                    flakyTruth: [], decide: decide)
            if !skipped.isEmpty {
                // The truth for what was skipped: the framework's verdict on the mutated build.
                let build = await Processes.run("/usr/bin/env", ["swift", "build", "--package-path", copy, "--build-tests"],
                                                timeout: 3600)
                guard build.succeeded else {
                    results.didNotBuild.append("\(file) (\(how))")
                    continue
                }
                // All skipped targets at once; only when that fails, each on its own (and a failure twice).
                let all = "^(" + skipped.map { modules[$0] ?? $0 }.joined(separator: "|") + ")\\."
                if await !Self.passes(copy, all) {
                    for target in skipped {
                        let filter = "^\(modules[target] ?? target)\\."
                        if await !Self.passes(copy, filter) {
                            if await !Self.passes(copy, filter) {
                                mutation.falseGreens.append(target)
                            } else {
                                mutation.flakyTruth.append(target)
                            }
                        }
                    }
                }
            }
            try? FileManager.default.removeItem(atPath: dir)
            results.mutations.append(mutation)
            progress("\(label) \(results.mutations.count)/\(mutations): \(file) (\(how)): ran \(ran.count), skipped \(skipped.count)"
                     + (mutation.caught.isEmpty ? "" : ", caught by \(mutation.caught.joined(separator: ", "))")
                     + (mutation.falseGreens.isEmpty ? "" : " — FALSE GREEN: \(mutation.falseGreens.joined(separator: ", "))"))
        }

        // The cost of observing: the recording run (a new history: everything runs and is recorded) with and
        // without it, alternating.
        let unobserved = "\(work)/unobserved.yml"
        try "selective:\n  enabled: true\n  observe: false\n".write(toFile: unobserved, atomically: true, encoding: .utf8)
        let strace = "\(work)/strace.yml"
        try "selective:\n  enabled: true\n  observe: strace\n".write(toFile: strace, atomically: true, encoding: .utf8)
        for round in 0..<overheadRounds {
            for way in ["observed", "strace", "not"] {
                let h = "\(work)/overhead-\(round)-\(way).sqlite"
                let config = way == "observed" ? [] : ["--config", way == "strace" ? strace : unobserved]
                let (r, report, dir) = try await fanout(["--selective"] + config, history: h)
                let timing = report["timing"] as? [String: Any]
                let makespan = timing?["makespan"] as? Double ?? 0
                let observation = (report["selective"] as? [String: Any])?["observation"] as? String ?? ""
                if way == "strace" {
                    guard observation.contains("(strace)") else { throw BenchError("the strace round was not observed by strace: \(observation)") }
                    results.straceWalls = (results.straceWalls ?? []) + [r.seconds]
                } else if way == "observed" {
                    if let open = observation.firstIndex(of: "("), let close = observation.firstIndex(of: ")"), open < close {
                        results.observer = String(observation[observation.index(after: open)..<close])
                    }
                    results.observedWalls.append(r.seconds)
                    results.observedMakespans.append(makespan)
                } else {
                    results.unobservedWalls.append(r.seconds)
                    results.unobservedMakespans.append(makespan)
                }
                try? FileManager.default.removeItem(atPath: dir)
            }
        }
        print(Self.summary(results))
        try output.write(results)
        if results.falseGreens > 0 { throw ExitCode(1) }
    }

    /// Every file of the package by relative path, build output and VCS data aside.
    static func files(under root: String) -> [String] {
        let skip: Set<String> = [".build", ".git", ".swiftpm", ".fanout"]
        var out: [String] = []
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        while let path = walker.nextObject() as? String {
            if skip.contains(URL(fileURLWithPath: path).lastPathComponent) {
                walker.skipDescendants()
                continue
            }
            var folder: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &folder), !folder.boolValue {
                out.append(path)
            }
        }
        return out
    }

    /// Whether the framework passes the tests matching `filter` on the current build.
    static func passes(_ package: String, _ filter: String) async -> Bool {
        let r = await Processes.run("/bin/sh", ["-c", "cd \"$0\" && exec swift test --skip-build --filter \"$1\"", package, filter],
                                    timeout: 3600)
        return r.succeeded
    }

    static func buildFailed(_ r: ProcessResult) -> Bool { (r.stdout + r.stderr).contains("the build failed") }

    /// The test targets Fanout ran and skipped, and its seconds to decide.
    static func decisions(_ report: [String: Any]) -> (ran: [String], skipped: [String], seconds: Double) {
        let s = report["selective"] as? [String: Any]
        let decisions = s?["decisions"] as? [[String: Any]] ?? []
        let ran = decisions.filter { $0["skipped"] as? Bool == false }.compactMap { $0["target"] as? String }
        let skipped = decisions.filter { $0["skipped"] as? Bool == true }.compactMap { $0["target"] as? String }
        return (ran.sorted(), skipped.sorted(), s?["seconds"] as? Double ?? 0)
    }

    /// Target name → module name (they differ when a name is not an identifier).
    static func modules(_ report: [String: Any]) -> [String: String] {
        let decisions = (report["selective"] as? [String: Any])?["decisions"] as? [[String: Any]] ?? []
        var out: [String: String] = [:]
        for d in decisions { if let t = d["target"] as? String, let m = d["module"] as? String { out[t] = m } }
        return out
    }

    /// BENCHMARKS.md's table: one row per package, the timings from `timings` (the same package measured apart).
    static func table(runs: [Results], timings: [Results]) -> String {
        func spread(_ xs: [Double], _ format: String = "%.2f") -> String {
            guard !xs.isEmpty else { return "—" }
            let s = xs.sorted()
            return String(format: "\(format) (\(format)–\(format))", s[s.count / 2], s.first ?? 0, s.last ?? 0)
        }
        var out = "| package | test targets | files | mutations | false greens | targets skipped, mean | mutations caught by a target that ran | nothing changed: skipped, deciding (s) | recording run wall, observed (s) | … not observed (s) | observed / not, per round | … by strace (s) | strace / not, per round |\n"
        out += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        for r in runs {
            let t = timings.first { $0.package == r.package }
            let ratios = zip(t?.observedWalls ?? [], t?.unobservedWalls ?? []).map { $0 / max($1, 1e-9) }
            let straceRatios = zip(t?.straceWalls ?? [], t?.unobservedWalls ?? []).map { $0 / max($1, 1e-9) }
            let caught = r.mutations.filter { !$0.caught.isEmpty }.count
            let skipped = String(format: "%.0f %%", r.skipRate * 100)
            let unchanged = "\(t?.skippedUnchanged ?? r.skippedUnchanged) of \(r.testTargets.count), \(spread(t?.decideUnchanged ?? [], "%.3f"))"
            let observed = "\(spread(t?.observedWalls ?? [])) | \(spread(t?.unobservedWalls ?? [])) | \(spread(ratios, "%.3f"))"
            let strace = "\(spread(t?.straceWalls ?? [])) | \(spread(straceRatios, "%.3f"))"
            out += "| \(r.package) | \(r.testTargets.count) | \(r.files) | \(r.mutations.count) | \(r.falseGreens) | \(skipped) | "
                + "\(caught) | \(unchanged) | \(observed) | \(strace) |\n"
        }
        return out
    }

    static func summary(_ r: Results) -> String {
        func med(_ xs: [Double]) -> String {
            guard !xs.isEmpty else { return "—" }
            let s = xs.sorted()
            return String(format: "%.2f s (%.2f–%.2f)", s[s.count / 2], s.first ?? 0, s.last ?? 0)
        }
        let decide = r.mutations.map(\.decide)
        var lines: [String] = [
            "\(r.package): \(r.mutations.count) mutations of \(r.files) files, \(r.testTargets.count) test targets",
            "  false greens: \(r.falseGreens)",
            String(format: "  targets skipped on average: %.1f%%", r.skipRate * 100),
            "  mutations caught by a target that ran: \(r.mutations.filter { !$0.caught.isEmpty }.count)",
            "  did not build (replaced): \(r.didNotBuild.count)",
            "  deciding after a mutation: \(med(decide))",
            "  nothing changed: \(r.skippedUnchanged) of \(r.testTargets.count) skipped, deciding \(med(r.decideUnchanged)), wall \(med(r.unchangedWalls))",
        ]
        if !r.observedWalls.isEmpty {
            lines.append("  recording run, observed: wall \(med(r.observedWalls)), makespan \(med(r.observedMakespans))")
            lines.append("  recording run, not observed: wall \(med(r.unobservedWalls)), makespan \(med(r.unobservedMakespans))")
            if let strace = r.straceWalls { lines.append("  recording run, observed by strace: wall \(med(strace))") }
        }
        return lines.joined(separator: "\n")
    }
}

/// How a file is changed: so that behaviour changes where it can, and its bytes at least.
enum Mutator {
    static func mutate(_ data: Data, file: String, random: inout SeededRandom) -> (Data, String) {
        guard let text = String(data: data, encoding: .utf8), !data.isEmpty else {
            guard !data.isEmpty else { return (Data("x".utf8), "an empty file gets a byte") }
            var bytes = [UInt8](data)
            let i = Int.random(in: 0..<bytes.count, using: &random)
            bytes[i] ^= 0x20
            return (Data(bytes), "byte \(i) flipped")
        }
        var chars = Array(text)
        if file.hasSuffix(".swift") {
            let literals = Self.stringLiteralCharacters(chars)
            if !literals.isEmpty {
                let i = literals[Int.random(in: 0..<literals.count, using: &random)]
                let old = chars[i]
                chars[i] = Self.other(than: old)
                return (Data(String(chars).utf8), "string literal: '\(old)' → '\(chars[i])' at character \(i)")
            }
            let numbers = Self.numberLiteralDigits(chars)
            if !numbers.isEmpty {
                let i = numbers[Int.random(in: 0..<numbers.count, using: &random)]
                let old = chars[i]
                chars[i] = Self.other(than: old)
                return (Data(String(chars).utf8), "number literal: '\(old)' → '\(chars[i])' at character \(i)")
            }
            // Nothing to change that still compiles for sure: its bytes at least.
            return (data + Data("\n// mutated\n".utf8), "a comment added")
        }
        let letters = chars.indices.filter { chars[$0].isLetter && chars[$0].isASCII || chars[$0].isNumber && chars[$0].isASCII }
        guard !letters.isEmpty else { return (data + Data("\nx\n".utf8), "a line added") }
        let i = letters[Int.random(in: 0..<letters.count, using: &random)]
        let old = chars[i]
        chars[i] = Self.other(than: old)
        return (Data(String(chars).utf8), "'\(old)' → '\(chars[i])' at character \(i)")
    }

    /// Another character of the same kind (a digit for a digit), so that the file still parses where it can.
    static func other(than c: Character) -> Character {
        if let d = c.wholeNumberValue, c.isASCII { return Character(String((d + 1) % 10)) }
        if c == "z" { return "a" }
        if c == "Z" { return "A" }
        guard let v = c.asciiValue else { return "x" }
        return Character(UnicodeScalar(v + 1))
    }

    /// Positions of the last digit of each number literal of Swift code (a digit not inside a name or a string), on
    /// lines that are not comments, imports, compiler directives or attributes.
    static func numberLiteralDigits(_ chars: [Character]) -> [Int] {
        let inStrings = Set(stringLiteralCharacters(chars))
        var out: [Int] = []
        var lineSkipped = false
        var atLineStart = true
        var inComment = false
        for (i, c) in chars.enumerated() {
            if c == "\n" { atLineStart = true; lineSkipped = false; inComment = false; continue }
            if atLineStart, !c.isWhitespace {
                atLineStart = false
                lineSkipped = c == "#" || c == "@" || c == "*" || String(chars[i...].prefix(6)) == "import"
            }
            if c == "/", i + 1 < chars.count, chars[i + 1] == "/" { inComment = true }
            guard !lineSkipped, !inComment, c.isASCII, c.isNumber, !inStrings.contains(i) else { continue }
            var start = i
            while start > 0, chars[start - 1].isASCII, chars[start - 1].isNumber { start -= 1 }
            let before = start > 0 ? chars[start - 1] : " "
            let after = i + 1 < chars.count ? chars[i + 1] : " "
            if before.isLetter || before == "_" || before == "." || before == "\"" || after.isNumber || after.isLetter || after == "_" { continue }
            out.append(i)
        }
        return out
    }

    /// Positions of letters and digits inside single-line string literals of Swift code outside comments, not in
    /// interpolations, and not on `import`, `#if`, `@` attribute or `#sourceLocation` lines.
    static func stringLiteralCharacters(_ chars: [Character]) -> [Int] {
        var out: [Int] = []
        var lineStart = 0
        var i = 0
        while i < chars.count {
            var end = i
            while end < chars.count, chars[end] != "\n" { end += 1 }
            let line = String(chars[lineStart..<end]).trimmingCharacters(in: .whitespaces)
            let skip = line.hasPrefix("//") || line.hasPrefix("import") || line.hasPrefix("#") || line.hasPrefix("@")
                || line.hasPrefix("*") || line.hasPrefix("/*") || line.contains("\"\"\"")
            if !skip {
                var inString = false
                var j = lineStart
                while j < end {
                    let c = chars[j]
                    if !inString, c == "/", j + 1 < end, chars[j + 1] == "/" { break }
                    if c == "\\", j + 1 < end, chars[j + 1] == "(" {
                        // An interpolation: code, not text, up to its closing parenthesis.
                        var depth = 0
                        j += 1
                        while j < end {
                            if chars[j] == "(" { depth += 1 }
                            if chars[j] == ")" { depth -= 1; if depth == 0 { break } }
                            j += 1
                        }
                        j += 1
                        continue
                    }
                    if c == "\\" { j += 2; continue }
                    if c == "\"" { inString.toggle(); j += 1; continue }
                    if inString, c.isASCII, c.isLetter || c.isNumber { out.append(j) }
                    j += 1
                }
            }
            lineStart = end + 1
            i = end + 1
        }
        return out
    }
}
