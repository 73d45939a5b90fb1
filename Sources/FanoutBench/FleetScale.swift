import ArgumentParser
import FanoutCore
import Foundation

/// The coordinator against many SSH agents at once: 32 real sshd agents on loopback.
struct FleetScale: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet-scale",
        abstract: "Start N sshd agents on loopback and measure connection setup, dispatch latency and the coordinator's cost.",
        discussion: """
            Needs root (the fleet's user). Starts Agents/local-fleet/up.sh N in its own dir and port, runs \
            `fanout agents check` (connection setup to every agent at once) and `--latency K` (dispatch latency on open \
            connections), then real `fanout run`s of generated suites over all agents under /usr/bin/time -v (the \
            coordinator's CPU seconds and peak memory). The fleet is stopped with down.sh in every case.
            """)

    @Option(help: "SSH agents.")
    var agents = 32
    @Option(help: "Slots per agent.")
    var slots = 1
    @Option(help: "Port of the agents (outside the ephemeral range).")
    var port = 2741
    @Option(help: "Commands per agent for the dispatch latency.")
    var latency = 20
    @Option(help: "Generated suites to run over the fleet (built under --dir when missing).")
    var suites: [SuiteShape] = [.manySmall, .lognormal]
    @Option(help: "The seed of the generated suites.")
    var seed: UInt64 = 1
    @OptionGroup var common: CommonBenchOptions
    @OptionGroup var output: ResultsFileOption

    mutating func run() async throws {
        Interrupts.install()
        let fm = FileManager.default
        let work = "\(common.dir)/work/fleet-scale"
        try? fm.removeItem(atPath: work)
        try fm.createDirectory(atPath: work, withIntermediateDirectories: true)

        // The suites, built, with warm histories.
        var products: [(SuiteShape, String, String, Int)] = []
        for shape in suites {
            let package = "\(common.dir)/suites/\(shape.rawValue)"
            let suite = SuiteGenerator.make(shape: shape, seed: seed)
            try SuiteGenerator.write(suite, to: URL(fileURLWithPath: package))
            try await Processes.check("swift", ["build", "--build-tests", "--package-path", package], timeout: 1800)
            let binDir = try await Processes.check("swift", ["build", "--build-tests", "--package-path", package,
                                                             "--show-bin-path"]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let bin = "\(binDir)/\(suite.packageName)PackageTests.xctest"
            let history = "\(work)/\(shape.rawValue)-history.sqlite"
            let warm = "\(common.dir)/work/\(shape.rawValue)/history.sqlite"
            if fm.fileExists(atPath: warm) {
                try fm.copyItem(atPath: warm, toPath: history)
            } else {
                progress("fleet-scale: warming the history of \(shape.rawValue) (2 local runs)")
                for i in 1...2 {
                    _ = await Processes.run(common.fanout, ["run", "--bundle", bin, "--slots", "8", "--history", history,
                                                            "--report-dir", "\(work)/warm-\(shape.rawValue)-\(i)"],
                                            environment: ["NO_COLOR": "1"], timeout: 900)
                }
            }
            products.append((shape, package, bin, suite.methodCount))
        }

        let fleet = try await LocalFleet.up(agents: agents, slots: slots, dir: "\(common.dir)/fleet-\(agents)", port: port,
                                            hide: products.map { $0.1 + "/.build" }, repo: common.repo)
        progress("fleet-scale: \(fleet.description) up in \(f2(fleet.upSeconds)) s")
        let result: FleetScaleResult
        do {
            result = try await measure(fleet: fleet, products: products, work: work)
        } catch {
            await fleet.down()
            throw error
        }
        await fleet.down()
        try output.write(result)
        print(MarkdownReport.fleetScaleTable(result))
    }

    func measure(fleet: LocalFleet, products: [(SuiteShape, String, String, Int)], work: String) async throws
        -> FleetScaleResult {
        let check = await Processes.run(common.fanout, ["agents", "check", "--config", fleet.config],
                                        environment: ["NO_COLOR": "1"], timeout: 300)
        guard check.succeeded else { throw BenchError("fanout agents check failed (\(check.ending)):\n\(check.stdout)\n\(check.tail)") }
        let connects = Self.column(check.stdout, pattern: #"ok \(([0-9.]+) (ms|s)\)"#)
        progress("fleet-scale: agents check over \(agents) agents: \(f2(check.seconds)) s; connect "
                 + "median \(f1(medianOf(connects))) ms, max \(f1(connects.max() ?? 0)) ms")
        var problems: [String] = []
        let lat = await Processes.run(common.fanout, ["agents", "check", "--config", fleet.config, "--latency", String(latency)],
                                      environment: ["NO_COLOR": "1"], timeout: 600)
        try? (lat.stdout + lat.stderr).write(toFile: "\(work)/agents-check-latency.log", atomically: true, encoding: .utf8)
        let p50 = Self.column(lat.stdout, pattern: #"([0-9.]+) / [0-9.]+ ms"#, unitGroup: false)
        let p99 = Self.column(lat.stdout, pattern: #"[0-9.]+ / ([0-9.]+) ms"#, unitGroup: false)
        if lat.succeeded {
            progress("fleet-scale: dispatch latency p50 median \(f2(medianOf(p50))) ms, p99 max \(f2(p99.max() ?? 0)) ms")
        } else {
            let first = lat.stderr.split(separator: "\n").first { $0.contains("Fatal") || $0.contains("rror") || $0.contains("Crash") }
            problems.append("`fanout agents check --latency \(latency)` over \(agents) agents ended with \(lat.ending)"
                            + (first.map { ": \($0)" } ?? "") + " (its output: \(work)/agents-check-latency.log)")
            progress("fleet-scale: WARNING: \(problems.last ?? "")")
        }

        var runs: [FleetRun] = []
        for (shape, _, bin, expected) in products {
            for label in ["first run (deploys)", "warm run"] {
                let dir = "\(work)/\(shape.rawValue)-\(label.hasPrefix("first") ? "first" : "warm")"
                let timeFile = dir + ".time"
                let r = await Processes.run("/usr/bin/time", ["-v", "-o", timeFile, common.fanout, "run", "--config", fleet.config,
                                                               "--bundle", bin, "--history", "\(work)/\(shape.rawValue)-history.sqlite",
                                                               "--report-dir", dir],
                                            environment: ["NO_COLOR": "1"], timeout: 900)
                try? (r.stdout + r.stderr).write(toFile: dir + ".log", atomically: true, encoding: .utf8)
                guard let report = try? FanoutReportFile.read(dir + "/report.json"), let usage = try? Self.timeVerbose(timeFile) else {
                    problems.append("\(shape.rawValue), \(label): `fanout run` over the fleet ended with \(r.ending) and left no "
                                    + "report: \(r.tail.split(separator: "\n").first ?? "")")
                    progress("fleet-scale: WARNING: \(problems.last ?? "")")
                    continue
                }
                let run = FleetRun(label: label, suite: shape.rawValue, wall: r.seconds, makespan: report.timing.makespan,
                                   lowerBound: report.timing.lowerBound,
                                   coordinatorUserSeconds: usage["User time (seconds)"] ?? 0,
                                   coordinatorSystemSeconds: usage["System time (seconds)"] ?? 0,
                                   coordinatorMaxRSSMiB: (usage["Maximum resident set size (kbytes)"] ?? 0) / 1024,
                                   deployedBytes: report.agents.reduce(0) { $0 + ($1.deployedBytes ?? 0) },
                                   deploySeconds: report.agents.compactMap(\.deploySeconds).max() ?? 0,
                                   units: report.units.count, testsPassed: report.passed, testsExpected: expected)
                runs.append(run)
                progress("fleet-scale: \(shape.rawValue) \(label): wall \(f2(run.wall)) s, makespan \(f2(run.makespan)) s, "
                         + "coordinator CPU \(f2(run.coordinatorUserSeconds + run.coordinatorSystemSeconds)) s, "
                         + "max RSS \(f1(run.coordinatorMaxRSSMiB)) MiB, \(run.testsPassed)/\(expected) passed, "
                         + "\(run.units) units")
            }
        }
        return FleetScaleResult(agents: agents, slotsPerAgent: slots, upSeconds: fleet.upSeconds, checkWall: check.seconds,
                                connectMilliseconds: connects, latencyRuns: latency, latencyCheckWall: lat.seconds,
                                dispatchP50Milliseconds: p50, dispatchP99Milliseconds: p99, runs: runs,
                                problems: problems)
    }

    /// One number per agent row of `fanout agents check`, in milliseconds.
    static func column(_ text: String, pattern: String, unitGroup: Bool = true) -> [Double] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        var out: [Double] = []
        for line in text.split(separator: "\n") where line.hasPrefix("agent-") {
            let s = String(line)
            guard let m = regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)),
                  let r = Range(m.range(at: 1), in: s), let v = Double(s[r]) else { continue }
            var unit = "ms"
            if unitGroup, let u = Range(m.range(at: 2), in: s) { unit = String(s[u]) }
            out.append(unit == "s" ? v * 1000 : v)
        }
        return out
    }

    /// `/usr/bin/time -v` output: "Label: value" lines.
    static func timeVerbose(_ path: String) throws -> [String: Double] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw BenchError("no \(path)") }
        var out: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.lastIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces)
            if let v = Double(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)) { out[key] = v }
        }
        return out
    }
}

/// Core's median (`Statistics.median`), 0 when there is nothing to take it of.
func medianOf(_ values: [Double]) -> Double { Statistics.median(values) ?? 0 }
