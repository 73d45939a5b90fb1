import ArgumentParser
import Foundation

struct Report: AsyncParsableCommand, AsyncRunnable {
    static let configuration = CommandConfiguration(
        abstract: "Write BENCHMARKS.md and the ratio chart from the results files of a benchmark run.")

    @Option(help: "The folder with suite-*.json, simulate-*.json and fleet-scale.json.")
    var results: String
    @Option(help: "The Markdown file to write.")
    var markdown = "BENCHMARKS.md"
    @Option(help: "The SVG chart to write.")
    var svg = "docs/bench-ratios.svg"
    @Option(help: "The command that produced the results, as a person would type it.")
    var command = "scripts/bench.sh --full"
    @Option(help: "A text file with the demo suite's figures, included as they are.")
    var demo: String?
    @Option(help: "How long the whole benchmark took, for people.")
    var elapsed: String?
    @Option(help: "The Fanout repository (for the commit).")
    var repo = FileManager.default.currentDirectoryPath

    func run() async throws {
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
        let demoText = demo.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
        let machine = await Self.machine(repo: repo)
        let doc = MarkdownReport.document(suites: suites, sims: sims, fleet: fleet, machine: machine, command: command,
                                          demo: demoText, elapsed: elapsed)
        try doc.write(toFile: markdown, atomically: true, encoding: .utf8)
        try fm.createDirectory(atPath: (svg as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try MarkdownReport.svg(suites: suites).write(toFile: svg, atomically: true, encoding: .utf8)
        print("wrote \(markdown) and \(svg)")
        for g in MarkdownReport.goals(suites: suites, sims: sims) {
            print("  \(g.met.map { $0 ? "met    " : "NOT MET" } ?? "-      ")  \(g.text): \(g.measured)")
        }
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
