import FanoutCore
import FanoutTestSupport
@testable import FanoutHistory
import Testing

@Suite("Recording runs and reading timing history back", .timeLimit(.minutes(2)))
struct TimingHistoryTests {
    let login = SuiteID(module: "AppTests", name: "LoginTests")
    let cart = SuiteID(module: "AppTests", name: "CartTests")

    @Test func recordedRunComesBackAsTimingHistory() throws {
        let store = try HistoryStore.inMemory()
        var run = ReportBuilder("run-1", minute: 0)
        run.addClass("LoginTests", tests: 4, actual: 2.0, testSeconds: 0.5)
        run.addClass("CartTests", tests: 1, actual: 3.0, outcome: .failed, testSeconds: 3.0)
        try store.record(run.build())

        let history = try store.timingHistory(destination: "local")
        #expect(history.destination == "local")
        #expect(history.classes == [
            login: [ClassSample(duration: 2.0, testCount: 4)],
            cart: [ClassSample(duration: 3.0, testCount: 1)],
        ])
        #expect(history.tests[TestID(suite: login, name: "test3")] == [0.5])
        #expect(history.tests[TestID(suite: cart, name: "test0")] == [3.0])
        #expect(history.tests.count == 5)
        #expect(history.secondsPerTest == 1.0)  // (2 + 3) s / (4 + 1) tests
    }

    @Test func classRunsThatEndedBadlyDoNotTeachTimings() throws {
        let store = try HistoryStore.inMemory()
        var run = ReportBuilder("run-1", minute: 0)
        run.addClass("Passed", actual: 1.0, outcome: .passed)
        run.addClass("Failed", actual: 2.0, outcome: .failed)
        run.addClass("Flaky", actual: 3.0, outcome: .flaky)
        run.addClass("Skipped", actual: 0.001, outcome: .skipped)
        run.addClass("Crashed", actual: 0.2, outcome: .crashed)
        run.addClass("TimedOut", actual: 600, outcome: .timedOut)
        run.addClass("NotRun", actual: 0, outcome: .notRun)
        run.addClass("Split", actual: 4.0, outcome: .passed, complete: false)
        run.addClass("Unmeasured", actual: nil, outcome: .passed)
        try store.record(run.build())

        let history = try store.timingHistory(destination: "local")
        #expect(Set(history.classes.keys.map(\.name)) == ["Passed", "Failed", "Flaky"])
        // Tests of skipped, crashed and timed-out classes keep no durations either.
        #expect(Set(history.tests.keys.map(\.suite.name)) == ["Passed", "Failed", "Flaky", "Split", "Unmeasured"])
        #expect(history.secondsPerTest == 1.0)  // (1 + 2 + 3) s / 6 tests; the others are left out
    }

    @Test func windowKeepsTheNewestCountedRunsNewestFirst() throws {
        let store = try HistoryStore.inMemory()
        // Recorded out of order: recency comes from the start time, not the order of recording.
        for minute in [3, 0, 14, 7, 1, 12, 5, 9, 2, 13, 4, 11, 6, 10, 8] {
            var run = ReportBuilder("run-\(minute)", minute: minute)
            run.addClass("LoginTests", actual: Double(minute))
            try store.record(run.build())
        }
        // A newer crashed run must not take a place in the window.
        var crashed = ReportBuilder("run-crashed", minute: 20)
        crashed.addClass("LoginTests", actual: 0.1, outcome: .crashed)
        try store.record(crashed.build())

        let history = try store.timingHistory(destination: "local", window: 10)
        #expect(history.classes[login]?.map(\.duration) == [14, 13, 12, 11, 10, 9, 8, 7, 6, 5])
        #expect(history.tests[TestID(suite: login, name: "test0")]?.count == 10)

        let short = try store.timingHistory(destination: "local", window: 3)
        #expect(short.classes[login]?.map(\.duration) == [14, 13, 12])
    }

    @Test func testDurationsComeFromTheNewestRunsOnly() throws {
        let store = try HistoryStore.inMemory()
        let rare = TestID(suite: login, name: "testOnlyInOldRuns")
        for minute in 0..<10 {
            var run = ReportBuilder("run-\(minute)", minute: minute)
            run.addClass("LoginTests", actual: 1)
            if minute < 2 { run.addTest(rare, outcome: .passed, attempts: [(.passed, Double(minute))]) }
            try store.record(run.build())
        }
        // window 3 looks back over the newest 9 runs: run-1 is in, run-0 is out.
        #expect(try store.timingHistory(destination: "local", window: 3).tests[rare] == [1])
        #expect(try store.timingHistory(destination: "local", window: 2).tests[rare] == nil)
        #expect(try store.timingHistory(destination: "local", window: 4).tests[rare] == [1, 0])
    }

    @Test func destinationsKeepSeparateHistories() throws {
        let store = try HistoryStore.inMemory()
        var run = ReportBuilder("run-1", minute: 0, destination: "linux-fast")
        run.addClass("LoginTests", actual: 1.0, testSeconds: 0.5)
        run.addClass("LoginTests", actual: 9.0, testSeconds: 4.5, destination: "linux-slow")
        try store.record(run.build())

        let fast = try store.timingHistory(destination: "linux-fast")
        let slow = try store.timingHistory(destination: "linux-slow")
        #expect(fast.classes[login]?.map(\.duration) == [1.0])
        #expect(slow.classes[login]?.map(\.duration) == [9.0])
        #expect(fast.tests[TestID(suite: login, name: "test0")] == [0.5])
        #expect(slow.tests[TestID(suite: login, name: "test0")] == [4.5])
        #expect(fast.secondsPerTest == 0.5)
        #expect(slow.secondsPerTest == 4.5)

        let unknown = try store.timingHistory(destination: "macos")
        #expect(unknown == TimingHistory.empty("macos"))
    }

    @Test func secondsPerTestAveragesTheNewestRunsOnly() throws {
        let store = try HistoryStore.inMemory()
        // Oldest run: 1 s per test; the two newest: 2 s and 4 s per test over different test counts.
        var old = ReportBuilder("old", minute: 0)
        old.addClass("LoginTests", tests: 10, actual: 10)
        var middle = ReportBuilder("middle", minute: 1)
        middle.addClass("LoginTests", tests: 2, actual: 4)
        var newest = ReportBuilder("newest", minute: 2)
        newest.addClass("LoginTests", tests: 2, actual: 8)
        newest.addClass("CartTests", tests: 4, actual: 16)
        // A newer run whose classes all crashed teaches nothing and must not push `middle` out.
        var crashed = ReportBuilder("crashed", minute: 3)
        crashed.addClass("LoginTests", tests: 2, actual: 0.1, outcome: .crashed)
        for run in [old, middle, newest, crashed] { try store.record(run.build()) }

        #expect(try store.timingHistory(destination: "local", runsForMean: 2).secondsPerTest == 28.0 / 8.0)
        #expect(try store.timingHistory(destination: "local", runsForMean: 1).secondsPerTest == 24.0 / 6.0)
        #expect(try store.timingHistory(destination: "local", runsForMean: 10).secondsPerTest == 38.0 / 18.0)
    }

    @Test func onlyCrashedRunsMeansNoSecondsPerTest() throws {
        let store = try HistoryStore.inMemory()
        var run = ReportBuilder("run-1", minute: 0)
        run.addClass("LoginTests", actual: 0.3, outcome: .crashed)
        try store.record(run.build())
        let history = try store.timingHistory(destination: "local")
        #expect(history.secondsPerTest == nil)
        #expect(history.classes.isEmpty)
    }

    @Test func everyAttemptIsRecordedWithItsIndex() throws {
        let store = try HistoryStore.inMemory()
        let flaky = TestID(suite: login, name: "testSometimes")
        let crashing = TestID(suite: login, name: "testCrashes")
        var run = ReportBuilder("run-1", minute: 0)
        run.addTest(flaky, outcome: .flaky, attempts: [(.failed, 0.25), (.passed, 0.75)])
        run.addTest(crashing, outcome: .crashed, attempts: [(.crashed, 0.1), (.crashed, 0.2)])
        try store.record(run.build())

        #expect(try store.tableSizes()["test_attempts"] == 4)
        #expect(try store.tableSizes()["test_results"] == 2)
        let history = try store.timingHistory(destination: "local")
        // Newest first: the retry (attempt 1) before the first attempt. Crashed attempts keep no time.
        #expect(history.tests[flaky] == [0.75, 0.25])
        #expect(history.tests[crashing] == nil)
    }

    @Test func recordingTheSameRunTwiceReplacesIt() throws {
        let store = try HistoryStore.inMemory()
        var run = ReportBuilder("run-1", minute: 0)
        run.addClass("LoginTests", actual: 2.0)
        run.addTest(TestID(suite: login, name: "testFlaky"), outcome: .flaky, attempts: [(.failed, 1), (.passed, 1)])
        run.addUnit(id: 1, suites: ["AppTests.LoginTests"], duration: 2.5)
        run.addMeasurement(TestID(suite: login, name: "test0"), values: [0.1, 0.2])
        try store.record(run.build())
        let once = try store.tableSizes()

        // The second copy has a corrected time: it must replace the first, not sit beside it.
        run.classes[0].actual = 3.0
        try store.record(run.build())
        #expect(try store.tableSizes() == once)
        #expect(once == ["runs": 1, "unit_runs": 1, "class_runs": 1, "tests": 3, "test_results": 3,
                         "test_attempts": 4, "measurements": 1])
        #expect(try store.timingHistory(destination: "local").classes[login]?.map(\.duration) == [3.0])
        #expect(try store.recentRuns(limit: 10).count == 1)
    }

    @Test func retentionPrunesTheOldestRunsAndTheirRows() throws {
        let store = try HistoryStore.inMemory(retention: 3)
        for minute in 0..<5 {
            var run = ReportBuilder("run-\(minute)", minute: minute)
            run.addClass("LoginTests", actual: Double(minute))
            // Only the pruned runs ran this test: its name must go with them.
            if minute < 2 {
                run.addTest(TestID(suite: login, name: "testGone"), outcome: .passed, attempts: [(.passed, 1)])
            }
            try store.record(run.build())
        }
        #expect(try store.recentRuns(limit: 10).map(\.runID) == ["run-4", "run-3", "run-2"])
        #expect(try store.tableSizes()["class_runs"] == 3)
        #expect(try store.tableSizes()["test_attempts"] == 6)
        #expect(try store.tableSizes()["tests"] == 2)
        #expect(try store.timingHistory(destination: "local").classes[login]?.map(\.duration) == [4, 3, 2])
    }
}
