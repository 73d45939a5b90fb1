import FanoutAgents
@testable import FanoutCoordinator
import FanoutCore
import FanoutReports
import Foundation
import Testing

/// Runs of the real demo suite's performance test (`DemoKitTests.PerformanceTests/testMeasureSorting`, 10 × ~15 ms;
/// DEMO_PERF_SLOW=1 adds 0.3 s per iteration, DEMO_PERF_NOISY=1 alternates 0.01 s and 0.4 s), judged against
/// baselines accepted through the CLI.
@Suite(.serialized, .timeLimit(.minutes(5))) struct BaselineTests {
    static let perfTest = "DemoKitTests.PerformanceTests/testMeasureSorting"

    /// A run of the performance tests only, its report in `dir/<name>`, judged against `dir/baselines.json`.
    func settings(_ bundle: String, _ dir: TempDir, _ name: String, env: [String: String] = [:],
                  failOnRegression: Bool = false) -> RunSettings {
        var s = demoSettings(bundle: bundle, dir: dir, filters: ["PerformanceTests"], env: env, slots: 2)
        s.reportDirectory = dir.file(name)
        s.baselinesPath = dir.file("baselines.json")
        s.failOnPerfRegression = failOnRegression
        s.recordHistory = false
        return s
    }

    /// `Coordinator.run()` exactly as a user's run goes: the coordinator itself judges every measurement against
    /// the baselines of its destination and hardware class, and writes the files with the verdicts. Nothing is
    /// judged here, so a coordinator that stopped judging fails these tests.
    func judgedRun(_ settings: RunSettings) async throws -> FinishedRun {
        let outcome = try await Coordinator(settings: settings).run()
        #expect(!outcome.report.measurements.isEmpty, "the performance test measured")
        #expect(outcome.report.measurements.allSatisfy { $0.verdict != nil }, "the coordinator judged every measurement")
        return outcome
    }

    func measurement(_ report: RunReport) throws -> MeasurementRecord {
        try #require(report.measurements.first { $0.measurement.test.description == Self.perfTest },
                     "no measurement of \(Self.perfTest) in \(report.measurements.map(\.measurement.test))")
    }

    func read(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test func plantedRegressionIsCaughtAgainstAnAcceptedBaseline() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()

        // 1. A normal run: no baseline yet, recorded only.
        let normal = try await judgedRun(settings(bundle, dir, "normal"))
        #expect(normal.exitCode == .success)
        let first = try measurement(normal.report)
        #expect(first.verdict?.kind == .recorded, "\(first.verdict?.message ?? "not judged")")
        #expect(first.measurement.values.count == 10)

        // 2. Accept it through the CLI.
        let (code, out, err) = try await runCLI(["baseline", "accept", "--from", dir.file("normal/report.json"),
                                                 "--test", "PerformanceTests/", "--baselines", dir.file("baselines.json")])
        #expect(code == 0, "\(out)\n\(err)")
        #expect(out.contains("Accepted 1 baseline from run \(normal.report.runID)"), "\(out)")
        #expect(out.contains(Self.perfTest))
        let file = try BaselineFile.load(dir.file("baselines.json"))
        let baseline = try #require(file.baselines.first)
        #expect(file.baselines.count == 1)
        #expect(baseline.destination == "local")
        #expect(baseline.hardwareClass == (first.hardwareClass ?? Baseline.unknownHardwareClass))
        #expect(abs(baseline.average - first.measurement.meanOfValues) < 1e-9)
        #expect(baseline.average > 0.010 && baseline.average < 0.1, "~15 ms per iteration: \(baseline.average)")

        // `show` lists it.
        let (showCode, shown, _) = try await runCLI(["baseline", "show", "--baselines", dir.file("baselines.json")])
        #expect(showCode == 0)
        #expect(shown.contains("1 baseline") && shown.contains(Self.perfTest) && shown.contains("local"), "\(shown)")

        // 3. The same code again: within the baseline.
        let again = try await judgedRun(settings(bundle, dir, "again"))
        #expect(try measurement(again.report).verdict?.kind == .passed)
        #expect(again.exitCode == .success)

        // 4. Slowed by 0.3 s per iteration: a regression, reported everywhere; it does not fail the run by default.
        let slow = try await judgedRun(settings(bundle, dir, "slow", env: ["DEMO_PERF_SLOW": "1"]))
        let regressed = try measurement(slow.report)
        let verdict = try #require(regressed.verdict)
        #expect(verdict.kind == .regression, "\(verdict.message)")
        #expect(verdict.baselineAverage == baseline.average)
        #expect((verdict.change ?? 0) > 1, "0.3 s over ~15 ms is far more than 10%")
        #expect(!verdict.failsRun)
        #expect(slow.exitCode == .success, "without --fail-on-perf-regression the verdict is reported only")
        let json = try read(dir.file("slow/report.json"))
        #expect(json.contains("\"kind\" : \"regression\""))
        let junit = try read(dir.file("slow/junit.xml"))
        #expect(junit.contains("<property name=\"performance.Time.verdict\" value=\"regression\"/>"))
        #expect(junit.contains("REGRESSION: average"))
        #expect(!junit.contains("performance-regression"), "no failure element without the flag")
        let summary = ConsoleSummary(color: false, width: 200).render(slow.report)
        #expect(summary.contains("\(Self.perfTest): Time"), "\(summary)")
        #expect(summary.contains("· REGRESSION against"), "\(summary)")
        #expect(summary.contains("PERFORMANCE · 1 regression: \(Self.perfTest)"), "\(summary)")

        // 5. With --fail-on-perf-regression: exit 1, and a failure on the test case.
        let failing = try await judgedRun(settings(bundle, dir, "failing", env: ["DEMO_PERF_SLOW": "1"],
                                                   failOnRegression: true))
        #expect(failing.exitCode == .testFailures)
        #expect(failing.report.exitCode == 1)
        #expect(try measurement(failing.report).verdict?.failsRun == true)
        #expect(failing.report.counts.failures == 0, "every test itself passed")
        let failingJUnit = try read(dir.file("failing/junit.xml"))
        #expect(failingJUnit.contains("type=\"performance-regression\""))
        #expect(try read(dir.file("failing/report.json")).contains("\"failsRun\" : true"))
        #expect(ConsoleSummary(color: false).render(failing.report)
            .contains("FAILED · 1 performance regression fails the run; every test passed · exit 1"))
    }

    /// Three runs recorded in one history: the third report.json carries the two earlier results of its metric (run
    /// ids, dates, averages, the baseline each was judged against) and its pages draw them, from report.json alone.
    @Test func theThirdRecordedRunCarriesTheTrendOfTheTwoBeforeAndDrawsIt() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        func recorded(_ name: String, env: [String: String] = [:], failOnRegression: Bool = false) -> RunSettings {
            var s = settings(bundle, dir, name, env: env, failOnRegression: failOnRegression)
            s.recordHistory = true
            return s
        }
        let first = try await judgedRun(recorded("first"))
        #expect(try measurement(first.report).trend == nil, "no history yet: no trend, and none invented")
        let (code, out, err) = try await runCLI(["baseline", "accept", "--from", dir.file("first/report.json"),
                                                 "--baselines", dir.file("baselines.json")])
        #expect(code == 0, "\(out)\n\(err)")
        let second = try await judgedRun(recorded("second"))
        #expect(try measurement(second.report).trend?.runs.map(\.runID) == [first.report.runID])

        // The third is slowed by 0.3 s per iteration and fails the run on the regression.
        let third = try await judgedRun(recorded("third", env: ["DEMO_PERF_SLOW": "1"], failOnRegression: true))
        #expect(third.exitCode == .testFailures)
        let written = try JSONReportReader().read(from: URL(fileURLWithPath: dir.file("third/report.json")))
        let record = try measurement(written)
        let trend = try #require(record.trend, "the third report carries its trend")
        #expect(trend.runs.map(\.runID) == [first.report.runID, second.report.runID], "oldest first, itself excluded")
        #expect(trend.runs.map(\.startedAt) == [first.report.startedAt, second.report.startedAt])
        let averages = try [first, second].map { try measurement($0.report).measurement.meanOfValues }
        #expect(zip(trend.runs.map(\.average), averages).allSatisfy { abs($0 - $1) < 1e-9 }, "\(trend.runs)")
        let accepted = try #require(try measurement(second.report).verdict?.baselineAverage)
        #expect(trend.runs.map(\.baseline) == [nil, accepted], "each run's baseline at the time")
        let verdict = try #require(record.verdict)
        #expect(verdict.kind == .regression && verdict.baselineAverage == accepted)
        #expect(verdict.regressionAbove.map { $0 > accepted } == true)

        let html = try read(dir.file("third/report.html"))
        #expect(html.components(separatedBy: "<svg class=\"trend\"").count - 1 == 1, "one chart: one metric")
        #expect(html.components(separatedBy: "<circle class=\"point ").count - 1 == 3, "three points")
        #expect(html.components(separatedBy: "<circle class=\"point past\"").count - 1 == 2)
        #expect(html.contains("<circle class=\"point this-run regression\""))
        #expect(html.contains("<line class=\"baseline\"") && html.contains("<rect class=\"allowed\""))
        #expect(html.contains("run \(first.report.runID) · "))
        let summary = try read(dir.file("third/summary.md"))
        #expect(summary.contains("\\(2 earlier runs, then this one\\)"), "\(summary)")
        // The page is the same when drawn again from report.json alone.
        let (hc, _, herr) = try await runCLI(["report", "html", "--from", dir.file("third/report.json"),
                                              "--out", dir.file("again.html")])
        #expect(hc == 0, "\(herr)")
        #expect(try read(dir.file("again.html")) == html)
    }

    @Test func plantedNoisyMeasurementIsFlagged() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let noisy = try await judgedRun(settings(bundle, dir, "noisy", env: ["DEMO_PERF_NOISY": "1"]))
        let record = try measurement(noisy.report)
        let verdict = try #require(record.verdict)
        #expect(verdict.kind == .tooNoisy, "\(verdict.message)")
        #expect(verdict.message.contains("too noisy to judge"))
        // XCTest on Linux fails such a measurement itself (RSD > 10% and SD > 0.1 s): both say the same thing.
        #expect(noisy.report.result(Self.perfTest)?.outcome == .failed)
        #expect(record.measurement.sampleStandardDeviation > 0.1)
        #expect(try read(dir.file("noisy/report.json")).contains("\"kind\" : \"too-noisy\""))
        #expect(try read(dir.file("noisy/junit.xml")).contains("TOO NOISY"))
        #expect(ConsoleSummary(color: false, width: 200).render(noisy.report).contains("· TOO NOISY (no baseline)"))

        // A noisy measurement is no baseline.
        let (code, _, err) = try await runCLI(["baseline", "accept", "--from", dir.file("noisy/report.json"),
                                               "--baselines", dir.file("baselines.json")])
        #expect(code == 2, "\(err)")
        #expect(err.contains("not accepted: \(Self.perfTest) on local"), "\(err)")
        #expect(err.contains("nothing accepted"), "\(err)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("baselines.json")))
    }

    @Test func baselinesOfAnotherDestinationOrHardwareClassAreNeverApplied() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        // Baselines that the local measurement (~15 ms) would regress against by far, had they applied.
        let probe = try await judgedRun(settings(bundle, dir, "probe"))
        let local = try measurement(probe.report)
        let hardware = local.hardwareClass ?? Baseline.unknownHardwareClass
        let id = local.measurement.test
        let metric = local.measurement.metricKey
        try BaselineFile(baselines: [
            Baseline(test: id, metric: metric, destination: "other", hardwareClass: hardware, average: 0.0001),
            Baseline(test: id, metric: metric, destination: "local", hardwareClass: hardware + " (another machine)",
                     average: 0.0001),
            Baseline(test: id, metric: "org.swift.XCTPerformanceMetric_Other", destination: "local",
                     hardwareClass: hardware, average: 0.0001),
        ]).save(dir.file("baselines.json"))

        let slow = try await judgedRun(settings(bundle, dir, "slow", env: ["DEMO_PERF_SLOW": "1"],
                                                failOnRegression: true))
        let verdict = try #require(try measurement(slow.report).verdict)
        #expect(verdict.kind == .recorded, "\(verdict.message)")
        #expect(verdict.baselineAverage == nil)
        #expect(slow.exitCode == .success)

        // Accepting for "local" adds a baseline beside the others and leaves them as they were.
        let (code, out, err) = try await runCLI(["baseline", "accept", "--from", dir.file("probe/report.json"),
                                                 "--baselines", dir.file("baselines.json")])
        #expect(code == 0, "\(out)\n\(err)")
        #expect(out.contains("(1 new, 0 replaced)"), "\(out)")
        let file = try BaselineFile.load(dir.file("baselines.json"))
        #expect(file.baselines.count == 4)
        #expect(file.baselines.filter { $0.average == 0.0001 }.count == 3)
        let (_, shown, _) = try await runCLI(["baseline", "show", "--baselines", dir.file("baselines.json"),
                                              "--destination", "other"])
        #expect(shown.contains("1 baseline on other"), "\(shown)")
    }
}

/// The baselines file and the `performance:` config block, without running tests.
@Suite(.timeLimit(.minutes(10))) struct BaselineFileTests {
    static let id = TestID(module: "M", suite: "C", name: "testPerf")

    func record(_ values: [Double], destination: String = "local", hardware: String? = "Xeon × 2",
                test: TestID = Self.id) -> MeasurementRecord {
        let m = FanoutCore.Measurement(test: test, metric: "Time", unit: "seconds",
                                       identifier: "org.swift.XCTPerformanceMetric_WallClockTime", values: values,
                                       average: values.reduce(0, +) / Double(values.count),
                                       relativeStandardDeviation: 0)
        return MeasurementRecord(destination: destination, agent: "local", measurement: m, hardwareClass: hardware)
    }

    func report(_ measurements: [MeasurementRecord], runID: String = "run-1") -> RunReport {
        RunReport(runID: runID, fanoutVersion: "0.1.0", startedAt: Date(timeIntervalSince1970: 0),
                  finishedAt: Date(timeIntervalSince1970: 1), interrupted: false,
                  product: ProductInfo(package: nil, bundle: "/b"), destinations: ["local"], agents: [],
                  plan: PlanReport(slots: 1, lowerBound: 0, predictedMakespan: 0, totalEstimate: 0), units: [],
                  classes: [], results: [], measurements: measurements, warnings: [],
                  timing: Timing(wall: 1, preparation: 0, makespan: 1, lowerBound: 1), exitCode: 0)
    }

    @Test func aMissingFileIsNoBaselines() throws {
        let dir = try TempDir()
        #expect(try BaselineFile.load(dir.file("nope.json")).baselines.isEmpty)
    }

    @Test(arguments: [
        ("{", "not valid JSON"),
        ("{\"baselines\": []}", "it has no \"version\""),
        ("{\"version\": 2, \"baselines\": []}", "is a version 2 baselines file, but this fanout reads version 1"),
        ("{\"version\": 1, \"baselines\": [{\"test\": 1}]}", "baselines[0].test"),
        ("{\"version\": 1}", "baselines: required field is missing"),
    ])
    func anInvalidFileIsAnErrorNamingTheFileAndTheProblem(text: String, problem: String) throws {
        let dir = try TempDir()
        let path = dir.file("fanout-baselines.json")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            _ = try BaselineFile.load(path)
        } throws: { error in
            guard let e = error as? FanoutError else { return false }
            return e.exitCode == .usage && e.message.contains(path) && e.message.contains(problem)
        }
    }

    @Test func aNegativeAverageIsRefused() throws {
        let data = Data("""
            {"version": 1, "baselines": [{"test": {"suite": {"module": "M", "name": "C"}, "name": "t"},
             "metric": "m", "destination": "d", "hardwareClass": "", "average": -1}]}
            """.utf8)
        #expect(throws: FanoutError.self) { try BaselineFile.decode(data, source: "b.json") }
    }

    @Test func savedFileIsVersionedPrettySortedAndReadsBack() throws {
        let dir = try TempDir()
        var file = BaselineFile()
        _ = try file.accept(from: report([
            record([0.02, 0.02], destination: "zeta"),
            record([0.01, 0.01], destination: "alpha"),
            record([0.03, 0.03], hardware: nil),
        ]), testPattern: nil)
        let path = dir.file("sub/fanout-baselines.json")
        try file.save(path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasSuffix("}\n"))
        #expect(text.contains("\"version\" : 1"))
        #expect(text.contains("\n  \"baselines\" : [\n    {\n      \"average\" : "), "pretty, keys sorted:\n\(text)")
        let destinations = file.baselines.map(\.destination)
        #expect(destinations == ["alpha", "local", "zeta"], "sorted by test, metric, destination, hardware class")
        #expect(file.baselines.first { $0.destination == "local" }?.hardwareClass == "", "unknown hardware class")
        #expect(try BaselineFile.load(path) == file)
        // Saving the same baselines again gives the same bytes (clean diffs).
        try BaselineFile.load(path).save(path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.file("sub"))
        #expect(leftovers == ["fanout-baselines.json"], "the atomic write leaves no temporary file")
    }

    @Test func acceptReplacesTheSameKeyAndKeepsTheRest() throws {
        var file = BaselineFile()
        let other = TestID(module: "M", suite: "C", name: "testOther")
        _ = try file.accept(from: report([record([0.01, 0.01]), record([0.05, 0.05], test: other)]), testPattern: nil)
        let result = try file.accept(from: report([record([0.02, 0.02]), record([0.09, 0.09], test: other),
                                                   record([0.03, 0.03], destination: "ci")], runID: "run-2"),
                                     testPattern: "testPerf$")
        #expect(result.accepted.count == 2)
        #expect(result.replaced == 1)
        #expect(file.baselines.count == 3)
        let local = try #require(file.baselines.first { $0.test == Self.id && $0.destination == "local" })
        #expect(abs(local.average - 0.02) < 1e-12)
        #expect(local.runID == "run-2")
        #expect(local.maxStandardDeviation == nil, "the allowed deviation stays the rule's, as in Xcode")
        #expect(local.standardDeviation == 0)
        #expect(local.unit == "seconds")
        let kept = try #require(file.baselines.first { $0.test == other })
        #expect(abs(kept.average - 0.05) < 1e-12, "not matched by --test: unchanged")
    }

    @Test func acceptRefusesNoiseBadPatternsAndNoMatch() throws {
        var file = BaselineFile()
        let noisy = try file.accept(from: report([record([0.01, 0.4, 0.01, 0.4]), record([0.02, 0.02], test:
            TestID(module: "M", suite: "C", name: "testSteady"))]), testPattern: nil)
        #expect(noisy.tooNoisy.count == 1)
        #expect(noisy.accepted.map(\.test.name) == ["testSteady"])
        #expect(throws: FanoutError.self) { try file.accept(from: report([record([0.01])]), testPattern: "(") }
        #expect {
            try file.accept(from: report([record([0.01])]), testPattern: "NoSuchTest")
        } throws: { ($0 as? FanoutError)?.message.contains("has no measurement of a test matching 'NoSuchTest'") == true }
        #expect(throws: FanoutError.self) { try file.accept(from: report([]), testPattern: nil) }
    }

    @Test func judgeFailsTheRunOnlyWithTheFlagAndKeepsWorseCodes() throws {
        let dir = try TempDir()
        try BaselineFile(baselines: [
            Baseline(test: Self.id, metric: "org.swift.XCTPerformanceMetric_WallClockTime", destination: "local",
                     hardwareClass: "Xeon × 2", average: 0.01),
        ]).save(dir.file("b.json"))
        var settings = RunSettings()
        settings.baselinesPath = dir.file("b.json")
        var r = report([record([0.5, 0.5])])
        #expect(try BaselineJudge.judge(&r, settings: settings))
        #expect(r.exitCode == 0 && r.measurements[0].verdict?.kind == .regression)
        #expect(r.measurements[0].verdict?.failsRun == false)
        settings.failOnPerfRegression = true
        for (before, after) in [(Int32(0), Int32(1)), (3, 1), (1, 1), (130, 130), (143, 143)] {
            var judged = report([record([0.5, 0.5])])
            judged.exitCode = before
            #expect(try BaselineJudge.judge(&judged, settings: settings))
            #expect(judged.exitCode == after, "exit \(before) → \(judged.exitCode)")
            #expect(judged.measurements[0].verdict?.failsRun == true)
        }
        var fine = report([record([0.01, 0.01])])
        #expect(try BaselineJudge.judge(&fine, settings: settings) == false)
        #expect(fine.exitCode == 0)
        // An invalid baselines file is a usage error; after a run, a warning on its report.
        try "nonsense".write(toFile: dir.file("b.json"), atomically: true, encoding: .utf8)
        #expect(throws: FanoutError.self) { try BaselineJudge.judge(&fine, settings: settings) }
        var finished = report([record([0.5, 0.5])])
        #expect(BaselineJudge.judgeFinishedRun(&finished, settings: settings, exit: .success) == .success)
        #expect(finished.warnings.count == 1)
        #expect(finished.warnings.first?.hasPrefix("performance verdicts were not given: \(dir.file("b.json"))") == true)
        #expect(finished.measurements[0].verdict == nil)
    }

    @Test func theFinishedRunHookReturnsTheExitCode() throws {
        let dir = try TempDir()
        try BaselineFile(baselines: [
            Baseline(test: Self.id, metric: "org.swift.XCTPerformanceMetric_WallClockTime", destination: "local",
                     hardwareClass: "Xeon × 2", average: 0.01),
        ]).save(dir.file("b.json"))
        var settings = RunSettings()
        settings.baselinesPath = dir.file("b.json")
        settings.failOnPerfRegression = true
        var r = report([record([0.5, 0.5])])
        #expect(BaselineJudge.judgeFinishedRun(&r, settings: settings, exit: .success) == .testFailures)
        #expect(r.exitCode == 1)
        var notFlagged = report([record([0.5, 0.5])])
        settings.failOnPerfRegression = false
        #expect(BaselineJudge.judgeFinishedRun(&notFlagged, settings: settings, exit: .success) == .success)
        #expect(notFlagged.measurements[0].verdict?.kind == .regression)
    }

    @Test func configBlockSetsThresholdsAndOverrides() throws {
        let rules = try BaselineFile.parseRules(yaml: """
            performance:
              regression: { relative: 0.2, absolute: 0.05 }
              noise: { absolute: 0.3 }
              tests:
                - match: 'DemoKitTests.PerformanceTests/testMeasureSorting'
                  regression: { relative: 0.5 }
                - match: '^NetworkTests\\.'
                  noise: { relative: 0.25, absolute: 1 }
            """, file: "fanout.yml")
        #expect(rules.relativeRegression == 0.2 && rules.absoluteRegression == 0.05)
        #expect(rules.relativeNoise == 0.10 && rules.absoluteNoise == 0.3)
        #expect(rules.overrides == [
            .init(test: "DemoKitTests.PerformanceTests/testMeasureSorting", relativeRegression: 0.5),
            .init(test: "^NetworkTests\\.", relativeNoise: 0.25, absoluteNoise: 1),
        ])
        #expect(try BaselineFile.parseRules(yaml: "", file: "f.yml") == PerformanceRules())
    }

    @Test(arguments: [
        ("performance:\n  regresion: { relative: 0.2 }\n", "f.yml:2", "unknown key 'performance.regresion'"),
        ("performance:\n  regression: { relative: -1 }\n", "f.yml:2", "must be a number from 0.0 to 100.0"),
        ("performance:\n  noise: { seconds: 1 }\n", "f.yml:2", "unknown key 'performance.noise.seconds'"),
        ("performance:\n  noise: {}\n", "f.yml:2", "needs relative:"),
        ("performance:\n  tests:\n    - regression: { relative: 1 }\n", "f.yml:3", "needs a match"),
        ("performance:\n  tests:\n    - match: 'a('\n      noise: { absolute: 1 }\n", "f.yml:3", "not a valid regular expression"),
        ("performance:\n  tests:\n    - match: x\n", "f.yml:3", "sets no threshold"),
    ])
    func configErrorsNameTheFileLineAndKey(text: String, place: String, message: String) {
        #expect {
            _ = try BaselineFile.parseRules(yaml: text, file: "f.yml")
        } throws: { error in
            guard let e = error as? FanoutError else { return false }
            return e.message.contains(place) && e.message.contains(message)
        }
    }
}
