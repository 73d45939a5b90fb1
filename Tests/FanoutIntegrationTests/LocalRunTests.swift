import FanoutAgents
import FanoutCoordinator
import FanoutCore
import FanoutReports
import FanoutRunners
import Foundation
import Testing

/// The whole job on one machine, against the real demo suite (a real package, built by scripts/test.sh).
@Suite(.serialized, .timeLimit(.minutes(10))) struct LocalRunTests {
    @Test func wholeSuiteRunsGreenAndEveryTestIsReportedOnce() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let outcome = try await Coordinator(settings: demoSettings(bundle: bundle, dir: dir)).run()
        let report = outcome.report
        #expect(outcome.exitCode == .success)
        #expect(report.results.count >= 200)
        let ids = report.results.map { "\($0.destination)|\($0.id)" }
        #expect(Set(ids).count == ids.count, "every test exactly once")
        // What discovery found is exactly what was reported.
        let catalog = try await Discovery().catalog(of: TestProduct(binary: bundle), destination: .local)
        #expect(Set(report.results.map(\.id)) == Set(catalog.suites.flatMap(\.testIDs)))
        #expect(report.counts.failures == 0 && report.counts.notRun == 0)
        #expect(report.counts.skipped >= 2, "XCTSkip and Swift Testing skips are skips, with their reason")
        let skip = report.results.first { $0.outcome == .skipped && $0.framework == .xctest }
        #expect(skip?.attempts.last?.skipReason?.isEmpty == false)
        let measured = report.measurements.first
        #expect(measured?.measurement.values.count == 10)
        #expect(report.results.contains { $0.framework == .swiftTesting && $0.outcome == .passed })
        // Both same-named classes ran, each under its own module.
        #expect(report.result("DemoKitTests.SharedNameTests/testSharedStrings")?.outcome == .passed)
        #expect(report.result("IntegrationTests.SharedNameTests/testSharedStore")?.outcome == .passed)
        #expect(report.result("IntegrationTests.SharedNameTests/testSharedStrings") == nil)
        // Files.
        #expect(outcome.files.contains { $0.hasSuffix("report.json") })
        #expect(outcome.files.contains { $0.hasSuffix("junit.xml") })
        #expect(report.timing.efficiency >= 1 - 1e-9 || report.timing.lowerBound == 0)
    }

    /// A first run (no history) runs the 8-test DatabaseMigrationTests whole, so over the classes as scheduled the
    /// run cannot beat that class. The report's LB comes from the tests alone and is lower; efficiency is against it.
    @Test func theLowerBoundComesFromPerTestDurationsNotFromHowClassesWereGrouped() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        var settings = demoSettings(bundle: bundle, dir: dir,
                                    filters: ["DatabaseMigrationTests", "Checkout", "CacheStress", "LargeInput", "Arithmetic"],
                                    env: ["DEMO_LATENCY_SCALE": "0.25"], slots: 8)
        settings.keepWhole = ["DatabaseMigrationTests"] // runs whole: not split, nothing stolen from it
        let report = try await Coordinator(settings: settings).run().report
        #expect(report.classes.count >= 5 && report.classes.allSatisfy { $0.estimateSource.hasPrefix("no history") })
        let migration = try #require(report.classes.first { $0.suite.name == "DatabaseMigrationTests" }?.actual)
        // Recomputed here from the report's own per-test durations and CPU time: max(total / slots, longest test,
        // CPU seconds / cores), each test's time as it would have been with a core to itself (8 slots share the
        // machine's cores).
        let sharing = MeasuredLowerBound.sharing(of: report.agents)
        let durations = report.results.flatMap { r in
            r.attempts.map { MeasuredLowerBound.uncontended(duration: $0.duration, cpu: $0.cpuSeconds, sharing: sharing[$0.agent] ?? 1) }
        }
        #expect(durations.count == report.results.count && durations.count >= 20)
        let cpuTerm = report.timing.cpuSeconds.flatMap { cpu in report.timing.cores.map { cpu / Double($0) } } ?? 0
        let expected = max(durations.reduce(0, +) / 8, durations.max() ?? 0, cpuTerm)
        #expect(abs(report.timing.lowerBound - expected) < 1e-6)
        let classBound = try #require(report.timing.classLowerBound)
        #expect(classBound >= migration - 1e-9, "the class ran whole: over classes the run could not beat it")
        #expect(report.timing.lowerBound < migration * 0.9, "LB \(report.timing.lowerBound) vs class \(migration)")
        #expect(abs(report.timing.efficiency - report.timing.makespan / report.timing.lowerBound) < 1e-9)
    }

    @Test func secondRunPlansFromHistory() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        var settings = demoSettings(bundle: bundle, dir: dir, filters: ["^DemoKitTests\\.(Arithmetic|Prime|LRUCache)Tests$"])
        // Whole classes, so that each class's estimate is its own (splitting estimates pieces from method history).
        settings.splitClasses = false
        let first = try await Coordinator(settings: settings).run().report
        #expect(first.classes.count == 3 && first.classes.allSatisfy { $0.estimateSource.hasPrefix("no history") })
        let second = try await Coordinator(settings: settings).run().report
        #expect(second.classes.count == 3)
        for c in second.classes {
            #expect(c.estimateSource.hasPrefix("history"), "\(c.suite): \(c.estimateSource)")
            let before = try #require(first.classes.first { $0.suite == c.suite }?.actual)
            #expect(abs(c.estimate - before) < 1e-6, "estimate = the one past run's time")
        }
    }

    @Test func crashReportsTheTestOnceWithBacktraceAndRunsTheRestOfItsClass() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let settings = demoSettings(bundle: bundle, dir: dir, filters: ["WorkerPoolTests", "GCDTests"],
                                    env: ["DEMO_CRASH": "1"], slots: 1)
        let outcome = try await Coordinator(settings: settings).run()
        let report = outcome.report
        #expect(outcome.exitCode == .testFailures)
        let crashed = try #require(report.result("IntegrationTests.WorkerPoolTests/testEnqueueRespectsPriority"))
        #expect(crashed.outcome == .crashed)
        #expect(crashed.attempts.count == 1)
        #expect(crashed.attempts[0].issues.contains { $0.kind == .crash })
        #expect(crashed.attempts[0].diagnostics?.contains("deliberate crash") == true, "the backtrace tail is attached")
        let rest = report.results.filter { $0.id.suite.name == "WorkerPoolTests" && $0.id != crashed.id }
        #expect(rest.count >= 3)
        #expect(rest.allSatisfy { $0.outcome == .passed }, "the rest of the class ran in a unit of its own")
        let gcd = report.results.filter { $0.id.suite.name == "GCDTests" }
        #expect(!gcd.isEmpty && gcd.allSatisfy { $0.outcome == .passed })
        let ids = report.results.map(\.id)
        #expect(Set(ids).count == ids.count)
        #expect(report.units.count >= 2, "the leftovers ran in another unit")
        #expect(report.classes.first { $0.suite.name == "WorkerPoolTests" }?.timingIsComplete == false)
    }

    @Test func failuresCarryTheirPlaceAndMessage() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let settings = demoSettings(bundle: bundle, dir: dir,
                                    filters: ["ArithmeticTests", "ConfigLoadingTests", "AsyncLoaderTests", "MathSuite"],
                                    env: ["DEMO_FAIL": "1", "DEMO_THROW": "1", "DEMO_EXPECTATION_TIMEOUT": "1", "DEMO_ST_FAIL": "1"])
        let outcome = try await Coordinator(settings: settings).run()
        #expect(outcome.exitCode == .testFailures)
        let r = outcome.report
        let assertion = try #require(r.result("DemoKitTests.ArithmeticTests/testMultiply"))
        #expect(assertion.outcome == .failed)
        #expect(assertion.issues.first?.location?.file.hasSuffix("ArithmeticTests.swift") == true)
        #expect(assertion.issues.first?.message.contains("deliberate failure") == true)
        let thrown = try #require(r.result("IntegrationTests.ConfigLoadingTests/testLoadFromEnvironment"))
        #expect(thrown.outcome == .failed && thrown.issues.first?.kind == .thrown)
        let expectation = r.results.first { $0.id.suite.name == "AsyncLoaderTests" && $0.outcome == .failed }
        #expect(expectation?.issues.first?.kind == .expectationTimeout)
        let st = r.results.first { $0.framework == .swiftTesting && $0.outcome == .failed }
        #expect(st?.issues.first?.location?.line ?? 0 > 0)
    }

    @Test func hangIsKilledAtTheTimeoutAndTheRestIsRequeued() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        var settings = demoSettings(bundle: bundle, dir: dir, filters: ["SessionTimeoutTests"], env: ["DEMO_HANG": "1"],
                                    slots: 1)
        settings.timeLimits.stall = 3
        let outcome = try await Coordinator(settings: settings).run()
        let r = outcome.report
        #expect(outcome.exitCode == .testFailures)
        let hung = try #require(r.result("IntegrationTests.SessionTimeoutTests/testIdleSessionExpires"))
        #expect(hung.outcome == .timedOut)
        #expect(hung.issues.contains { $0.kind == .timeout })
        #expect(r.results.filter { $0.id.suite.name == "SessionTimeoutTests" && $0.outcome == .passed }.count == 2)
        #expect(r.units.first?.ending.contains("timed out") == true)
    }

    @Test func aUnitThatSelectsZeroTestsIsAnError() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        // A class that discovery never saw (a stale catalog, a typo): the binary runs nothing and exits 0.
        let ghost = WorkItem(suite: SuiteID(module: "DemoKitTests", name: "NoSuchTests"), framework: .xctest,
                             destination: "local", tests: ["testA"], isWholeSuite: true, estimate: 1,
                             source: .noHistory(secondsPerTest: 0.1))
        let unit = WorkUnit(id: 1, items: [ghost])
        let command = try XCTestRunner().command(for: unit, binary: bundle, destination: .local)
        var parser = XCTestRunner().makeParser(for: unit)
        var collector = UnitCollector(unit: unit, agent: "local")
        let (ending, out, _) = await LocalTransport(slots: 1).capture(command)
        #expect(ending == .exited(0), "XCTest exits 0 when nothing matched")
        collector.consume(parser.consume(stdout: out) + parser.finish())
        let result = collector.finish(ending, diagnostics: "")
        #expect(result.problem?.contains("zero tests") == true)
        #expect(result.missing.map(\.description) == ["DemoKitTests.NoSuchTests/testA"])
    }

    @Test func corruptHistoryIsMovedAsideAndTheRunGoesOn() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let settings = demoSettings(bundle: bundle, dir: dir, filters: ["^DemoKitTests\\.GCDTests$"])
        try Data("this is not a database, it is garbage \u{0}\u{1}\u{2}".utf8).write(to: URL(fileURLWithPath: settings.historyPath))
        let outcome = try await Coordinator(settings: settings).run()
        #expect(outcome.exitCode == .success)
        #expect(outcome.report.warnings.contains { $0.contains("corrupt") || $0.contains("moved") })
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(files.contains { $0.hasPrefix("history.sqlite.corrupt-") })
        // And the fresh store learned this run.
        let again = try await Coordinator(settings: settings).run()
        #expect(again.report.classes.first?.estimateSource.hasPrefix("history") == true)
    }

    @Test func aBinaryThatDiesAtStartUpCannotKeepAUnitCycling() async throws {
        let dir = try TempDir()
        let binary = dir.file("Broken.xctest")
        try """
        #!/bin/sh
        case "$1" in
          --dump-tests-json) echo '{"name":"All tests","tests":[{"name":"x.xctest","tests":[{"name":"M.C","tests":[{"name":"testA"},{"name":"testB"}]}]}]}'; exit 0;;
          --testing-library) exit 0;;
        esac
        kill -SEGV $$
        """.write(toFile: binary, atomically: true, encoding: .utf8)
        chmod(binary, 0o755)
        var settings = demoSettings(bundle: binary, dir: dir)
        settings.slots = 1
        let outcome = try await Coordinator(settings: settings).run()
        #expect(outcome.exitCode == .infrastructure)
        #expect(outcome.report.units.count == 3, "first try plus the budget of 2 re-queues, then it stops")
        #expect(outcome.report.results.count == 2)
        #expect(outcome.report.results.allSatisfy { $0.outcome == .notRun })
        #expect(outcome.report.results[0].issues.first?.message.contains("budget") == true)
    }
}


@Suite(.serialized, .timeLimit(.minutes(10))) struct RetryTests {
    @Test func aTestThatFailsOnceIsFlakyCountedOnceEverywhere() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        var settings = demoSettings(bundle: bundle, dir: dir, filters: ["RetryableFetchTests"],
                                    env: ["DEMO_FLAKY_DIR": dir.path])
        settings.retries = 1
        let outcome = try await Coordinator(settings: settings).run()
        #expect(outcome.exitCode == .success, "a flaky test does not fail the run")
        let flaky = try #require(outcome.report.results.first { $0.id.name == "testFetchWithFlakyBackend" })
        #expect(flaky.outcome == .flaky)
        #expect(flaky.attempts.map(\.outcome) == [.failed, .passed])
        #expect(outcome.report.counts.flaky == 1)
        #expect(outcome.report.counts.total == outcome.report.results.count, "counted once")
        let others = outcome.report.results.filter { $0.id != flaky.id }
        #expect(!others.isEmpty && others.allSatisfy { $0.attempts.count == 1 }, "only the failed test runs again")
        let junit = try String(contentsOfFile: dir.file("report/junit.xml"), encoding: .utf8)
        #expect(junit.contains("<flakyFailure"))
        #expect(ConsoleSummary(color: false).render(outcome.report).lowercased().contains("flaky"))
        let json = try String(contentsOfFile: dir.file("report/report.json"), encoding: .utf8)
        #expect(json.contains("\"flaky\""))
        let (code, out, _) = try await runCLI(["history", "flaky", "--history", settings.historyPath])
        #expect(code == 0)
        #expect(out.contains("IntegrationTests.RetryableFetchTests/testFetchWithFlakyBackend"))
        #expect(out.contains("50.0%") && out.contains("1/2"), "one failure in two attempts, on a build it passed on: \(out)")
        // The build's identity, which makes two runs of it comparable: the SHA-256 of the test binary.
        let sha = try #require(outcome.report.product.sha256)
        let (_, sum, _) = await LocalTransport(slots: 1).capture(Command(executable: "/usr/bin/sha256sum", arguments: [bundle]))
        #expect(String(decoding: sum, as: UTF8.self).hasPrefix(sha + " "), "sha256sum agrees: \(sha)")
    }

    @Test func aTestThatFailsEveryAttemptIsFailedWithEveryAttemptsMessages() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        var settings = demoSettings(bundle: bundle, dir: dir, filters: ["ArithmeticTests"], env: ["DEMO_FAIL": "1"])
        settings.retries = 2
        settings.keepWhole = ["ArithmeticTests"] // one process per try: idle slots do not take over its tests
        let outcome = try await Coordinator(settings: settings).run()
        #expect(outcome.exitCode == .testFailures)
        let failed = try #require(outcome.report.result("DemoKitTests.ArithmeticTests/testMultiply"))
        #expect(failed.outcome == .failed)
        #expect(failed.attempts.count == 3)
        #expect(failed.issues.filter { $0.message.contains("deliberate failure") }.count == 3)
        #expect(outcome.report.counts.failed == 1)
        #expect(outcome.report.units.count == 3, "the class, then two retries of the one failed test")
    }
}

@Suite(.serialized, .timeLimit(.minutes(10))) struct SplitRunTests {
    @Test func aSplitClassRunsInPiecesAndIsReportedAsOneClass() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        var settings = demoSettings(bundle: bundle, dir: dir, filters: ["DatabaseMigrationTests", "GCDTests", "PrimeTests"],
                                    slots: 4)
        let first = try await Coordinator(settings: settings).run()   // teaches the history
        #expect(first.exitCode == .success)
        let second = try await Coordinator(settings: settings).run()
        let migration = second.report.units.filter { $0.suites.contains { $0.hasPrefix("IntegrationTests.DatabaseMigrationTests (") } }
        #expect(migration.count >= 2, "the 8 s class ran in pieces: \(second.report.units.map(\.suites))")
        let classes = second.report.classes.filter { $0.suite.name == "DatabaseMigrationTests" }
        #expect(classes.count == 1, "merged back into one class")
        #expect(classes.first?.testCount == 8)
        #expect(classes.first?.estimateSource.contains("split in") == true)
        #expect(classes.first?.timingIsComplete == true, "every piece ran normally: its time still teaches the history")
        #expect(second.report.results.filter { $0.id.suite.name == "DatabaseMigrationTests" }.count == 8)

        settings.keepWhole = ["DatabaseMigration"]
        let kept = try await Coordinator(settings: settings).run()
        #expect(kept.report.units.filter { $0.suites.contains("IntegrationTests.DatabaseMigrationTests") }.count == 1)
    }
}
