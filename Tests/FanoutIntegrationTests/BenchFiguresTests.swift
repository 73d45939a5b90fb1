import FanoutAgents
import FanoutCore
import Foundation
import Testing

/// README's and BENCHMARKS.md's figures are generated from the committed data of the last benchmark run
/// (docs/bench-results.json), and docs/report-html.md's page-load figures from the last report page run
/// (docs/report-page-results.json), never typed: regenerating them from it gives exactly the committed files.
@Suite(.serialized, .timeLimit(.minutes(2))) struct BenchFiguresTests {
    func report(_ extra: [String], readme: String = "README.md", pageDoc: String = "docs/report-html.md")
        async throws -> (UnitEnding, String) {
        let bench = try siblingExecutable("fanout-bench")
        let root = repositoryRoot.path
        func path(_ p: String) -> String { p.hasPrefix("/") ? p : root + "/" + p }
        let args = ["report", "--from", root + "/docs/bench-results.json", "--markdown", root + "/BENCHMARKS.md",
                    "--svg", root + "/docs/bench-ratios.svg", "--readme", path(readme),
                    "--page-data", root + "/docs/report-page-results.json", "--page-doc", path(pageDoc)] + extra
        let (ending, out, err) = await LocalTransport(slots: 1).capture(Command(executable: bench, arguments: args), timeout: 60)
        return (ending, String(decoding: out + err, as: UTF8.self))
    }

    /// A simulation's result is one flat object of what it was asked and what it measured, as the committed data's
    /// `sims[]` entries are: what `fanout-bench simulate` writes has exactly their keys.
    @Test func aSimulationWritesTheKeysOfTheCommittedData() async throws {
        let dir = try TempDir()
        let bench = try siblingExecutable("fanout-bench")
        let (ending, out, err) = await LocalTransport(slots: 1).capture(Command(
            executable: bench, arguments: ["simulate", "--classes", "500", "--agents", "4", "--json", dir.file("sim.json")]),
            timeout: 60)
        #expect(ending == .exited(0), "\(String(decoding: out + err, as: UTF8.self))")
        let written = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: dir.file("sim.json")))) as? [String: Any])
        let committed = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: repositoryRoot.appendingPathComponent("docs/bench-results.json"))) as? [String: Any])
        let first = try #require((committed["sims"] as? [[String: Any]])?.first)
        #expect(Set(written.keys) == Set(first.keys))
        #expect(written["classes"] as? Int == 500 && written["agents"] as? Int == 4, "the setup's keys beside the outcome's")
    }

    /// Copies README.md and docs/report-html.md into `dir` (fresh each time): a report writes into its copies.
    func copyDocs(into dir: TempDir) throws {
        for file in ["README.md", "docs/report-html.md"] {
            let copy = dir.file((file as NSString).lastPathComponent)
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: repositoryRoot.path + "/" + file, toPath: copy)
        }
    }

    /// BENCHMARKS.md as `fanout-bench report` writes it from the data file `run` (written into `dir`).
    func page(from run: [String: Any], in dir: TempDir) async throws -> String {
        let data = dir.file("data.json")
        try JSONSerialization.data(withJSONObject: run).write(to: URL(fileURLWithPath: data))
        try copyDocs(into: dir)
        let bench = try siblingExecutable("fanout-bench")
        let args = ["report", "--from", data, "--markdown", dir.file("B.md"), "--svg", dir.file("b.svg"), "--readme", dir.file("README.md"),
                    "--page-data", repositoryRoot.path + "/docs/report-page-results.json", "--page-doc", dir.file("report-html.md")]
        let (ending, out, err) = await LocalTransport(slots: 1).capture(Command(executable: bench, arguments: args), timeout: 60)
        #expect(ending == .exited(0), "\(String(decoding: out + err, as: UTF8.self))")
        return try String(contentsOfFile: dir.file("B.md"), encoding: .utf8)
    }

    @Test func committedFiguresAreWhatTheDataGives() async throws {
        let (ending, output) = try await report(["--check"])
        #expect(ending == .exited(0), "\(output)")
    }

    /// A figure edited by hand in README is caught.
    @Test func aFigureTypedByHandIsCaught() async throws {
        let dir = try TempDir()
        let readme = try String(contentsOfFile: repositoryRoot.path + "/README.md", encoding: .utf8)
        let begin = try #require(readme.range(of: "<!-- bench:begin"))
        let end = try #require(readme.range(of: "<!-- bench:end -->"))
        var region = String(readme[begin.upperBound..<end.lowerBound])
        let digit = try #require(region.firstIndex { $0.isNumber && $0 != "9" })
        region.replaceSubrange(digit...digit, with: "9")
        let edited = String(readme[..<begin.upperBound]) + region + String(readme[end.lowerBound...])
        try edited.write(toFile: dir.file("README.md"), atomically: true, encoding: .utf8)
        let (ending, output) = try await report(["--check"], readme: dir.file("README.md"))
        #expect(ending == .exited(1), "\(output)")
        #expect(output.contains("README.md (between the bench markers)"))
    }

    /// A speed claim holds only when every round says so: Fanout ahead in two rounds of three and behind in the
    /// third is "even", and the goal "faster than swift test --parallel" is not met; every round ahead is "faster".
    @Test func fasterOnlyWhenTheWholeRangeSaysSo() async throws {
        let dir = try TempDir()
        let original = try Data(contentsOf: URL(fileURLWithPath: repositoryRoot.path + "/docs/bench-results.json"))
        func document(fanoutWalls: [Double], swiftWalls: [Double]) async throws -> String {
            var run = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
            var suites = try #require(run["suites"] as? [[String: Any]])
            var cases = try #require(suites[0]["cases"] as? [[String: Any]])
            for (i, c) in cases.enumerated() where c["fleet"] as? String == "local" {
                switch c["strategy"] as? String {
                case "fanout": cases[i]["runWalls"] = fanoutWalls; cases[i]["wall"] = fanoutWalls.sorted()[1]
                case "swift-test-parallel": cases[i]["runWalls"] = swiftWalls; cases[i]["wall"] = swiftWalls.sorted()[1]
                default: break
                }
            }
            suites[0]["cases"] = cases
            run["suites"] = suites
            return try await page(from: run, in: dir)
        }
        let goal = "faster than `swift test --parallel --num-workers 8` on every generated suite, prebuilt"
        func goalRow(_ doc: String) -> String? { doc.split(separator: "\n").first { $0.contains(goal) }.map(String.init) }

        // Rounds: 20/10 = 2.00, 21/20 = 1.05, 19/20 = 0.95.
        let mixed = try await document(fanoutWalls: [10, 20, 20], swiftWalls: [20, 21, 19])
        #expect(mixed.contains("1.05× (0.95–2.00×), even"), "\(mixed)")
        let mixedGoal = try #require(goalRow(mixed))
        #expect(mixedGoal.hasSuffix("| **no** |"), "\(mixedGoal)")

        let ahead = try await document(fanoutWalls: [10, 10, 10], swiftWalls: [20, 21, 19])
        #expect(ahead.contains("2.00× (1.90–2.10×), faster"), "\(ahead)")
        #expect((goalRow(ahead) ?? "").contains("lognormal 2.00× (1.90–2.10×)"), "\(goalRow(ahead) ?? "")")
    }

    /// A line added by hand to docs/report-html.md's page-load figures is caught.
    @Test func aPageFigureTypedByHandIsCaught() async throws {
        let dir = try TempDir()
        let doc = try String(contentsOfFile: repositoryRoot.path + "/docs/report-html.md", encoding: .utf8)
        let end = try #require(doc.range(of: "<!-- report-page:end -->"))
        #expect(doc.contains("<!-- report-page:begin"))
        let edited = String(doc[..<end.lowerBound]) + "| typed by hand | 339 |\n" + String(doc[end.lowerBound...])
        try edited.write(toFile: dir.file("report-html.md"), atomically: true, encoding: .utf8)
        let (ending, output) = try await report(["--check"], pageDoc: dir.file("report-html.md"))
        #expect(ending == .exited(1), "\(output)")
        #expect(output.contains("report-html.md (between the report-page markers"), "\(output)")
    }

    /// Every committed page-load figure is a median of at least 3 loads, each load's value kept.
    @Test func committedPageFiguresAreMediansOfAtLeastThreeLoads() throws {
        let path = repositoryRoot.path + "/docs/report-page-results.json"
        guard FileManager.default.fileExists(atPath: path) else { return } // not measured: the doc says so (checked above)
        let data = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let loads = try #require(data["loads"] as? Int)
        #expect(loads >= 3)
        #expect((data["renderSeconds"] as? [Double])?.count == loads)
        let pages = try #require(data["pages"] as? [[String: Any]])
        #expect(pages.count == 4, "the page and its three controls")
        for page in pages {
            for figure in ["domContentLoadedMs", "loadMs", "laidOutMs", "processSeconds"] {
                #expect((page[figure] as? [Double])?.count == loads, "\(page["page"] ?? "?") \(figure)")
            }
        }
    }

    /// `report --update`: a partial run's suite replaces that shape's in the data file, marked as measured apart with
    /// its own date and commit; every other suite stays as it was measured.
    @Test func aPartialRunReplacesItsSuiteOnlyAndSaysSo() async throws {
        let dir = try TempDir()
        let original = try Data(contentsOf: URL(fileURLWithPath: repositoryRoot.path + "/docs/bench-results.json"))
        let run = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
        let suites = try #require(run["suites"] as? [[String: Any]])
        let index = try #require(suites.firstIndex { $0["shape"] as? String == "skewed" })
        var skewed = suites[index]
        skewed["measuredApart"] = nil
        skewed["classes"] = 12345
        try FileManager.default.createDirectory(atPath: dir.file("results"), withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: skewed).write(to: URL(fileURLWithPath: dir.file("results/suite-skewed.json")))
        try original.write(to: URL(fileURLWithPath: dir.file("data.json")))
        try copyDocs(into: dir)
        let bench = try siblingExecutable("fanout-bench")
        let args = ["report", "--results", dir.file("results"), "--update", "--data", dir.file("data.json"),
                    "--markdown", dir.file("B.md"), "--svg", dir.file("b.svg"), "--readme", dir.file("README.md"),
                    "--page-data", repositoryRoot.path + "/docs/report-page-results.json", "--page-doc", dir.file("report-html.md"),
                    "--repo", repositoryRoot.path, "--command", "partial run"]
        let (ending, out, err) = await LocalTransport(slots: 1).capture(Command(executable: bench, arguments: args), timeout: 60)
        #expect(ending == .exited(0), "\(String(decoding: out + err, as: UTF8.self))")
        let updated = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.file("data.json")))) as? [String: Any])
        let after = try #require(updated["suites"] as? [[String: Any]])
        #expect(after.map { $0["shape"] as? String } == suites.map { $0["shape"] as? String }, "same suites, same order")
        let replaced = try #require(after.first { $0["shape"] as? String == "skewed" })
        #expect(replaced["classes"] as? Int == 12345)
        #expect((replaced["measuredApart"] as? String)?.contains("by `partial run`") == true)
        for (old, new) in zip(suites, after) where old["shape"] as? String != "skewed" {
            #expect(new["measuredApart"] as? String == old["measuredApart"] as? String, "the other suites stay as they were")
            #expect(new["cases"] as? [[String: Any]] != nil && (new["cases"] as? [[String: Any]])?.count == (old["cases"] as? [[String: Any]])?.count)
        }
        #expect(updated["demo"] as? String == run["demo"] as? String, "no --demo: the demo's figures stay")
        let doc = try String(contentsOfFile: dir.file("B.md"), encoding: .utf8)
        #expect(doc.contains("*Measured apart from the rest of this page:") && doc.contains("by `partial run`"))

        // --demo: the demo suite's figures (scripts/bench.sh --repeat K) replace the old ones, marked so.
        try "slots  runner  wall\n4  fanout run --bundle (warm history)  12.34s (12.00s-13.00s)\n".write(
            toFile: dir.file("demo.txt"), atomically: true, encoding: .utf8)
        let withDemo = args.map { $0 == "partial run" ? "scripts/bench.sh --repeat 3" : $0 } + ["--demo", dir.file("demo.txt")]
        let (again, out2, err2) = await LocalTransport(slots: 1).capture(Command(executable: bench, arguments: withDemo), timeout: 60)
        #expect(again == .exited(0), "\(String(decoding: out2 + err2, as: UTF8.self))")
        let demoDoc = try String(contentsOfFile: dir.file("B.md"), encoding: .utf8)
        #expect(demoDoc.contains("12.34s (12.00s-13.00s)"))
        #expect(demoDoc.contains("(measured apart from the rest of this page:") && demoDoc.contains("by scripts/bench.sh --repeat 3)"))
    }

    /// No figure contradicts its own definition: no makespan / LB of the committed page is below 1, in the suites'
    /// tables (each row's median and range) or in the goals.
    @Test func noMakespanBeatsItsLowerBound() throws {
        let page = try String(contentsOfFile: repositoryRoot.path + "/BENCHMARKS.md", encoding: .utf8)
        var checked = 0
        var header: [String] = []
        let lines = page.split(separator: "\n").map(String.init)
        for (i, line) in lines.enumerated() where line.hasPrefix("|") && !line.hasPrefix("|---") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            // A table's header is the line above its |---| line.
            if i + 1 < lines.count, lines[i + 1].hasPrefix("|---") { header = cells; continue }
            guard let column = header.firstIndex(of: "makespan / LB"), column < cells.count else { continue }
            // "1.040 (1.029–1.040)": every number of the cell.
            for n in cells[column].split(whereSeparator: { !"0123456789.".contains($0) }).compactMap({ Double($0) }) {
                checked += 1
                #expect(n >= 1, "a makespan below its own lower bound: \(line)")
            }
        }
        for line in page.split(separator: "\n") where line.contains("makespan ≤") {
            for match in line.matches(of: /= ([0-9.]+) \(([0-9.]+)–([0-9.]+)\)/) {
                for n in [match.1, match.2, match.3].compactMap({ Double($0) }) {
                    checked += 1
                    #expect(n >= 1, "a goal's makespan below its lower bound: \(line)")
                }
            }
        }
        #expect(checked > 50, "the tables were read (\(checked) figures)")
    }

    /// A suite with computing classes has no bound for a row that did not measure its own (the reference LB comes
    /// from another run, and computing tests take more or less time from run to run): such a row shows no ratio and
    /// no overhead, never a ratio below 1. Here a static split of the mixed suite ends in half the reference LB.
    @Test func aRowWithoutItsOwnBoundInAComputingSuiteShowsNoRatio() async throws {
        let dir = try TempDir()
        let original = try Data(contentsOf: URL(fileURLWithPath: repositoryRoot.path + "/docs/bench-results.json"))
        var run = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
        var suites = try #require(run["suites"] as? [[String: Any]])
        let index = try #require(suites.firstIndex { $0["shape"] as? String == "mixed" })
        var mixed = suites[index]
        let reference = try #require(mixed["methodLowerBound"] as? Double)
        var cases = try #require(mixed["cases"] as? [[String: Any]])
        cases.removeAll { $0["strategy"] as? String == "split-name" }
        cases.append(["strategy": "split-name", "label": "split by name", "fleet": "local", "slots": 8,
                      "wall": reference / 2 + 0.05, "makespan": reference / 2, "testsPassed": 10, "testsExpected": 10,
                      "processes": 8])
        mixed["cases"] = cases
        suites[index] = mixed
        run["suites"] = suites
        let doc = try await page(from: run, in: dir)
        let section = try #require(doc.components(separatedBy: "### mixed").dropFirst().first)
        let row = try #require(section.split(separator: "\n").first { $0.contains("| split by name |") })
        let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        // fleet, strategy, wall, makespan, makespan / LB, overhead, …
        #expect(cells.count > 5 && cells[4] == "—" && cells[5] == "—", "no ratio, no overhead against another run's bound: \(row)")
        #expect(section.contains("the other rows have no ratio"))
    }
}
