import FanoutCore
import FanoutTestSupport
@testable import FanoutHistory
import Foundation
import GRDB
import Testing

@Suite("Opening history files: fresh, existing, corrupt, truncated, unusable", .timeLimit(.minutes(2)))
struct HistoryStoreOpeningTests {
    /// 2027-01-15 08:00:00 UTC; the aside name is checked against the store's own formatting of it.
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func createsFoldersAndReportsSchemaVersion() throws {
        let folder = try TempDir()
        let path = folder.file("deep/inside/.fanout/history.sqlite")

        let (store, warnings) = try HistoryStore.open(at: path)
        #expect(warnings.isEmpty)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(HistoryStore.currentSchemaVersion == 6)
        #expect(try store.schemaVersion() == HistoryStore.currentSchemaVersion)
        #expect(try HistoryStore.inMemory().schemaVersion() == HistoryStore.currentSchemaVersion)
    }

    @Test func reopeningKeepsRecordedRuns() throws {
        let folder = try TempDir()
        let path = folder.file("history.sqlite")
        do {
            let (store, _) = try HistoryStore.open(at: path)
            var run = ReportBuilder("run-1", minute: 0)
            run.addClass("LoginTests", actual: 2.5)
            try store.record(run.build())
        }
        let (store, warnings) = try HistoryStore.open(at: path)
        #expect(warnings.isEmpty)
        #expect(try store.recentRuns(limit: 5).map(\.runID) == ["run-1"])
        #expect(try store.timingHistory(destination: "local").classes.values.first?.first?.duration == 2.5)
    }

    @Test func emptyFileIsAFreshHistoryWithoutWarning() throws {
        let folder = try TempDir()
        let path = folder.file("history.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))

        let (store, warnings) = try HistoryStore.open(at: path, now: now)
        #expect(warnings.isEmpty)
        // WAL mode: the write-ahead log and its index live beside the file while it is open.
        #expect(try folder.files().filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") } == ["history.sqlite"])
        #expect(try store.read("read the journal mode") { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
        try expectWorking(store)
    }

    @Test func garbageFileIsMovedAsideAndAFreshStoreWorks() throws {
        let folder = try TempDir()
        let path = folder.file("history.sqlite")
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) })
        try garbage.write(to: URL(fileURLWithPath: path))

        let (store, warnings) = try HistoryStore.open(at: path, now: now)
        let aside = "\(path).corrupt-\(HistoryStore.timestamp(now))"
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains(aside) == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: aside)) == garbage)  // moved intact, never deleted
        try expectWorking(store)
    }

    @Test func truncatedDatabaseIsMovedAside() throws {
        let folder = try TempDir()
        let path = folder.file("history.sqlite")
        try writeRealHistory(at: path, runs: 40)
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size > 8 * 4096)
        try truncate(path, to: size / 2)

        let (store, warnings) = try HistoryStore.open(at: path, now: now)
        #expect(warnings.count == 1)
        #expect(try folder.files().contains("history.sqlite.corrupt-\(HistoryStore.timestamp(now))"))
        try expectWorking(store)
    }

    /// Every page is read at open unless the caller says the file is known whole (`checkPages: false`).
    @Test func everyPageIsCheckedAtOpenUnlessTheCallerKnowsTheFileIsWhole() throws {
        let folder = try TempDir()
        let path = folder.file("history.sqlite")
        try writeRealHistory(at: path, runs: 3)
        func checks() -> Int { HistoryStore.pageChecks.withLock { $0[path] ?? 0 } }
        let before = checks()
        var (store, _) = try HistoryStore.open(at: path)
        #expect(checks() == before + 1)
        #expect(store.close())
        (store, _) = try HistoryStore.open(at: path, checkPages: false)
        #expect(checks() == before + 1)
        #expect(try store.recentRuns(limit: 5).count == 3)
    }

    @Test func databaseCutInsideItsHeaderIsMovedAside() throws {
        let folder = try TempDir()
        let path = folder.file("history.sqlite")
        try writeRealHistory(at: path, runs: 2)
        try truncate(path, to: 50)

        let (store, warnings) = try HistoryStore.open(at: path, now: now)
        #expect(warnings.count == 1)
        try expectWorking(store)
    }

    @Test func secondCorruptionOnTheSameSecondGetsItsOwnName() throws {
        let folder = try TempDir()
        let path = folder.file("history.sqlite")
        for _ in 0..<2 {
            try Data("not a database at all".utf8).write(to: URL(fileURLWithPath: path))
            _ = try HistoryStore.open(at: path, now: now)
        }
        let stamp = HistoryStore.timestamp(now)
        #expect(try folder.files() == [
            "history.sqlite", "history.sqlite.corrupt-\(stamp)", "history.sqlite.corrupt-\(stamp)-2",
        ])
    }

    /// Journal files beside a file that is not a database must not be replayed into the fresh one: SQLite drops
    /// invalid ones itself, and the store moves any it leaves along with the file.
    @Test func strayJournalFilesDoNotReachTheFreshStore() throws {
        let folder = try TempDir()
        let path = folder.file("history.sqlite")
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: path))
        for suffix in ["-journal", "-wal", "-shm"] {
            try Data("stray \(suffix) of the garbage".utf8).write(to: URL(fileURLWithPath: path + suffix))
        }

        let (store, warnings) = try HistoryStore.open(at: path, now: now)
        #expect(warnings.count == 1)
        #expect(try folder.files().contains("history.sqlite.corrupt-\(HistoryStore.timestamp(now))"))
        for suffix in ["-journal", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            let contents = try Data(contentsOf: URL(fileURLWithPath: path + suffix))
            #expect(!String(decoding: contents, as: UTF8.self).contains("stray"), "the fresh store's \(suffix) is its own")
        }
        try expectWorking(store)
    }

    @Test func folderThatCannotBeCreatedIsATypedError() throws {
        let folder = try TempDir()
        // A regular file where the folder should be: fails the same way for root and for ordinary users.
        let blocker = folder.file("not-a-folder")
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))

        let error = #expect(throws: HistoryError.self) {
            _ = try HistoryStore.open(at: blocker + "/history.sqlite")
        }
        guard case .folderUnavailable(let path, _) = error else {
            Issue.record("expected folderUnavailable, got \(String(describing: error))")
            return
        }
        #expect(path == blocker)
        #expect(error?.description.contains("Make the folder writable") == true)
    }

    @Test func historyFromANewerFanoutIsRefusedAndLeftAlone() throws {
        let folder = try TempDir()
        let path = folder.file("history.sqlite")
        do {
            let (store, _) = try HistoryStore.open(at: path)
            try store.write("fake a newer schema") { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99')")
            }
        }
        #expect(throws: HistoryError.newerSchema(path: path, unknownMigrations: ["v99"])) {
            _ = try HistoryStore.open(at: path)
        }
        #expect(try folder.files() == ["history.sqlite"])
    }

    @Test func aFileOfTheFirstSchemaIsMigratedInPlaceAndItsMeasurementsStayOutOfTrends() throws {
        let folder = try TempDir()
        let path = folder.file("history.sqlite")
        let test = TestID(module: "AppTests", suite: "PerfTests", name: "testSort")
        do {
            // A file as the first Fanout left it: only "v1", a measurement without hardware class or baseline.
            let queue = try DatabaseQueue(path: path)
            try HistorySchema.migrator.migrate(queue, upTo: "v1")
            try queue.write { db in
                try db.execute(sql: """
                    INSERT INTO runs (run_id, started_at, finished_at, fanout_version, exit_code, interrupted,
                        destinations, slots, wall, preparation, makespan, lower_bound, predicted_makespan,
                        planned_lower_bound, total_estimate, total, passed, flaky, failed, skipped, crashed, timed_out,
                        not_run)
                    VALUES ('old', '2026-01-01 00:00:00.000', '2026-01-01 00:01:00.000', '0.1', 0, 0, '["local"]', 2,
                        1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0)
                    """)
                try db.execute(sql: """
                    INSERT INTO measurements (run, destination, agent, module, suite, name, metric, unit, identifier,
                        samples, average, rsd) VALUES (1, 'local', 'local', 'AppTests', 'PerfTests', 'testSort', 'Time',
                        'seconds', 'org.swift.XCTPerformanceMetric_WallClockTime', '[0.5]', 0.5, 0)
                    """)
            }
        }
        let (store, warnings) = try HistoryStore.open(at: path)
        #expect(warnings.isEmpty)
        #expect(try store.schemaVersion() == HistoryStore.currentSchemaVersion)
        #expect(try store.measurements(of: test, destination: "local").map(\.runID) == ["old"], "the old row is kept")
        var run = ReportBuilder("new", minute: 0)
        run.addMeasurement(test, values: [0.25], hardwareClass: nil)
        try store.record(run.build())
        let trend = try store.measurementTrend(of: test, metric: "org.swift.XCTPerformanceMetric_WallClockTime",
                                               destination: "local", hardwareClass: nil, excludingRun: "")
        #expect(trend.map(\.runID) == ["new"], "a row from before hardware classes were kept matches no class")
    }

    @Test func aFileOfTheSecondSchemaGainsResourceColumnsInPlaceAndKeepsTeaching() throws {
        let folder = try TempDir()
        let path = folder.file("history.sqlite")
        let suite = SuiteID(module: "AppTests", name: "HeavyTests")
        do {
            // A file as Fanout left it before CPU and memory were kept: a run with a unit, a class that ran whole,
            // a passed test and a timed-out one (whose elapsed time was not kept then: 0).
            let queue = try DatabaseQueue(path: path)
            try HistorySchema.migrator.migrate(queue, upTo: "v2 measurement hardware class and baseline")
            try queue.write { db in
                try db.execute(sql: """
                    INSERT INTO runs (run_id, started_at, finished_at, fanout_version, exit_code, interrupted,
                        destinations, slots, wall, preparation, makespan, lower_bound, predicted_makespan,
                        planned_lower_bound, total_estimate, total, passed, flaky, failed, skipped, crashed, timed_out,
                        not_run)
                    VALUES ('old', '2026-01-01 00:00:00.000', '2026-01-01 00:01:00.000', '0.1', 1, 0, '["local"]', 2,
                        1, 0, 1, 1, 1, 1, 1, 2, 1, 0, 0, 0, 0, 1, 0);
                    INSERT INTO unit_runs (run, unit_id, destination, framework, agent, slot, suites, test_count,
                        estimate, started_at, duration, ending)
                    VALUES (1, 1, 'local', 'xctest', 'local', 0, '["AppTests.HeavyTests"]', 2, 1, 0, 4, 'exit 0');
                    INSERT INTO class_runs (run, destination, framework, module, suite, test_count, estimate,
                        estimate_source, actual, outcome, timing_complete, agent)
                    VALUES (1, 'local', 'xctest', 'AppTests', 'HeavyTests', 2, 1, 'test count', 4, 'passed', 1, 'local');
                    INSERT INTO tests (id, module, suite, name) VALUES (1, 'AppTests', 'HeavyTests', 'testA'),
                        (2, 'AppTests', 'HeavyTests', 'testB');
                    INSERT INTO test_results (run, destination, test, framework, outcome, attempt_count)
                    VALUES (1, 'local', 1, 'xctest', 'passed', 1), (1, 'local', 2, 'xctest', 'timed-out', 1);
                    INSERT INTO test_attempts (run, destination, test, attempt, outcome, duration, agent, unit)
                    VALUES (1, 'local', 1, 0, 'passed', 1.5, 'local', 1), (1, 'local', 2, 0, 'timed-out', 0, 'local', 1);
                    """)
            }
        }
        let (store, warnings) = try HistoryStore.open(at: path)
        #expect(warnings.isEmpty)
        #expect(try store.schemaVersion() == HistoryStore.currentSchemaVersion)
        let history = try store.timingHistory(destination: "local")
        #expect(history.classes[suite] == [ClassSample(duration: 4, testCount: 2)], "the old rows are kept")
        #expect(history.tests[TestID(suite: suite, name: "testA")] == [1.5])
        #expect(history.censored.isEmpty, "an old time-out without its elapsed time says nothing")
        #expect(history.cpuShare.isEmpty && history.peakMemory.isEmpty, "not measured then: NULL")
        let old = try #require(try store.exportRuns().first)
        #expect(old.units.first?.cpuSeconds == nil && old.units.first?.peakMemoryBytes == nil)
        #expect(old.classes.first?.cpuSeconds == nil)

        var run = ReportBuilder("new", minute: 0)
        run.addClass("HeavyTests", tests: 2, actual: 4)
        run.classes[0].cpuSeconds = 8
        run.addUnit(id: 1, suites: ["AppTests.HeavyTests"], duration: 4, cpuSeconds: 8, peakMemoryBytes: 1_000_000)
        try store.record(run.build())
        let after = try store.timingHistory(destination: "local")
        #expect(after.cpuShare == [suite: 2])
        #expect(after.peakMemory == [suite: 1_000_000])
        #expect(after.classes[suite]?.count == 2)
    }

    @Test func asideTimestampIsDigitsOfTheLocalClock() {
        let utc = TimeZone(identifier: "UTC") ?? .current
        #expect(HistoryStore.timestamp(Date(timeIntervalSince1970: 1_704_164_645), timeZone: utc) == "20240102-030405")
    }

    // MARK: - Helpers

    private func writeRealHistory(at path: String, runs: Int) throws {
        let (store, _) = try HistoryStore.open(at: path)
        for minute in 0..<runs {
            var run = ReportBuilder("run-\(minute)", minute: minute)
            for index in 0..<10 { run.addClass("Class\(index)", tests: 5, actual: Double(index)) }
            try store.record(run.build())
        }
    }

    private func truncate(_ path: String, to size: Int) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
    }

    private func expectWorking(_ store: HistoryStore) throws {
        #expect(try store.recentRuns(limit: 10).isEmpty)
        var run = ReportBuilder("after", minute: 0)
        run.addClass("LoginTests", actual: 1.5)
        try store.record(run.build())
        #expect(try store.timingHistory(destination: "local").classes.count == 1)
        #expect(try store.schemaVersion() == HistoryStore.currentSchemaVersion)
    }
}
