import FanoutCore
import FanoutTestSupport
@testable import FanoutHistory
import Foundation
import Testing

/// `fanout history export` / `import`: the history travels as a file and comes back the same.
@Suite("Exporting and importing the history", .timeLimit(.minutes(2)))
struct HistoryTransferTests {
    let login = SuiteID(module: "AppTests", name: "LoginTests")

    /// Three runs on two destinations with everything the store keeps: units, a flaky test, a crashed class, a
    /// measurement with a NaN deviation, a failure message, and a start time with milliseconds.
    func sampleStore(retention: Int = HistoryStore.defaultRetention) throws -> HistoryStore {
        let store = try HistoryStore.inMemory(retention: retention)
        for minute in 0..<3 {
            var run = ReportBuilder("run-\(minute)", minute: minute)
            run.addClass("LoginTests", tests: 3, actual: 1.5 + Double(minute))
            run.addClass("CartTests", tests: 2, actual: 0.4, outcome: .crashed, complete: false)
            run.addClass("LoginTests", tests: 3, actual: 4.5 * Double(minute + 1), destination: "release")
            run.addTest(TestID(suite: login, name: "testShaky"), outcome: minute == 1 ? .flaky : .passed,
                        attempts: minute == 1 ? [(.failed, 0.2), (.passed, 0.3)] : [(.passed, 0.25)])
            run.addUnit(id: 1, suites: ["AppTests.LoginTests"], duration: 2)
            run.addMeasurement(TestID(suite: login, name: "testSpeed"), values: [0.1, 0.2, Double(minute)])
            var report = run.build(exitCode: 1)
            report.startedAt = report.startedAt.addingTimeInterval(0.123)
            report.measurements[0].measurement.relativeStandardDeviation = .nan
            try store.record(report)
        }
        return store
    }

    /// Every query the estimator, `history show`, `history flaky` and baselines make, for comparing two stores.
    struct Answers: Equatable {
        var local, release: TimingHistory
        var flaky: [FlakyStat]
        var runs: [RunSummary]
        var classes: [ClassStat]
        /// As text: a deviation stored as NULL comes back as NaN, which never equals itself.
        var measurements: [String]
    }

    func answers(_ store: HistoryStore) throws -> Answers {
        Answers(local: try store.timingHistory(destination: "local"),
                release: try store.timingHistory(destination: "release"),
                flaky: try store.flakyTests(runs: 20), runs: try store.recentRuns(limit: 20),
                classes: try store.classStats(destination: nil),
                measurements: try store.measurements(of: TestID(suite: login, name: "testSpeed"),
                                                     destination: "local").map { "\($0)" })
    }

    @Test func exportThenImportIntoAFreshStoreGivesTheSameHistory() throws {
        let original = try sampleStore()
        let export = HistoryExport(exportedAt: Date(timeIntervalSince1970: 1_800_000_000),
                                   fanoutVersion: "test", runs: try original.exportRuns())
        let decoded = try HistoryExport.decode(try export.encoded(), path: "export.json")
        // Dates read back from SQLite are within a microsecond of the millisecond written, so compare the bytes.
        #expect(try decoded.encoded() == export.encoded())

        let copy = try HistoryStore.inMemory()
        let summary = try copy.importRuns(decoded.runs)
        #expect(summary.imported == ["run-0", "run-1", "run-2"])
        #expect(summary.alreadyPresent.isEmpty)
        #expect(try answers(copy) == answers(original))
        #expect(try copy.exportRuns() == original.exportRuns())
        #expect(try copy.tableSizes() == original.tableSizes())

        // What the estimator sees is really there, not two empty histories compared.
        let local = try copy.timingHistory(destination: "local")
        #expect(local.classes[login]?.map(\.duration) == [3.5, 2.5, 1.5])
        #expect(try copy.flakyTests().map(\.test.name) == ["testShaky"])
        let newest = try #require(try copy.recentRuns().first?.startedAt.timeIntervalSince1970)
        #expect(abs(newest - 1_800_000_120.123) < 0.000_5, "milliseconds survive the trip")
    }

    @Test func exportThenImportKeepsWhatPerformanceTrendsNeed() throws {
        let original = try HistoryStore.inMemory()
        let test = TestID(suite: login, name: "testMeasureLogin")
        for minute in 0..<3 {
            var run = ReportBuilder("run-\(minute)", minute: minute)
            run.addMeasurement(test, values: [Double(minute) + 1], hardwareClass: "Intel Xeon × 8", baseline: minute > 0 ? 1.5 : nil)
            try original.record(run.build())
        }
        let copy = try HistoryStore.inMemory()
        _ = try copy.importRuns(try HistoryExport.decode(
            try HistoryExport(exportedAt: Date(), fanoutVersion: "test", runs: try original.exportRuns()).encoded(),
            path: "export.json").runs)
        let trend = try copy.measurementTrend(of: test, metric: "org.swift.XCTPerformanceMetric_WallClockTime",
                                              destination: "local", hardwareClass: "Intel Xeon × 8", excludingRun: "none")
        #expect(trend.map(\.runID) == ["run-2", "run-1", "run-0"], "hardware classes survive the trip")
        #expect(trend.map(\.baseline) == [1.5, 1.5, nil], "and the baselines the results were judged against")
        #expect(trend.map(\.measurement.values) == [[3], [2], [1]])
    }

    @Test func theFileIsVersionedStableJSON() throws {
        let export = HistoryExport(exportedAt: Date(timeIntervalSince1970: 1_800_000_000),
                                   fanoutVersion: "test", runs: try sampleStore().exportRuns())
        let data = try export.encoded()
        #expect(data == (try export.encoded()), "two encodings are byte-identical")
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["format"] as? String == "fanout-history")
        #expect(object["version"] as? Int == 1)
        #expect(object["exportedAt"] as? String == "2027-01-15T08:00:00.000Z")
        let runs = try #require(object["runs"] as? [[String: Any]])
        #expect(runs.map { $0["runID"] as? String } == ["run-0", "run-1", "run-2"], "oldest first")
        #expect(runs.first?["startedAt"] as? String == "2027-01-15T08:00:00.123Z")
        // A NaN deviation is written as a string, never making the export unwritable.
        let measurement = try #require((runs.first?["measurements"] as? [[String: Any]])?.first)
        #expect(measurement["relativeStandardDeviation"] == nil, "stored as NULL, so left out")
        #expect(measurement["samples"] as? [Double] == [0.1, 0.2, 0])
    }

    @Test func importingTheSameExportTwiceAddsNothing() throws {
        let runs = try sampleStore().exportRuns()
        let store = try HistoryStore.inMemory()
        _ = try store.importRuns(runs)
        let before = try store.tableSizes()
        let again = try store.importRuns(runs)
        #expect(again.imported.isEmpty)
        #expect(again.alreadyPresent == ["run-0", "run-1", "run-2"])
        #expect(again.description == "imported 0 runs, 3 already present")
        #expect(try store.tableSizes() == before)
        // One file given twice in one import counts its runs once too.
        let fresh = try HistoryStore.inMemory()
        let doubled = try fresh.importRuns(runs + runs)
        #expect(doubled.description == "imported 3 runs, 3 already present")
        #expect(try fresh.tableSizes() == before)
    }

    @Test func mergingTheExportsOfTwoShardJobsGivesTheUnion() throws {
        // Both jobs started from run-0 (the history they imported), then each recorded its own shard.
        let shared = try sampleStore().exportRuns().filter { $0.runID == "run-0" }
        var jobs: [[HistoryRun]] = []
        for shard in 1...2 {
            let job = try HistoryStore.inMemory()
            _ = try job.importRuns(shared)
            var run = ReportBuilder("shard-\(shard)", minute: 10)
            run.addClass(shard == 1 ? "LoginTests" : "CartTests", actual: Double(shard))
            try job.record(run.build())
            jobs.append(try job.exportRuns())
        }
        let merged = try HistoryStore.inMemory()
        let summary = try merged.importRuns(jobs[0] + jobs[1])
        #expect(summary.description == "imported 3 runs, 1 already present")
        #expect(Set(try merged.recentRuns().map(\.runID)) == ["run-0", "shard-1", "shard-2"])
        let local = try merged.timingHistory(destination: "local")
        #expect(local.classes[login]?.map(\.duration) == [1, 1.5])
        #expect(local.classes[SuiteID(module: "AppTests", name: "CartTests")]?.map(\.duration) == [2])
    }

    @Test func importKeepsOnlyTheNewestRunsRetentionAllows() throws {
        let runs = try sampleStore().exportRuns()
        let store = try HistoryStore.inMemory(retention: 2)
        let summary = try store.importRuns(runs)
        #expect(summary.imported == ["run-1", "run-2"])
        #expect(summary.droppedByRetention == ["run-0"])
        #expect(summary.description.contains("1 older than the runs kept"))
        #expect(try store.recentRuns().map(\.runID) == ["run-2", "run-1"])
    }

    @Test func theNewestRunsOnlyWhenAsked() throws {
        #expect(try sampleStore().exportRuns(limit: 2).map(\.runID) == ["run-1", "run-2"])
    }

    @Test func cpuMemoryAndTimeOutsTravelThroughExportAndImport() throws {
        let original = try HistoryStore.inMemory()
        let killed = TestID(suite: login, name: "testHeavy")
        for minute in 0..<2 {
            var run = ReportBuilder("run-\(minute)", minute: minute)
            run.addClass("LoginTests", tests: 2, actual: 4)
            run.classes[0].cpuSeconds = 6 + Double(minute)
            run.addTest(killed, outcome: .timedOut, attempts: [(.timedOut, 60 + Double(minute))])
            run.addUnit(id: 1, suites: ["AppTests.LoginTests"], duration: 65, cpuSeconds: 70.5,
                        peakMemoryBytes: 3_000_000_000 + Int64(minute))
            var report = run.build()
            report.agents[0].cores = 2
            let index = try #require(report.results.firstIndex { $0.id == killed })
            report.results[index].attempts[0].cpuSeconds = 0.25
            try original.record(report)
        }
        let data = try HistoryExport(exportedAt: Date(timeIntervalSince1970: 1_800_000_000), fanoutVersion: "test",
                                     runs: try original.exportRuns()).encoded()
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let run = try #require((object["runs"] as? [[String: Any]])?.first)
        let unit = try #require((run["units"] as? [[String: Any]])?.first)
        #expect(unit["cpuSeconds"] as? Double == 70.5)
        #expect(unit["peakMemoryBytes"] as? Int == 3_000_000_000)
        #expect(unit["cores"] as? Int == 2)
        #expect(Set(unit.keys) == ["agent", "cores", "cpuSeconds", "destination", "duration", "ending", "estimate",
                                   "framework", "id", "peakMemoryBytes", "slot", "startedAt", "suites", "testCount"],
                "one flat object: the unit's summary and the history's own keys side by side")
        #expect((run["classes"] as? [[String: Any]])?.first?["cpuSeconds"] as? Double == 6)

        let copy = try HistoryStore.inMemory()
        _ = try copy.importRuns(try HistoryExport.decode(data, path: "export.json").runs)
        #expect(try copy.exportRuns() == original.exportRuns())
        let history = try copy.timingHistory(destination: "local")
        #expect(history == (try original.timingHistory(destination: "local")))
        #expect(history.censored[killed] == 61)
        #expect(history.cpuShare[login] == 1.625, "the median of 6/4 and 7/4")
        #expect(history.peakMemory[login] == 3_000_000_001)
        let attempt = try #require(try copy.exportRuns().first?.tests.first { $0.id == killed }?.attempts.first)
        #expect(attempt.cpuSeconds == 0.25 && attempt.duration == 60)
    }

    @Test func anExportWrittenBeforeCPUAndMemoryStillImports() throws {
        // A file of format version 1 as Fanout wrote it before these keys existed.
        let old = Data(#"""
            {"exportedAt":"2027-01-15T08:00:00.000Z","fanoutVersion":"0.9","format":"fanout-history","runs":[
             {"classes":[{"actual":2,"agent":"agent-1","destination":"local","estimate":1,"estimateSource":"test count",
               "framework":"xctest","module":"AppTests","outcome":"passed","suite":"LoginTests","testCount":1,
               "timingComplete":true}],
              "counts":{"crashed":0,"failed":0,"flaky":0,"notRun":0,"passed":1,"skipped":0,"timedOut":0,"total":1},
              "destinations":["local"],"exitCode":0,"fanoutVersion":"0.9","finishedAt":"2027-01-15T08:00:30.000Z",
              "interrupted":false,"measurements":[],"runID":"old","slots":2,"startedAt":"2027-01-15T08:00:00.000Z",
              "tests":[{"attempts":[{"agent":"agent-1","duration":2,"outcome":"passed","unit":1}],"destination":"local",
                "framework":"xctest","module":"AppTests","name":"test0","outcome":"passed","suite":"LoginTests"}],
              "units":[{"destination":"local","duration":2.5,"ending":"exit 0","estimate":1,"framework":"xctest",
                "id":1,"agent":"agent-1","slot":0,"startedAt":0,"suites":["AppTests.LoginTests"],"testCount":1}]}],
             "version":1}
            """#.utf8)
        let runs = try HistoryExport.decode(old, path: "old.json").runs
        #expect(runs.first?.units.first?.cpuSeconds == nil && runs.first?.units.first?.cores == nil)
        #expect(runs.first?.classes.first?.cpuSeconds == nil)
        #expect(runs.first?.tests.first?.attempts.first?.cpuSeconds == nil)
        let store = try HistoryStore.inMemory()
        #expect(try store.importRuns(runs).imported == ["old"])
        let history = try store.timingHistory(destination: "local")
        #expect(history.classes[login] == [ClassSample(duration: 2, testCount: 1)])
        #expect(history.cpuShare.isEmpty && history.peakMemory.isEmpty && history.censored.isEmpty)
        // And it is written back without keys it never had.
        let again = try HistoryExport(exportedAt: Date(), fanoutVersion: "test", runs: try store.exportRuns()).encoded()
        #expect(!String(decoding: again, as: UTF8.self).contains("cpuSeconds"))
    }

    // MARK: - Bad input

    @Test func badFilesGiveTheErrorThatSaysWhatWasWrong() throws {
        let folder = try TempDir()
        let good = try HistoryExport(exportedAt: Date(), fanoutVersion: "test", runs: sampleStore().exportRuns())
            .encoded()
        func write(_ name: String, _ data: Data) throws -> String {
            try data.write(to: URL(fileURLWithPath: folder.file(name)))
            return folder.file(name)
        }
        let truncated = try write("truncated.json", good.prefix(good.count / 2))
        let report = try write("report.json", Data(#"{"schemaVersion": 1, "runID": "x"}"#.utf8))
        let newer = try write("newer.json", Data(#"{"format": "fanout-history", "version": 2, "runs": []}"#.utf8))
        let missing = try write("missing.json", Data(#"""
            {"format": "fanout-history", "version": 1, "exportedAt": "2027-01-15T08:00:00.000Z",
             "fanoutVersion": "x", "runs": [{}]}
            """#.utf8))
        let xml = try write("junit.xml", Data("<testsuites/>".utf8))

        func error(_ path: String) -> HistoryFileError? {
            do {
                _ = try HistoryExport.read(from: path)
                return nil
            } catch {
                return error
            }
        }
        #expect(error(truncated).map { if case .notJSON = $0 { true } else { false } } == true)
        #expect(error(report) == .notAnExport(path: report))
        #expect(error(newer) == .newerVersion(path: newer, found: 2, supported: 1))
        #expect(error(folder.file("nothing.json")) == .unreadable(path: folder.file("nothing.json"),
                                                                   reason: "no such file"))
        #expect(error(folder.path) == .unreadable(path: folder.path, reason: "it is a folder, not a file"))
        let invalid = try #require(error(missing))
        #expect(invalid.description.contains("runs[0]"), "\(invalid)")
        #expect(invalid.description.contains("is not a valid history export"), "\(invalid)")
        #expect(try #require(error(xml)).description.contains("--junit"))
        #expect(try #require(error(newer)).description.contains("Upgrade fanout"))
    }
}
