import FanoutCore
import FanoutTestSupport
@testable import FanoutHistory
import Testing

/// The history learns from every run: tests killed by a time limit (censored times), classes that never ran whole,
/// and what each class consumed (CPU, memory).
@Suite("Time-outs, partial classes, CPU and memory in the timing history", .timeLimit(.minutes(2)))
struct CensoredAndResourceHistoryTests {
    let heavy = SuiteID(module: "AppTests", name: "HeavyTests")
    let login = SuiteID(module: "AppTests", name: "LoginTests")
    let cart = SuiteID(module: "AppTests", name: "CartTests")

    func test(_ name: String, in suite: SuiteID? = nil) -> TestID { TestID(suite: suite ?? heavy, name: name) }

    /// Run 1 of a CPU-heavy class: two tests pass, the third is killed at 60 s, the fourth never starts.
    func killedRun(_ id: String, minute: Int, killedAt: Double = 60) -> RunReport {
        var run = ReportBuilder(id, minute: minute)
        run.addClass("HeavyTests", tests: 0, actual: 12 + killedAt, outcome: .timedOut, complete: false)
        run.classes[0].testCount = 4
        run.addTest(test("test0"), outcome: .passed, attempts: [(.passed, 5)])
        run.addTest(test("test1"), outcome: .passed, attempts: [(.passed, 7)])
        run.addTest(test("test2"), outcome: .timedOut, attempts: [(.timedOut, killedAt)])
        run.addTest(test("test3"), outcome: .notRun, attempts: [])
        return run.build(exitCode: 1)
    }

    @Test func aTimedOutAttemptIsACensoredDurationNotASample() throws {
        let store = try HistoryStore.inMemory()
        try store.record(killedRun("run-1", minute: 0))
        let history = try store.timingHistory(destination: "local")
        #expect(history.censored == [test("test2"): 60])
        #expect(history.censoredDuration(of: test("test2")) == 60)
        #expect(history.tests[test("test2")] == nil, "a killed test's time is not how long it takes")
        #expect(history.tests[test("test0")] == [5])
        #expect(history.classes[heavy] == nil, "a killed class has no whole-class sample")
    }

    @Test func timeOutsRecordedWithoutTheirElapsedTimeAreIgnored() throws {
        let store = try HistoryStore.inMemory()
        try store.record(killedRun("before-the-change", minute: 0, killedAt: 0))
        let history = try store.timingHistory(destination: "local")
        #expect(history.censored.isEmpty)
        #expect(history.censoredDuration(of: test("test2")) == nil)
    }

    @Test func censoredValuesComeFromTheNewestRunsAndTimeOutsOnly() throws {
        let store = try HistoryStore.inMemory()
        // Old runs killed test2 late, then once early; then the class ran whole for a while.
        for (minute, killedAt) in [100.0, 10, 10, 10].enumerated() {
            try store.record(killedRun("killed-\(minute)", minute: minute, killedAt: killedAt))
        }
        for minute in 4..<10 {
            var run = ReportBuilder("whole-\(minute)", minute: minute)
            run.addClass("HeavyTests", tests: 4, actual: 40, testSeconds: 10)
            try store.record(run.build())
        }
        // window 3 looks back over the newest 9 runs (killed-1...): its newest three time-outs were at 10 s.
        #expect(try store.timingHistory(destination: "local", window: 3).censored[test("test2")] == 10)
        // window 4: the newest 12 runs hold all four time-outs, the longest at 100 s.
        #expect(try store.timingHistory(destination: "local", window: 4).censored[test("test2")] == 100)
        // window 2: the newest 6 runs hold no time-out at all.
        #expect(try store.timingHistory(destination: "local", window: 2).censored.isEmpty)
    }

    @Test func aClassKilledInRunOneIsEstimatedInRunTwoFromItsTests() throws {
        let store = try HistoryStore.inMemory()
        try store.record(killedRun("run-1", minute: 0))
        let history = try store.timingHistory(destination: "local")
        let suite = TestSuite(id: heavy, framework: .xctest, tests: ["test0", "test1", "test2", "test3"])
        let (seconds, source) = Estimator().estimate(suite, history: history)
        // 60 s (at least, killed) + 5 + 7 + the never-started test at the nominal 0.1 s (no counted class here yet).
        #expect(seconds >= 72)
        #expect(abs(seconds - 72.1) < 1e-9)
        #expect(source == .tests(known: 3, of: 4, censored: 1))
        #expect(source.description == "test history (3/4, 1 timed out)")
    }

    @Test func splitAndStolenClassesStillTeachTheirTests() throws {
        let store = try HistoryStore.inMemory()
        var run = ReportBuilder("run-1", minute: 0)
        // Split by methods (or cut by stealing): the class ran in several processes, so its time is not complete.
        run.addClass("HeavyTests", tests: 3, actual: 6, complete: false, testSeconds: 2)
        run.addClass("LoginTests", tests: 2, actual: 1, testSeconds: 0.5)
        try store.record(run.build())
        let history = try store.timingHistory(destination: "local")
        #expect(history.classes[heavy] == nil)
        #expect(history.tests[test("test0")] == [2])

        let suite = TestSuite(id: heavy, framework: .xctest, tests: ["test0", "test1", "test2", "testNew"])
        let (seconds, source) = Estimator().estimate(suite, history: history)
        #expect(abs(seconds - (6 + 0.5)) < 1e-9, "3 × 2 s, and a new test at the destination's 0.5 s per test")
        #expect(source == .tests(known: 3, of: 4, censored: 0))
        #expect(source.description == "test history (3/4)")
    }

    @Test func cpuShareAndPeakMemoryComeBackPerClass() throws {
        let store = try HistoryStore.inMemory()
        let mb: Int64 = 1 << 20
        for (minute, (cpu, peak)) in [(5.0, 900 * mb), (20, 300 * mb), (15, 200 * mb)].enumerated() {
            var run = ReportBuilder("run-\(minute)", minute: minute)
            run.addClass("LoginTests", tests: 2, actual: 10)
            run.classes[0].cpuSeconds = cpu
            run.addClass("CartTests", tests: 3, actual: 2)  // CPU not measured
            run.addClass("SkippedTests", tests: 1, actual: 0.01, outcome: .skipped)
            run.classes[2].cpuSeconds = 0
            run.addUnit(id: 1, suites: ["AppTests.LoginTests"], duration: 10, cpuSeconds: cpu, peakMemoryBytes: peak)
            run.addUnit(id: 2, suites: ["AppTests.CartTests (3 tests)", "AppTests.SkippedTests"], duration: 2,
                        cpuSeconds: 1, peakMemoryBytes: 50 * mb)
            run.addUnit(id: 3, suites: ["AppTests.CartTests"], duration: 2)  // memory not measured
            try store.record(run.build())
        }
        let history = try store.timingHistory(destination: "local")
        #expect(history.cpuShare == [login: 1.5], "the median of 0.5, 2.0 and 1.5; unmeasured and skipped left out")
        #expect(history.peakMemory == [login: 900 * mb, cart: 50 * mb, SuiteID(module: "AppTests", name: "SkippedTests"): 50 * mb])

        let short = try store.timingHistory(destination: "local", window: 2)
        #expect(short.cpuShare[login] == 1.75, "the newest two runs: 2.0 and 1.5")
        #expect(short.peakMemory[login] == 300 * mb, "the units of the newest two runs that ran it")
        #expect(try store.timingHistory(destination: "elsewhere").peakMemory.isEmpty)
    }

    @Test func cpuAndMemoryAreRecordedAsTheReportHasThem() throws {
        let store = try HistoryStore.inMemory()
        var run = ReportBuilder("run-1", minute: 0)
        run.addClass("LoginTests", tests: 1, actual: 2)
        run.classes[0].cpuSeconds = 1.75
        run.addUnit(id: 1, suites: ["AppTests.LoginTests"], duration: 2.5, cpuSeconds: 2.25, peakMemoryBytes: 123_456_789)
        run.addUnit(id: 2, suites: ["AppTests.CartTests"], duration: 1)
        var report = run.build()
        report.agents[0].cores = 2
        report.results[0].attempts[0].cpuSeconds = 0.123_4
        try store.record(report)

        let stored = try #require(try store.exportRuns().first)
        #expect(stored.units.map(\.cpuSeconds) == [2.25, nil])
        #expect(stored.units.map(\.peakMemoryBytes) == [123_456_789, nil])
        #expect(stored.units.map(\.cores) == [2, 2], "the cores of the agent that ran it")
        #expect(stored.classes.map(\.cpuSeconds) == [1.75])
        #expect(stored.tests.first?.attempts.map(\.cpuSeconds) == [0.123], "kept to the millisecond")
    }

    @Test func unitEntriesNameTheirClass() {
        #expect(HistoryStore.suiteID(unitEntry: "AppTests.LoginTests") == login)
        #expect(HistoryStore.suiteID(unitEntry: "AppTests.LoginTests (3 tests)") == login)
        #expect(HistoryStore.suiteID(unitEntry: "AppTests.Outer/Inner") == SuiteID(module: "AppTests", name: "Outer/Inner"))
        #expect(HistoryStore.suiteID(unitEntry: "AppTests.(top level) (2 tests)")
                == SuiteID(module: "AppTests", name: "(top level)"))
        #expect(HistoryStore.suiteID(unitEntry: "AppTests.(top level)") == SuiteID(module: "AppTests", name: "(top level)"))
        #expect(HistoryStore.suiteID(unitEntry: "NoModule") == nil)
        #expect(HistoryStore.suiteID(unitEntry: ".Nothing") == nil)
    }
}
