import ArgumentParser
import FanoutCoordinator
import FanoutCore
import FanoutReports

struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Dry run: show the assignment of units to slots, each estimate and its source, the predicted makespan and the lower bound.")

    @OptionGroup var common: CommonOptions

    @Option(help: "Preview how the work splits into N shards for N CI jobs (`fanout run --shard I/N` in each).")
    var shards: Int?

    mutating func run() async throws {
        var settings = try common.settings()
        if let shards {
            guard shards >= 1 else { throw FanoutError("--shards must be at least 1 (got \(shards))", hint: "Use --shards N with N ≥ 1.") }
            settings.shard = Shard(index: 1, count: shards)
        }
        let prepared = try await Coordinator(settings: settings, progress: Terminal.plainProgress).prepare()
        for w in prepared.warnings { Terminal.err("warning: \(w)") }
        if let table = InspectionTables.shardTable(prepared) {
            print(table.rendered())
            return
        }
        let hooks = InspectionTables.hooksTable(settings, slots: prepared.slots).map { [$0] } ?? []
        print((InspectionTables.planTables(prepared) + hooks).map { $0.rendered() }.joined(separator: "\n\n"))
    }
}
