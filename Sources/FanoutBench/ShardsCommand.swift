import ArgumentParser
import Foundation

struct Shards: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a built test product as static shards on local slots, as CI splitters do (one process per shard).")

    @Option(help: "The test binary (`<Package>PackageTests.xctest`).")
    var bundle: String
    @Option(help: "count, name or timings.")
    var strategy: StaticStrategy = .count
    @Option(help: "Shards, all run at once.")
    var slots = 8
    @Option(help: "A Fanout report.json whose classes[].actual are the timings (for --strategy timings).")
    var history: String?

    mutating func run() async throws {
        Interrupts.install()
        let timings = try history.map { try FanoutReportFile.read($0).classDurations } ?? [:]
        let listed = try await SuiteBench.listClasses(bundle)
        let bench = SuiteBench(shape: .lognormal, seed: 0, benchDir: "", fanout: "", repo: "", slots: slots, warmRuns: 0,
                               fleetAgents: 0, fleetSlots: 0, fleetPort: 0)
        let c = await bench.staticCase(strategy, bin: bundle, classHistory: timings,
                                       expected: listed.reduce(0) { $0 + $1.tests }, fleet: nil, remoteBin: nil)
        print("\(c.label): wall \(f2(c.wall)) s, makespan \(f2(c.makespan ?? 0)) s, \(c.processes ?? 0) processes, "
              + "test time \(f2(c.testTime ?? 0)) s, \(c.testsPassed)/\(c.testsExpected) passed"
              + (c.note.map { " — \($0)" } ?? ""))
        if !c.complete { throw ExitCode(1) }
    }
}

extension StaticStrategy: ExpressibleByArgument {}
