import ArgumentParser
import FanoutCoordinator
import FanoutCore
import Foundation

struct BisectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bisect",
        abstract: "Find the test(s) whose state makes a test fail: replay it after what preceded it in its process, and narrow that down.",
        discussion: """
        TEST is Module.Class/test as the report names it (Class/test and Class.test work when they are unique). The \
        failure comes from a recorded run (--run ID, or the newest run of the history in which TEST failed) or from a \
        report (--report PATH/report.json). Each step runs TEST after a subset of its predecessors, in their order, in \
        a fresh process of the current product on this machine with the destination's environment; a pass is believed \
        after --repeats runs, a failure at once. It says up front how many processes it will take at most. A product \
        that changed since the run is refused (--allow-changed-product replays anyway). Exit codes: 0 polluter(s) \
        named · 1 none named (the failure did not come back, TEST fails alone, or the budget ran out) · 2 bad input · \
        3 a step ended for another reason (a crash where the run failed, the test did not run).
        """)

    @OptionGroup var common: CommonOptions

    @Argument(help: "The failing test: Module.Class/test.")
    var test: String

    @Option(help: "The run of the timing history whose failure to replay (default: the newest run in which TEST failed).")
    var run: String?

    @Option(help: "Replay the failure of this report.json instead of a recorded run.")
    var report: String?

    @Option(help: "Passing runs a step needs before its pass is believed (a flaky test passes by chance).")
    var repeats = 2

    @Option(help: "Give up after naming this many polluters.")
    var maxPolluters = 3

    @Option(help: "Seconds for the whole search.")
    var budget: Double = 1800

    @Flag(help: "Replay even when the test product differs from the run's.")
    var allowChangedProduct = false

    @Option(help: "Also write the result as JSON to this file.")
    var json: String?

    mutating func run() async throws {
        guard run == nil || report == nil else {
            throw FanoutError("--run and --report both name the failure to replay", hint: "Give one of them.")
        }
        let settings = try common.settings()
        var options = BisectStep.Options(test: test)
        options.run = run
        options.reportPath = report
        options.destination = common.destination.first
        options.repeats = repeats
        options.maxPolluters = maxPolluters
        options.budget = budget
        options.allowChangedProduct = allowChangedProduct
        let result = try await BisectStep(settings: settings, options: options, progress: Terminal.plainProgress).run()
        print(result.text)
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            do {
                try encoder.encode(result).write(to: URL(fileURLWithPath: json), options: .atomic)
            } catch {
                throw FanoutError("cannot write \(json): \(error.localizedDescription)", hint: "Check the folder exists and is writable.")
            }
        }
        if result.exitCode != .success { throw ExitCode(result.exitCode.rawValue) }
    }
}
