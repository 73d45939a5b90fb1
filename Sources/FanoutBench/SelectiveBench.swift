import ArgumentParser
import Foundation

/// `fanout-bench selective`: what selective testing saves, and what it costs. A generated package of 20 targets
/// (6 leaf libraries, 4 libraries on them, 10 test targets on those; about 2,000 files, most of them resources)
/// whose test targets wait for different times. Each round:
/// - one file of leaf L0 changes, then `fanout run --selective` (the 3 test targets that can see L0 run) against
///   the same change under `fanout run --no-selective` (all 10 run); both rebuild the same change;
/// - a run with nothing changed (`--selective`: nothing built, nothing run): its wall, and the hashing alone;
/// - feedback first: L0 changes and the shortest target that sees it gains a failing test; `--no-selective` with and
///   without `--feedback-first`: when the first failure is reported, and the makespan it costs.
struct SelectiveBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "selective",
        abstract: "--selective on a generated 20-target package: a one-file leaf change against a full run, the no-change overhead, feedback first.")

    @OptionGroup var common: CommonBenchOptions
    @Option(help: "Slots of fanout.")
    var slots = 4
    @Option(help: "Rounds (the figures are medians over the rounds).")
    var rounds = 3
    @Option(help: "Resource files per target (about 2,000 files in all with the default).")
    var resources = 95
    @OptionGroup var output: ResultsFileOption

    struct Round: Codable {
        /// Wall seconds of `fanout run` after a one-file change in L0: selective, and everything.
        var selective: Double
        var full: Double
        var selectiveTargets: Int
        var fullTargets: Int
        /// A run with nothing changed: its wall, the seconds it took to decide, and hashing alone.
        var unchanged: Double
        var decide: Double
        var hashing: Double
        var files: Int
        /// Feedback first: seconds to the first failure, and the makespan, without and with `--feedback-first`.
        var firstFailure: Double
        var firstFailureFeedback: Double
        var makespan: Double
        var makespanFeedback: Double
    }

    struct Results: Codable {
        var targets: Int
        var testTargets: Int
        var files: Int
        var slots: Int
        var rounds: [Round]
        var loadAverage: [Double]
    }

    static let leaves = 6, middles = 4, tests = 10

    mutating func run() async throws {
        let package = "\(common.dir)/suites/selective-20"
        let work = "\(common.dir)/work/selective"
        for dir in [package, work] { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let files = try Self.generate(at: package, resources: resources)
        progress("selective: a package of \(Self.leaves + Self.middles + Self.tests) targets and \(files) files; first run (builds)")
        let history = "\(work)/history.sqlite"
        var n = 0
        func fanout(_ extra: [String]) async throws -> (ProcessResult, FanoutReportFile, String) {
            n += 1
            let dir = "\(work)/run-\(n)"
            let r = await Processes.run(common.fanout, ["run", "--package", package, "--slots", String(slots), "--history", history,
                                                        "--report-dir", dir] + extra,
                                        environment: ["NO_COLOR": "1"], timeout: 1800)
            guard FileManager.default.fileExists(atPath: dir + "/report.json") else {
                throw BenchError("fanout run \(extra.joined(separator: " ")) wrote no report (\(r.ending)):\n\(r.tail)")
            }
            return (r, try FanoutReportFile.read(dir + "/report.json"), dir)
        }
        let first = try await fanout(["--selective"])
        guard first.0.succeeded else { throw BenchError("the first run failed (\(first.0.ending)):\n\(first.0.tail)") }
        let load = SuiteBench.loadAverage()
        var done: [Round] = []
        for round in 1...max(1, rounds) {
            try Self.touchLeaf(package, "round \(round) a")
            let (sel, _, selDir) = try await fanout(["--selective"])
            guard sel.succeeded else { throw BenchError("the selective run failed:\n\(sel.tail)") }
            try Self.touchLeaf(package, "round \(round) b")
            let (full, fullReport, _) = try await fanout(["--no-selective"])
            guard full.succeeded else { throw BenchError("the full run failed:\n\(full.tail)") }
            _ = try await fanout(["--selective"]) // settles: the changed targets pass with these inputs
            let (same, _, sameDir) = try await fanout(["--selective"])
            let decided = try Self.selective(sameDir)
            guard same.succeeded, decided.ran == 0 else {
                throw BenchError("the run with nothing changed ran \(decided.ran) targets (\(same.ending)):\n\(same.tail)")
            }

            // Feedback first: the shortest affected target (T0) gains a failing test.
            try Self.touchLeaf(package, "round \(round) c")
            try Self.breakT0(package, broken: true)
            let (plain, plainReport, _) = try await fanout(["--no-selective"])
            try Self.touchLeaf(package, "round \(round) d")
            let (feedback, feedbackReport, _) = try await fanout(["--no-selective", "--feedback-first"])
            try Self.breakT0(package, broken: false)
            guard let late = Self.firstFailure(plain.stdout), let early = Self.firstFailure(feedback.stdout) else {
                throw BenchError("feedback first: no FAILED line in the runs' output")
            }
            _ = try await fanout(["--selective"]) // settles again for the next round
            let sr = try Self.selective(selDir)
            done.append(Round(selective: sel.seconds, full: full.seconds, selectiveTargets: sr.ran,
                              fullTargets: Set(fullReport.results.map(\.id.suite.module)).count,
                              unchanged: same.seconds, decide: decided.seconds, hashing: decided.hashing, files: decided.files,
                              firstFailure: late, firstFailureFeedback: early, makespan: plainReport.timing.makespan,
                              makespanFeedback: feedbackReport.timing.makespan))
            progress("selective round \(round): leaf change \(f2(sel.seconds)) s selective (\(sr.ran) targets) vs "
                + "\(f2(full.seconds)) s full; no change \(f2(same.seconds)) s (hashing \(decided.files) files "
                + "\(f2(decided.hashing)) s); first failure \(f2(late)) s → \(f2(early)) s with feedback first, makespan "
                + "\(f2(plainReport.timing.makespan)) → \(f2(feedbackReport.timing.makespan)) s")
        }
        let results = Results(targets: Self.leaves + Self.middles + Self.tests, testTargets: Self.tests, files: files,
                              slots: slots, rounds: done, loadAverage: [load, SuiteBench.loadAverage()])
        print(Self.table(results))
        try output.write(results)
    }

    /// The `selective` part of a report.json, read as any tool would.
    static func selective(_ dir: String) throws -> (ran: Int, seconds: Double, hashing: Double, files: Int) {
        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/report.json"))
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        guard let s = json?["selective"] as? [String: Any], let decisions = s["decisions"] as? [[String: Any]] else {
            throw BenchError("\(dir)/report.json has no `selective` section")
        }
        return (decisions.filter { $0["skipped"] as? Bool == false }.count, s["seconds"] as? Double ?? 0,
                s["hashSeconds"] as? Double ?? 0, s["filesHashed"] as? Int ?? 0)
    }

    /// Seconds from the first unit's start to the first `FAILED` line of fanout's progress output (`[   2.3s] …`).
    static func firstFailure(_ output: String) -> Double? {
        func seconds(_ line: Substring) -> Double? {
            guard let open = line.firstIndex(of: "["), let close = line.firstIndex(of: "]"), open < close else { return nil }
            return Double(line[line.index(after: open)..<close].trimmingCharacters(in: .whitespaces).dropLast())
        }
        let lines = output.split(separator: "\n")
        guard let start = lines.first(where: { $0.contains(" started on ") }).flatMap(seconds),
              let failed = lines.first(where: { $0.contains("] FAILED ") }).flatMap(seconds) else { return nil }
        return failed - start
    }

    static func touchLeaf(_ package: String, _ marker: String) throws {
        let path = "\(package)/Sources/L0/L0_0.swift"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let name = "changed_" + String(marker.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) })
        try (text + "public func \(name)() -> Int { \(marker.count) }\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func breakT0(_ package: String, broken: Bool) throws {
        let path = "\(package)/Tests/T0/Broken.swift"
        if broken {
            try "import XCTest\n\nfinal class BrokenTests: XCTestCase {\n    func testBroken() { XCTFail(\"broken by the change\") }\n}\n"
                .write(toFile: path, atomically: true, encoding: .utf8)
        } else {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Writes the package; returns how many files it has.
    static func generate(at root: String, resources: Int) throws -> Int {
        var files: [String: String] = [:]
        var targets: [String] = []
        for l in 0..<leaves {
            targets.append(".target(name: \"L\(l)\", resources: [.copy(\"Data\")])")
            for f in 0..<10 { files["Sources/L\(l)/L\(l)_\(f).swift"] = "public func l\(l)_\(f)(_ x: Int) -> Int { x + \(f) }\n" }
            for r in 0..<resources { files["Sources/L\(l)/Data/d\(r).json"] = "{\"leaf\": \(l), \"row\": \(r)}\n" }
        }
        for m in 0..<middles {
            let deps = [m, m + 2].map { "\"L\($0 % leaves)\"" }.joined(separator: ", ")
            targets.append(".target(name: \"M\(m)\", dependencies: [\(deps)], resources: [.copy(\"Data\")])")
            let body = "import L\(m)\nimport L\((m + 2) % leaves)\n\npublic func m\(m)(_ x: Int) -> Int { l\(m)_0(x) }\n"
            files["Sources/M\(m)/M\(m).swift"] = body
            for f in 1..<10 { files["Sources/M\(m)/M\(m)_\(f).swift"] = "func m\(m)_\(f)() -> Int { \(f) }\n" }
            for r in 0..<resources { files["Sources/M\(m)/Data/d\(r).json"] = "{\"middle\": \(m), \"row\": \(r)}\n" }
        }
        for t in 0..<tests {
            let m = t % middles
            targets.append(".testTarget(name: \"T\(t)\", dependencies: [\"M\(m)\"], resources: [.copy(\"Data\")])")
            // Targets wait for different times (T0 shortest), so the order work starts in matters.
            let wait = 0.15 * Double(t + 1)
            var body = "import M\(m)\nimport XCTest\n\nfinal class T\(t)Tests: XCTestCase {\n"
            for i in 0..<4 {
                body += "    func test\(i)() { Thread.sleep(forTimeInterval: \(wait)); XCTAssertEqual(m\(m)(\(i)), \(i)) }\n"
            }
            files["Tests/T\(t)/T\(t)Tests.swift"] = body + "}\n"
            for r in 0..<resources { files["Tests/T\(t)/Data/d\(r).json"] = "{\"test\": \(t), \"row\": \(r)}\n" }
        }
        files["Package.swift"] = "// swift-tools-version: 6.0\n// Generated by fanout-bench selective.\nimport PackageDescription\n\n"
            + "let package = Package(\n    name: \"Selective20\",\n    targets: [\n        "
            + targets.joined(separator: ",\n        ") + ",\n    ]\n)\n"
        for (path, text) in files {
            let url = URL(fileURLWithPath: root + "/" + path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        return files.count
    }

    static func table(_ r: Results) -> String {
        func cell(_ xs: [Double], _ format: (Double) -> String) -> String { Spread(xs)?.text(format) ?? "—" }
        let rounds = r.rounds
        let selectiveTargets = rounds.first?.selectiveTargets ?? 0, fullTargets = rounds.first?.fullTargets ?? 0
        var out = "| \(r.targets) targets (\(r.testTargets) test targets), \(r.files) files, \(r.slots) slots | "
            + "median (range) of \(rounds.count) rounds |\n|---|---:|\n"
        out += "| one file of a leaf changed: `fanout run --no-selective` (\(fullTargets) test targets run) | "
            + "\(cell(rounds.map(\.full), f2)) s |\n"
        out += "| the same change: `fanout run --selective` (\(selectiveTargets) test targets run) | "
            + "\(cell(rounds.map(\.selective), f2)) s |\n"
        out += "| selective is faster by, per round | \(cell(rounds.map { $0.full / $0.selective }, f2))× |\n"
        out += "| nothing changed: `fanout run --selective` (nothing built or run), wall | \(cell(rounds.map(\.unchanged), f2)) s |\n"
        out += "| … of which deciding (toolchain answers cached, hashing, history) | \(cell(rounds.map(\.decide), f2)) s |\n"
        out += "| … of which hashing the inputs (\(rounds.first?.files ?? 0) files) | \(cell(rounds.map(\.hashing), f3)) s |\n"
        out += "| first failure reported, longest first (`--no-selective`) | \(cell(rounds.map(\.firstFailure), f2)) s |\n"
        out += "| first failure reported, `--feedback-first` | \(cell(rounds.map(\.firstFailureFeedback), f2)) s |\n"
        out += "| makespan, longest first → feedback first | \(cell(rounds.map(\.makespan), f2)) s → "
            + "\(cell(rounds.map(\.makespanFeedback), f2)) s |\n"
        return out
    }
}
