import ArgumentParser
import FanoutCoordinator
import FanoutCore
import FanoutReports

extension HistoryCommand {
    struct Flaky: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Tests by flake score over recent runs.",
            discussion: """
                A test's score is its failures per attempt on the builds it also passed on: a fail then a pass \
                within a run (--retries), or two runs of one build (by the SHA-256 of its test binary) with \
                different verdicts. Failures on a build it never passed on are a break, not a flake, and are left \
                out. The interval is Wilson's (95 %): how much the evidence is worth.
                """)

        @Option(help: "The timing history database.")
        var history = ".fanout/history.sqlite"

        @Option(help: "How many recent runs to look at.")
        var runs = 20

        @Flag(help: "Write quarantine entries for the tests over --threshold, and release muted tests that passed cleanly in their last --release-after runs.")
        var propose = false

        @Flag(help: "With --propose: print what it would change, write nothing.")
        var dryRun = false

        @Option(help: "With --propose: the least flake rate (failures per attempt, 0-1) that proposes a test.")
        var threshold = 0.05

        @Option(help: "With --propose: the least counted failures that propose a test.")
        var minFailures = 2

        @Option(help: "With --propose: the mode of proposed entries (mute or skip).")
        var mode: String = QuarantineMode.mute.rawValue

        @Option(help: "With --propose: days a proposed entry applies.")
        var days = 30

        @Option(help: "With --propose: clean passing runs after which a muted test is released.")
        var releaseAfter = 10

        @OptionGroup var location: QuarantineCommand.Location

        mutating func run() async throws {
            guard propose else {
                print(try InspectionTables.flakyTable(path: history, runs: runs).rendered())
                if let order = try InspectionTables.orderDependentTable(path: history, runs: runs) {
                    print("\n" + order.rendered())
                }
                return
            }
            guard let mode = QuarantineMode(rawValue: mode) else { throw FanoutError("--mode must be mute or skip (got '\(mode)')") }
            guard threshold >= 0, threshold <= 1 else { throw FanoutError("--threshold must be from 0 to 1 (got \(threshold))") }
            guard minFailures >= 1, releaseAfter >= 1, days >= 0, runs >= 1 else {
                throw FanoutError("--min-failures, --release-after and --runs must be at least 1, --days at least 0")
            }
            let (settings, path) = try location.resolve()
            var proposal = QuarantineProposal()
            proposal.threshold = threshold
            proposal.minimumFailures = minFailures
            proposal.mode = mode
            proposal.days = days
            proposal.releaseAfter = releaseAfter
            proposal.runs = runs
            let result = try proposal.apply(historyPath: history, quarantinePath: path, settings: settings,
                                            today: QuarantineFile.day(), dryRun: dryRun)
            let verb = dryRun ? "would " : ""
            for e in result.added { print("\(verb)quarantine \(e.label) (\(e.mode.rawValue) until \(e.expires)): \(e.reason)") }
            for e in result.released {
                print("\(verb)release \(e.label): it passed cleanly in each of its last \(releaseAfter) runs")
            }
            for t in result.alreadyQuarantined { print("already quarantined: \(t)") }
            for o in result.orderDependent {
                print("not proposed: \(o.test) is order-dependent (\(o.runs) run\(o.runs == 1 ? "" : "s")), not flaky: it fails after "
                    + (o.polluters.isEmpty ? "tests that ran before it (`fanout bisect '\(o.test)' --run \(o.lastRun)` names them)"
                        : o.polluters.joined(separator: " + ")) + ": fix the polluter rather than mute the victim")
            }
            if result.added.isEmpty, result.released.isEmpty {
                print("nothing to propose: no test over \(String(format1: threshold * 100))% flake rate with "
                    + "\(minFailures)+ failures in the last \(runs) runs, and no muted test with \(releaseAfter) clean runs")
            } else if !dryRun {
                print("wrote \(path): review the change and commit it")
            }
        }
    }
}
