import FanoutCoordinator
import FanoutCore
import FanoutHistory
import FanoutReports
import Foundation
import Testing

/// Tests that depend on each other (Tests/Fixtures/OrderSuite, real processes): every unit's order kept, `fanout
/// bisect` naming exactly the polluters, order checks under `--retries` telling order-dependence from chance, and
/// `--shuffle`.
@Suite(.serialized, .timeLimit(.minutes(10))) struct OrderDependenceTests {
    static let suite = FixturePackage(folder: "OrderSuite", variable: nil)

    /// Each victim and exactly the polluter(s) it fails after (the fixture's README).
    static let victims: [String: [String]] = [
        "OrderTests.VictimTests/testReadsFreshCache": ["OrderTests.CachePolluterTests/testWarmsCache"],
        "OrderTests.VictimTests/testNoMarkerFile": ["OrderTests.FileWriterTests/testWritesMarker"],
        "OrderTests.VictimTests/testNeedsNotBothFlags": ["OrderTests.HalfOneTests/testSetsFlagA", "OrderTests.HalfTwoTests/testSetsFlagB"],
        "OrderTests.LedgerSuite/zExpectsEmptyLedger()": ["OrderTests.LedgerSuite/bRecordsEntry()"],
    ]
    static let flaky = "OrderTests.FlakyTests/testCoinFlip"

    func settings(_ dir: TempDir, slots: Int = 1, shuffle: Int? = 3) async throws -> RunSettings {
        var s = RunSettings()
        s.bundlePath = try await Self.suite.bundle()
        s.slots = slots
        s.shuffle = shuffle
        s.historyPath = dir.file("history.sqlite")
        s.reportRoot = dir.file("reports")
        s.quarantinePath = dir.file("quarantine.yml")
        return s
    }

    /// Whether the fixture's seeded flake fails in a process given this FANOUT_SEED (FlakyTests.swift's rule).
    static func coinFails(seed: Int) -> Bool { seededDraw(seed: seed, name: "testCoinFlip") < 0.5 }

    @Test func bisectNamesExactlyThePollutersOfEveryVictimWithinItsBound() async throws {
        let dir = try TempDir()
        // One slot, shuffled: every XCTest class shares one process, so every victim runs after its polluters.
        let run = try await Coordinator(settings: settings(dir)).run()
        let report = run.report
        for victim in Self.victims.keys {
            #expect(report.result(victim)?.outcome == .failed, "\(victim) fails after its polluters")
        }
        // Every attempt knows its place in its process; positions are 1...n in each unit.
        for unit in report.units {
            let positions = report.results.flatMap(\.attempts).filter { $0.unit == unit.id }.compactMap(\.position).sorted()
            #expect(positions == Array(1...max(1, positions.count)), "unit \(unit.id): \(positions)")
        }
        // The history keeps the same order.
        let (store, _) = try HistoryStore.open(at: dir.file("history.sqlite"))
        let recorded = try #require(try store.run(id: report.runID))
        let victim = try #require(recorded.tests.first { $0.id.description == "OrderTests.VictimTests/testReadsFreshCache" })
        #expect(victim.attempts.first?.position == report.result("OrderTests.VictimTests/testReadsFreshCache")?.attempts.first?.position)

        let base = try await settings(dir)
        for (victim, polluters) in Self.victims.sorted(by: { $0.key < $1.key }) {
            let found = try await BisectStep(settings: base, options: BisectStep.Options(test: victim), progress: { _ in }).run()
            #expect(found.result.conclusion == .found, "\(victim): \(found.text)")
            #expect(found.result.polluters.map(\.description) == polluters, "\(victim): \(found.text)")
            #expect(found.result.runs <= found.result.bound, "\(victim): \(found.result.runs) processes, bound \(found.result.bound)")
            #expect(found.runID == report.runID)
            #expect(found.exitCode == .success)
            let name = polluters[0].split(separator: "/").last.map { $0.replacingOccurrences(of: "()", with: "") } ?? "?"
            #expect(found.replayCommand.contains(name), "the replay runs the polluter: \(found.replayCommand)")
        }
    }

    @Test func bisectRefusesBadInputWithClearMessages() async throws {
        let dir = try TempDir()
        let report = try await Coordinator(settings: settings(dir)).run().report
        let base = try await settings(dir)
        func message(_ options: BisectStep.Options) async -> String? {
            do {
                _ = try await BisectStep(settings: base, options: options, progress: { _ in }).run()
                return nil
            } catch {
                return error.description
            }
        }
        #expect(await message(.init(test: "OrderTests.NoSuchTests/testNothing"))?.contains("none of the 20 newest runs") == true)
        var unknownRun = BisectStep.Options(test: "VictimTests/testReadsFreshCache")
        unknownRun.run = "no-such-run"
        #expect(await message(unknownRun)?.contains("the history has no run no-such-run") == true)
        var passed = BisectStep.Options(test: "OrderTests.VictimTests/testInnocent")
        passed.run = report.runID
        #expect(await message(passed)?.contains("did not fail in run") == true)

        // A report whose product is not this one: refused, or replayed with a warning when allowed.
        let path = dir.file("changed.json")
        var changed = report
        changed.product.sha256 = String(repeating: "0", count: 64)
        try JSONReportWriter().encode(changed).write(to: URL(fileURLWithPath: path))
        var fromReport = BisectStep.Options(test: "VictimTests/testNoMarkerFile")
        fromReport.reportPath = path
        #expect(await message(fromReport)?.contains("the test product changed since run") == true)
        fromReport.allowChangedProduct = true
        let anyway = try await BisectStep(settings: base, options: fromReport, progress: { _ in }).run()
        #expect(anyway.result.polluters.map(\.description) == ["OrderTests.FileWriterTests/testWritesMarker"])
        #expect(anyway.warnings.contains { $0.contains("replayed anyway") })

        // A failure that does not come back: the seeded flake fails under its run's FANOUT_SEED, and bisect's
        // processes have none, so it passes there: not reproduced, with the attempts made.
        let seed = try #require((1...500).first { Self.coinFails(seed: RepeatReport.seed(run: $0, repetition: 0, retry: 0)) })
        var seeded = try await settings(dir)
        seeded.seed = seed
        let flakyRun = try await Coordinator(settings: seeded).run().report
        #expect(flakyRun.result(Self.flaky)?.outcome == .failed)
        var chance = BisectStep.Options(test: Self.flaky)
        chance.run = flakyRun.runID
        let none = try await BisectStep(settings: base, options: chance, progress: { _ in }).run()
        #expect(none.result.conclusion == .notReproduced, "\(none.text)")
        #expect(none.result.runs == 2 && none.exitCode == .testFailures)
    }

    @Test func retriesReportVictimsOrderDependentWithTheirPollutersAndTheSeededFlakeStaysFlaky() async throws {
        let dir = try TempDir()
        // A run seed under which the flake fails first (retry 0), then passes on its retry and in its order check
        // (the check runs with a seed of its own: retry 2).
        let seed = try #require((1...2000).first { s in
            Self.coinFails(seed: RepeatReport.seed(run: s, repetition: 0, retry: 0))
                && !Self.coinFails(seed: RepeatReport.seed(run: s, repetition: 0, retry: 1))
                && !Self.coinFails(seed: RepeatReport.seed(run: s, repetition: 0, retry: 2))
        })
        // Two earlier runs of the same product without retries, dealt differently: some victims failed in one and
        // passed in the other, which reads as flake evidence (the order was not checked there).
        var earlier = try await settings(dir, slots: 2, shuffle: 5)
        _ = try await Coordinator(settings: earlier).run()
        earlier.slots = 1
        earlier.shuffle = 3
        _ = try await Coordinator(settings: earlier).run()
        var s = try await settings(dir)
        s.retries = 1
        s.seed = seed
        let run = try await Coordinator(settings: s).run()
        let report = run.report
        for (victim, polluters) in Self.victims {
            let result = try #require(report.result(victim))
            #expect(result.outcome == .failed, "\(victim): order-dependent is a failure, never flaky")
            let order = try #require(result.orderDependence, "\(victim) is order-dependent")
            #expect(order.polluters?.map(\.description) == polluters, "\(victim): \(order.summary)")
            #expect(result.attempts.last?.replayOf == order.unit, "its last attempt is the order check")
        }
        let coin = try #require(report.result(Self.flaky))
        #expect(coin.outcome == .flaky, "the seeded flake stays flaky")
        #expect(coin.orderDependence == nil)
        #expect(coin.attempts.map(\.outcome) == [.failed, .passed], "as without order checks: a passing check adds no attempt")
        #expect(report.units.contains { $0.replayOf == Self.flaky }, "its order check ran, and the report lists its unit")
        #expect(report.exitCode == 1)

        // Every report says which.
        let folder = try #require(run.reportDirectory)
        let junit = try String(contentsOfFile: folder + "/junit.xml", encoding: .utf8)
        #expect(junit.contains("name=\"order.dependent\"") && junit.contains("ORDER-DEPENDENT, not flaky"))
        #expect(try String(contentsOfFile: folder + "/summary.md", encoding: .utf8).contains("ORDER\\-DEPENDENT, not flaky"))
        #expect(try String(contentsOfFile: folder + "/report.html", encoding: .utf8).contains("ORDER-DEPENDENT"))

        // The history: order-dependent tests are no flakes, and the proposal names their polluters instead.
        let (store, _) = try HistoryStore.open(at: dir.file("history.sqlite"))
        let scored = try store.flakyTests(runs: 5).map(\.test.description)
        #expect(scored.contains(Self.flaky))
        #expect(Set(scored).subtracting([Self.flaky]).isSubset(of: Set(Self.victims.keys)), "\(scored)")
        #expect(scored.count > 1, "the earlier runs left flake evidence on some victims: \(scored)")
        // Listed apart, never as flakes, never proposed for quarantine.
        let table = try InspectionTables.flakyTable(path: dir.file("history.sqlite"), runs: 5)
        #expect(table.rows.map { $0[0] } == [Self.flaky], "\(table.rows)")
        let order = try store.orderDependentTests(runs: 5)
        #expect(Set(order.map(\.test.description)) == Set(Self.victims.keys))
        #expect(order.allSatisfy { $0.polluters == Self.victims[$0.test.description] })
        var proposal = QuarantineProposal()
        proposal.threshold = 0
        proposal.minimumFailures = 1
        let proposed = try proposal.apply(historyPath: dir.file("history.sqlite"), quarantinePath: dir.file("quarantine.yml"),
                                          settings: RunSettings(), today: QuarantineFile.day(), dryRun: true)
        #expect(proposed.added.map(\.test) == [Self.flaky], "\(proposed.added.map(\.test))")
        #expect(proposed.orderDependent.count == Self.victims.count)
    }

    /// Chance that looks like order: the seeded flake fails in its process, passes on its retry, fails again after
    /// the tests that preceded it, and fails alone once more. Failing alone says chance: it stays flaky.
    @Test func aTestThatFailsAfterItsPredecessorsAndAloneStaysFlaky() async throws {
        let dir = try TempDir()
        // The check after the predecessors runs with retry 2, the alone confirmation with retry 3.
        let seed = try #require((1...5000).first { s in
            let fails = { (retry: Int) in Self.coinFails(seed: RepeatReport.seed(run: s, repetition: 0, retry: retry)) }
            return fails(0) && !fails(1) && fails(2) && fails(3)
        })
        var s = try await settings(dir)
        s.retries = 1
        s.seed = seed
        s.filters = ["FlakyTests", "FillerTests"]
        let report = try await Coordinator(settings: s).run().report
        let coin = try #require(report.result(Self.flaky))
        #expect(coin.outcome == .flaky)
        #expect(coin.orderDependence == nil, "it failed alone too: chance, not order")
        #expect(report.units.filter { $0.replayOf == Self.flaky }.count == 2, "the check after its predecessors, then alone")
    }

    /// Interrupted while it narrows an order-dependent test down: the run ends (the search waiting for its step is
    /// answered), and every test asked for is in the report exactly once.
    @Test func interruptedDuringABisectionTheRunEndsWithEveryTestOnce() async throws {
        let dir = try TempDir()
        var s = try await settings(dir)
        s.retries = 1
        let bisecting = Flag()
        let coordinator = Coordinator(settings: s) { event in
            if case .phase(let text) = event, text.hasPrefix("bisecting ") { bisecting.set() }
        }
        let run = Task { try await coordinator.run() }
        let deadline = ContinuousClock.now + .seconds(120)
        while !bisecting.isSet, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(bisecting.isSet, "a bisection started")
        run.cancel()
        let report = try await run.value.report
        let ids = report.results.map(\.id.description)
        #expect(ids.count == 38 && Set(ids).count == 38, "every test once: \(ids.count)")
        #expect(report.interrupted || report.results.allSatisfy { $0.outcome != .notRun })
    }

    @Test func shuffleWithOneSeedDealsTheSameProcessesAndOtherSeedsFindOtherDependences() async throws {
        let dir = try TempDir()
        func processes(_ report: RunReport) -> [[String]] {
            report.units.map { unit in
                report.results.compactMap { r in
                    r.attempts.first { $0.unit == unit.id }.flatMap { a in a.position.map { (r.id.description, $0) } }
                }.sorted { $0.1 < $1.1 }.map(\.0)
            }.sorted { $0.first ?? "" < $1.first ?? "" }
        }
        func failing(_ report: RunReport) -> Set<String> {
            Set(report.results.filter { $0.outcome == .failed }.map(\.id.description))
        }
        var s = try await settings(dir, slots: 2, shuffle: 5)
        s.recordHistory = false
        let first = try await Coordinator(settings: s).run().report
        let second = try await Coordinator(settings: s).run().report
        #expect(processes(first) == processes(second), "one seed, the same processes in the same order")
        #expect(failing(first) == failing(second))
        #expect(first.shuffleSeed == 5)

        var found: [Int: Set<String>] = [:]
        for seed in 1...6 {
            s.shuffle = seed
            found[seed] = failing(try await Coordinator(settings: s).run().report).intersection(Self.victims.keys)
        }
        #expect(Set(found.values).count > 1, "other seeds put other tests before the victims: \(found)")
        #expect(found.values.reduce(into: Set<String>()) { $0.formUnion($1) }.count >= 3, "\(found)")
    }

    /// The command lines: `fanout run --shuffle --retries --bisect-budget`, `fanout bisect` from the history and
    /// from a report, its JSON, and its exit codes for bad input.
    @Test func theCommandLinesFindThePolluterAndRefuseBadInput() async throws {
        let dir = try TempDir()
        let bundle = try await Self.suite.bundle()
        let history = dir.file("h.sqlite")
        let (code, out, err) = try await runCLI(["run", "--bundle", bundle, "--slots", "1", "--shuffle", "3", "--retries", "1",
                                                 "--bisect-budget", "0", "--history", history, "--report-dir", dir.file("r")])
        #expect(code == 1, "\(err)")
        #expect(out.contains("shuffled: classes dealt to processes from seed 3"), "\(out)")
        // No bisection budget: the suspects are named, with the command that narrows them down.
        #expect(out.contains("fanout bisect 'OrderTests.VictimTests/testReadsFreshCache' --run"), "\(out)")
        let report = try JSONReportReader().read(from: URL(fileURLWithPath: dir.file("r/report.json")))

        let json = dir.file("bisect.json")
        let (found, text, log) = try await runCLI(["bisect", "VictimTests/testReadsFreshCache", "--bundle", bundle,
                                                   "--history", history, "--run", report.runID, "--repeats", "1",
                                                   "--max-polluters", "2", "--budget", "120", "--json", json])
        #expect(found == 0, "\(text)\(log)")
        #expect(text.contains("it fails after this polluter:\n  OrderTests.CachePolluterTests/testWarmsCache"), "\(text)")
        #expect(log.contains("at most"), "the bound is said up front: \(log)")
        let decoded = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any]
        let result = try #require(decoded?["result"] as? [String: Any])
        #expect(result["conclusion"] as? String == "found")

        let (fromReport, _, _) = try await runCLI(["bisect", "VictimTests/testNoMarkerFile", "--bundle", bundle,
                                                   "--report", dir.file("r/report.json"), "--allow-changed-product"])
        #expect(fromReport == 0)
        let (bad, _, badErr) = try await runCLI(["bisect", "VictimTests/testNoMarkerFile", "--bundle", bundle,
                                                 "--run", report.runID, "--report", dir.file("r/report.json")])
        #expect(bad == 2 && badErr.contains("Give one of them"), "\(badErr)")
        let (unknown, _, unknownErr) = try await runCLI(["bisect", "NoSuch/test", "--bundle", bundle, "--history", history,
                                                         "--run", report.runID])
        #expect(unknown == 2 && unknownErr.contains("has no test named NoSuch/test"), "\(unknownErr)")
        let (shuffle, _, shuffleErr) = try await runCLI(["run", "--bundle", bundle, "--shuffle", "many"])
        #expect(shuffle == 2 && shuffleErr.contains("--shuffle takes a seed"), "\(shuffleErr)")
        // A bare --shuffle draws a seed and prints it.
        let (_, drawn, _) = try await runCLI(["run", "--bundle", bundle, "--shuffle", "--no-record", "--report-dir", dir.file("d")])
        #expect(drawn.contains("shuffled: classes dealt to processes from seed"), "\(drawn)")
    }
}
