import ArgumentParser
import Foundation

struct BenchReport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write BENCHMARKS.md, the ratio chart and README's figures from one benchmark run's results.",
        discussion: """
            From a results folder (`--results`, as scripts/bench.sh --full leaves it) it also writes the data file \
            (docs/bench-results.json) that everything is generated from. `--from docs/bench-results.json --check` \
            regenerates all of it from the committed data and fails when a file differs: no figure is typed by hand.
            """)

    @Option(help: "The folder with suite-*.json, simulate-*.json and fleet-scale.json.")
    var results: String?
    @Option(help: "Generate from this data file (a previous run's docs/bench-results.json) instead of --results.")
    var from: String?
    @Option(help: "The data file to write (with --results).")
    var data = "docs/bench-results.json"
    @Flag(help: "With --results: a partial run (`scripts/bench.sh --suite SHAPE`, `fanout-bench real --json-dir`). Its suites replace those of the same shape in --data, marked with this run's date and commit, its real-*.json those of the same packages, and --demo the demo suite's figures; the rest of --data stays as it was measured.")
    var update = false
    @Option(help: "The Markdown file to write.")
    var markdown = "BENCHMARKS.md"
    @Option(help: "The SVG chart to write.")
    var svg = "docs/bench-ratios.svg"
    @Option(help: "The README whose marked figures (between \(MarkdownReport.readmeBegin) and \(MarkdownReport.readmeEnd)) are rewritten.")
    var readme = "README.md"
    @Option(help: "The page-load figures (`fanout-bench report-page --json`) that --page-doc's marked block is written from.")
    var pageData = ReportPageFigures.dataPath
    @Option(help: "The Markdown file with the marked page-load figures.")
    var pageDoc = ReportPageFigures.docPath
    @Flag(help: "Write nothing: exit 1 when BENCHMARKS.md, the chart, README's or the page-load figures differ from what the data gives.")
    var check = false
    @Option(help: "The command that produced the results, as a person would type it.")
    var command = "scripts/bench.sh --full"
    @Option(help: "A text file with the demo suite's figures, included as they are.")
    var demo: String?
    @Option(help: "How long the whole benchmark took, for people.")
    var elapsed: String?
    @OptionGroup var repository: RepositoryOption

    mutating func run() async throws {
        let run: BenchRun
        if let from {
            run = try JSONFiles.read(BenchRun.self, from: from)
        } else if let results, update {
            var base = try JSONFiles.read(BenchRun.self, from: data)
            let partial = try await Self.collect(results: results, command: command, demo: nil, elapsed: nil, repo: repository.repo)
            let m = partial.machine
            for var suite in partial.suites {
                suite.measuredApart = "\(m.date), \(m.commit), by `\(command)`"
                base.suites.removeAll { $0.shape == suite.shape }
                base.suites.append(suite)
            }
            // The demo suite's figures measured apart (`scripts/bench.sh --repeat K` writes them) replace the old ones.
            if let demo {
                let text = try String(contentsOfFile: demo, encoding: .utf8)
                base.demo = "(measured apart from the rest of this page: \(m.date), \(m.commit), by \(command))\n\n" + text
            }
            let order = SuiteShape.allCases
            base.suites.sort { (order.firstIndex(of: $0.shape) ?? 0) < (order.firstIndex(of: $1.shape) ?? 0) }
            // A flake-hunting run measured apart (`scripts/bench.sh --hunt`: results/repeat.json) replaces the old one.
            if FileManager.default.fileExists(atPath: "\(results)/repeat.json") {
                base.hunt = HuntResult(measured: "\(m.date), \(m.commit), by `\(command)`",
                                       results: try JSONFiles.read(RepeatBench.Results.self, from: "\(results)/repeat.json"))
            }
            // Selective testing measured apart (`scripts/bench.sh --selective`: results/selective.json) likewise.
            if FileManager.default.fileExists(atPath: "\(results)/selective.json") {
                base.selective = SelectiveResult(measured: "\(m.date), \(m.commit), by `\(command)`",
                                                 results: try JSONFiles.read(SelectiveBench.Results.self,
                                                                             from: "\(results)/selective.json"))
            }
            // Selective testing by mutation (`scripts/bench.sh --mutations`: results/mutations-*.json and
            // results/mutation-timings-*.json) likewise.
            let files = (try? FileManager.default.contentsOfDirectory(atPath: results))?.sorted() ?? []
            let runs = try files.filter { $0.hasPrefix("mutations-") && $0.hasSuffix(".json") }
                .map { try JSONFiles.read(SelectiveMutations.Results.self, from: "\(results)/\($0)") }
            if !runs.isEmpty {
                let timings = try files.filter { $0.hasPrefix("mutation-timings-") && $0.hasSuffix(".json") }
                    .map { try JSONFiles.read(SelectiveMutations.Results.self, from: "\(results)/\($0)") }
                base.mutations = MutationsResult(measured: "\(m.date), \(m.commit), by `\(command)`", runs: runs, timings: timings)
            }
            // Suites with measure tests (`scripts/bench.sh --performance`: results/performance-*.json) likewise.
            let measuring = try files.filter { $0.hasPrefix("performance-") && $0.hasSuffix(".json") }
                .map { try JSONFiles.read(PerformanceSuiteResult.self, from: "\(results)/\($0)") }
            if !measuring.isEmpty {
                let order = RealPackage.measuring.map(\.name)
                base.performance = PerformanceResult(
                    measured: "\(m.date), \(m.commit), by `\(command)`",
                    suites: measuring.sorted { (order.firstIndex(of: $0.package.name) ?? order.count)
                        < (order.firstIndex(of: $1.package.name) ?? order.count) })
            }
            // Real suites measured apart (`fanout-bench real --json-dir DIR`) replace those of the same packages.
            run = base.replacingRealSuites(try base.withRealSuites(from: results, keeping: data).realSuites ?? [])
        } else if let results {
            var full = try await Self.collect(results: results, command: command, demo: demo, elapsed: elapsed, repo: repository.repo)
                .withRealSuites(from: results, keeping: data)
            // Flake hunting runs apart (`--hunt`): a full run keeps the last one measured.
            let kept = try? JSONFiles.read(BenchRun.self, from: data)
            full.hunt = kept?.hunt
            full.selective = kept?.selective
            full.mutations = kept?.mutations
            full.performance = kept?.performance
            run = full
        } else {
            throw ValidationError("give --results DIR (a benchmark run's results) or --from FILE (its data file)")
        }
        let doc = MarkdownReport.document(run)
        let chart = MarkdownReport.svg(suites: run.suites)
        let readmeText = try String(contentsOfFile: readme, encoding: .utf8)
        let newReadme = try MarkdownReport.replacingFigures(in: readmeText, with: MarkdownReport.readmeFigures(run))
        let pageFigures = try ReportPageFigures.Regenerated(doc: pageDoc, data: pageData)
        if check {
            var differ: [String] = []
            if (try? String(contentsOfFile: markdown, encoding: .utf8)) != doc { differ.append(markdown) }
            if (try? String(contentsOfFile: svg, encoding: .utf8)) != chart { differ.append(svg) }
            if readmeText != newReadme { differ.append(readme + " (between the bench markers)") }
            if pageFigures.differs { differ.append(pageDoc + " (between the report-page markers, from \(pageData))") }
            guard differ.isEmpty else {
                throw BenchError("not what \(from ?? data) gives: \(differ.joined(separator: ", ")). Figures are generated, "
                    + "never typed: run `fanout-bench report --from \(from ?? data)` (or scripts/bench.sh --full) to rewrite them")
            }
            print("BENCHMARKS.md, \(svg) and README's figures are what \(from ?? data) gives; \(pageDoc)'s, what \(pageData) gives")
            return
        }
        if from == nil { try JSONFiles.write(run, to: data) }  // (with --update: the base with the new suites)
        try doc.write(toFile: markdown, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: (svg as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try chart.write(toFile: svg, atomically: true, encoding: .utf8)
        try newReadme.write(toFile: readme, atomically: true, encoding: .utf8)
        try pageFigures.write()
        print("wrote \(from == nil ? data + ", " : "")\(markdown), \(svg) and README's figures")
        for g in MarkdownReport.goals(suites: run.suites, sims: run.sims, mergeScale: run.mergeScale) {
            print("  \(g.met.map { $0 ? "met    " : "NOT MET" } ?? "-      ")  \(g.text): \(g.measured)")
        }
    }

    /// A run's results folder, with the machine it ran on, as one value.
    static func collect(results: String, command: String, demo: String?, elapsed: String?, repo: String) async throws -> BenchRun {
        let fm = FileManager.default
        let files = try fm.contentsOfDirectory(atPath: results).sorted()
        let order = SuiteShape.allCases
        let suites = try files.filter { $0.hasPrefix("suite-") && $0.hasSuffix(".json") }
            .map { try JSONFiles.read(SuiteResult.self, from: "\(results)/\($0)") }
            .sorted { (order.firstIndex(of: $0.shape) ?? 0) < (order.firstIndex(of: $1.shape) ?? 0) }
        let sims = try files.filter { $0.hasPrefix("simulate-") && $0.hasSuffix(".json") }
            .map { try JSONFiles.read(SimulationResult.self, from: "\(results)/\($0)") }
            .sorted { $0.failFraction < $1.failFraction }
        let fleet = fm.fileExists(atPath: "\(results)/fleet-scale.json")
            ? try JSONFiles.read(FleetScaleResult.self, from: "\(results)/fleet-scale.json") : nil
        let mergeScale = fm.fileExists(atPath: "\(results)/merge-scale.json")
            ? try JSONFiles.read(MergeScaleResult.self, from: "\(results)/merge-scale.json") : nil
        let demoText = demo.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
        return BenchRun(machine: await machine(repo: repo), command: command, elapsed: elapsed, demo: demoText,
                        suites: suites, sims: sims, fleet: fleet, mergeScale: mergeScale)
    }

    static func machine(repo: String) async -> MarkdownReport.Machine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let cpu = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" } ?? "?"
        let osRelease = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let os = osRelease.split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? "Linux"
        let swift = await Processes.run("swift", ["--version"]).stdout.split(separator: "\n").first.map(String.init) ?? "?"
        let head = await Processes.run("git", ["-C", repo, "rev-parse", "--short", "HEAD"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let dirty = await Processes.run("git", ["-C", repo, "status", "--porcelain", "--untracked-files=no"]).stdout
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime]
        return MarkdownReport.Machine(
            cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryGiB: Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824, cpu: cpu, os: os, swift: swift,
            date: formatter.string(from: Date()) + " UTC",
            commit: head.isEmpty ? "?" : "commit \(head)\(dirty.isEmpty ? "" : " with uncommitted changes in the working tree")")
    }
}
