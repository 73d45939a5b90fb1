import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// Work stealing through the real dispatch loop and real test processes: a first run (no history) of the 8-test
/// DatabaseMigrationTests on idle slots. The tests it has not started are taken over by new units on the idle slots,
/// the original is stopped as it starts the first of them, and every test runs and is reported exactly once.
@Suite(.serialized, .timeLimit(.minutes(5))) struct WorkStealingTests {
    static let filter = "DatabaseMigrationTests"
    static let env = ["DEMO_LATENCY_SCALE": "0.5"]

    @Test func onLocalSlots() async throws {
        let dir = try TempDir()
        let bundle = try await DemoSuite.shared.bundle()
        let settings = demoSettings(bundle: bundle, dir: dir, filters: [Self.filter], env: Self.env, slots: 4)
        let report = try await Coordinator(settings: settings).run().report
        try Self.check(report)
        // The history learned every method's time from the pieces: the next run plans from it (the class is long
        // for 4 slots, so it is split by its methods' history), not from a guess.
        let actual = try #require(report.classes.first?.actual)
        let next = try await Coordinator(settings: settings).run().report
        let planned = try #require(next.classes.first)
        #expect(planned.estimateSource.hasPrefix("method history (8/8)") || planned.estimateSource.hasPrefix("history"),
                "\(planned.estimateSource)")
        #expect(abs(planned.estimate - actual) < 0.1 * actual, "estimate \(planned.estimate) vs last \(actual)")
        #expect(next.results.count == 8 && next.counts.passed == 8)
        // Nothing of the stopped original is left running: no process runs the bundle any more.
        let deadline = Date().addingTimeInterval(20)
        while !Self.processes(running: bundle).isEmpty {
            guard Date() < deadline else {
                Testing.Issue.record("still running: \(Self.processes(running: bundle))")
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    @Test func onSSHAgents() async throws {
        let dir = try TempDir()
        let settings = try await IntegrationFleet.ssh.runSettings(dir, filters: [Self.filter], env: Self.env)
        let report = try await Coordinator(settings: settings).run().report
        try Self.check(report)
        #expect(settings.agents.count == 4)
        for spec in settings.agents {
            let left = try await IntegrationFleet.processesOnAgent(spec, settings: settings.ssh)
            #expect(left.isEmpty, "\(spec.name) still runs: \(left)")
        }
    }

    static func check(_ report: RunReport) throws {
        // Every test once, passed, with a single attempt from the unit that ran it to its end.
        #expect(report.results.count == 8)
        #expect(Set(report.results.map(\.id)).count == 8)
        #expect(report.counts.passed == 8 && report.counts.failures == 0 && report.counts.notRun == 0)
        for r in report.results { #expect(r.attempts.count == 1, "\(r.id): \(r.attempts.count) attempts") }

        // The original handed its unstarted tests over and was stopped; new units took them.
        let thieves = report.units.filter { $0.takenFrom != nil }
        #expect(!thieves.isEmpty, "units: \(report.units.map { "\($0.id) \($0.ending)" })")
        let originals = Set(thieves.compactMap(\.takenFrom))
        for id in originals {
            let original = try #require(report.units.first { $0.id == id })
            #expect((original.handedOver ?? 0) > 0)
            #expect(original.ending.hasPrefix("stopped where the tests it had not started were taken over"),
                    "\(original.ending)")
        }
        // Every steal is in the report, naming the units that took the tests.
        let steals = try #require(report.steals)
        // (A unit that took tests over may hand some of them over again: it kept testCount and handed over the rest.)
        #expect(steals.reduce(0) { $0 + $1.tests } == thieves.reduce(0) { $0 + $1.testCount + ($1.handedOver ?? 0) })
        #expect(Set(steals.flatMap(\.to)) == Set(thieves.map(\.id)))
        #expect(steals.allSatisfy { $0.expectedAfter < $0.expectedBefore } && !steals.isEmpty)
        // A test that was taken over is reported from the unit that took it, never from the original.
        let byUnit = Dictionary(grouping: report.results, by: { $0.attempts[0].unit })
        let taken = thieves.reduce(0) { $0 + (byUnit[$1.id]?.count ?? 0) }
        #expect(taken == thieves.reduce(0) { $0 + $1.testCount }, "every taken test was run by its new unit")
        #expect(taken > 0)

        // Merged back into one class, whose time (the sum of its pieces) may teach the history.
        #expect(report.classes.count == 1)
        let cls = try #require(report.classes.first)
        #expect(cls.testCount == 8 && cls.outcome == .passed)
        #expect(cls.timingIsComplete, "every piece ran normally and together they covered the class")
    }

    /// PIDs of processes whose executable is `binary`.
    static func processes(running binary: String) -> [String] {
        let target = URL(fileURLWithPath: binary).resolvingSymlinksInPath().path
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return pids.filter { pid in
            pid.allSatisfy(\.isNumber)
                && (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) == target
        }
    }
}
