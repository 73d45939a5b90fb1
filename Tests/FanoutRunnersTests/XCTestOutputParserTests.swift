import FanoutCore
import Testing
@testable import FanoutRunners

@Suite(.timeLimit(.minutes(2))) struct XCTestOutputParserTests {
    let demo = unit([("DemoKitTests", "ArithmeticTests"), ("DemoKitTests", "GCDTests")])

    @Test func passingClassesAndTheirSuiteTimes() throws {
        let events = parse(XCTestOutputParser(unit: demo), stdout: try Captures.bytes("xctest-pass.stdout"))
        #expect(events.started.count == 8)
        #expect(events.ended.count == 8)
        #expect(events.ended.allSatisfy { $0.1 == .passed })
        #expect(events.ended.first?.0 == TestID(module: "DemoKitTests", suite: "ArithmeticTests", name: "testAdd"))
        #expect(events.ended.first?.2 == 0.031)
        // Executed lines give each class its time; the outer 'Selected tests' suite is not a class.
        #expect(events.suiteTimes.map(\.0.name) == ["ArithmeticTests", "GCDTests"])
        #expect(events.suiteTimes[0].1 == 0.123)
    }

    @Test(arguments: [1, 7, 100])
    func chunkBoundariesDoNotMatter(chunk: Int) throws {
        let whole = parse(XCTestOutputParser(unit: demo), stdout: try Captures.bytes("xctest-pass.stdout"))
        let pieces = parse(XCTestOutputParser(unit: demo), stdout: try Captures.bytes("xctest-pass.stdout"), chunk: chunk)
        #expect(whole == pieces)
    }

    @Test func failedAssertionHasPlaceAndMessage() throws {
        let events = parse(XCTestOutputParser(unit: unit([("DemoKitTests", "ArithmeticTests")])),
                           stdout: try Captures.bytes("xctest-fail.stdout"))
        let (id, issue) = try #require(events.issues.first)
        #expect(id.name == "testMultiply")
        #expect(issue.kind == .assertion)
        #expect(issue.message.contains("deliberate failure"))
        #expect(issue.location?.file.hasSuffix("ArithmeticTests.swift") == true)
        #expect(issue.location?.line == 21)
        #expect(events.ended.first { $0.0.name == "testMultiply" }?.1 == .failed)
    }

    @Test func thrownErrorHasNoFakeLocation() throws {
        let events = parse(XCTestOutputParser(unit: unit([("IntegrationTests", "ConfigLoadingTests")])),
                           stdout: try Captures.bytes("xctest-throw.stdout"))
        let (_, issue) = try #require(events.issues.first)
        #expect(issue.kind == .thrown)
        #expect(issue.location == nil, "<EXPR>:0 is no place")
        #expect(issue.message.contains("missingKey"))
    }

    @Test func skipsKeepTheirReasonInBothForms() throws {
        let events = parse(XCTestOutputParser(unit: unit([("DemoKitTests", "PlatformTests")])),
                           stdout: try Captures.bytes("xctest-skip.stdout"))
        let skipped = events.ended.filter { $0.1 == .skipped }
        #expect(skipped.count == 2)
        #expect(skipped[0].3 == "requires Darwin (uses FileProvider)")
        #expect(skipped[1].3 == "network tests disabled (set DEMO_NETWORK=1)")
        // 'Executed 4 tests, with 2 tests skipped and 0 failures …' still gives the class time.
        #expect(events.suiteTimes.first?.1 == 0.104)
    }

    @Test func singularExecutedLine() throws {
        let text = try Captures.text("xctest-skip-single.stdout")
        #expect(text.contains("Executed 1 test,"))
        let suites = Set(text.split(separator: "\n").compactMap { line -> SuiteID? in
            guard let r = line.range(of: "Test Suite '"), let e = line[r.upperBound...].firstIndex(of: "'") else { return nil }
            return SuiteID(module: "M", name: String(line[r.upperBound..<e]))
        })
        let events = parse(XCTestOutputParser(suites: Array(suites)), stdout: Array(text.utf8))
        #expect(events.ended.count == 1)
        #expect(events.suiteTimes.contains { $0.0.name != "Selected tests" })
    }

    @Test func measurementWithEveryField() throws {
        let events = parse(XCTestOutputParser(unit: unit([("DemoKitTests", "PerformanceTests")])),
                           stdout: try Captures.bytes("xctest-measure.stdout"))
        let m = try #require(events.measurements.first)
        #expect(m.test.suite == SuiteID(module: "DemoKitTests", name: "PerformanceTests"))
        #expect(m.metric == "Time" && m.unit == "seconds")
        #expect(m.values.count == 10)
        #expect(m.average > 0 && m.relativeStandardDeviation >= 0)
        #expect(m.identifier == "org.swift.XCTPerformanceMetric_WallClockTime")
        #expect(m.maxPercentRelativeStandardDeviation == 10)
        #expect(m.maxStandardDeviation == 0.1)
        #expect(m.location?.line ?? 0 > 0)
        let mean = m.values.reduce(0, +) / Double(m.values.count)
        #expect(abs(mean - m.average) < 0.001, "the printed average matches the values")
    }

    @Test func noisyMeasurementKeepsItsDeviation() throws {
        let events = parse(XCTestOutputParser(unit: unit([("DemoKitTests", "PerformanceTests")])),
                           stdout: try Captures.bytes("xctest-measure-noisy.stdout"))
        let m = try #require(events.measurements.first)
        #expect(m.relativeStandardDeviation > 10)
        #expect(m.standardDeviation > 0.1)
    }

    @Test func expectationTimeoutIsItsOwnKind() throws {
        let events = parse(XCTestOutputParser(unit: unit([("DemoKitTests", "AsyncLoaderTests")])),
                           stdout: try Captures.bytes("xctest-expectation-timeout.stdout"))
        let (id, issue) = try #require(events.issues.first)
        #expect(id.name == "testLoadCompletesBeforeDeadline")
        #expect(issue.kind == .expectationTimeout)
        #expect(issue.message.contains("Exceeded timeout of 0.2 seconds"))
    }

    @Test func crashLeavesTheTestStartedAndStderrNamesTheTrap() throws {
        let u = unit([("IntegrationTests", "JobQueueTests"), ("IntegrationTests", "WorkerPoolTests")])
        let events = parse(XCTestOutputParser(unit: u), stdout: try Captures.bytes("xctest-crash.stdout"),
                           stderr: try Captures.bytes("xctest-crash.stderr"))
        let crashed = TestID(module: "IntegrationTests", suite: "WorkerPoolTests", name: "testEnqueueRespectsPriority")
        #expect(events.started.last == crashed)
        #expect(!events.ended.contains { $0.0 == crashed })
        let (id, trap) = try #require(events.issues.last)
        #expect(id == crashed)
        #expect(trap.kind == .crash)
        #expect(trap.message == "Fatal error: deliberate crash")
        #expect(trap.location == SourceLocation(file: "IntegrationTests/WorkerPoolTests.swift", line: 19))
    }

    /// A test that trips a precondition, catches the trap (signal handler, as precondition-testing libraries do)
    /// and passes: XCTest says passed and exits 0, so it passed. The trap line on stderr is no verdict.
    @Test func aTrapThatTheTestSurvivedIsNoIssue() throws {
        let u = unit([("DemoKitTests", "PreconditionRecoveryTests")])
        let stdout = try Captures.bytes("xctest-trap-recovered.stdout")
        let stderr = try Captures.bytes("xctest-trap-recovered.stderr")
        // Both orders in which two pipes can arrive: stderr after all of stdout, and each trap line while its test runs.
        let late = parse(XCTestOutputParser(unit: u), stdout: stdout, stderr: stderr)
        var p = XCTestOutputParser(unit: u)
        var live: [TestEvent] = []
        let errLines = String(decoding: stderr, as: UTF8.self).split(separator: "\n").map { Array("\($0)\n".utf8) }
        #expect(errLines.count == 2)
        for line in String(decoding: stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            live += p.consume(stdout: Array("\(line)\n".utf8))
            if line.contains("testRuntimeLikeLines") && line.contains("started") { live += p.consume(stderr: errLines[0]) }
            if line.contains("testZeroCapacity") && line.contains("started") { live += p.consume(stderr: errLines[1]) }
        }
        live += p.finish()
        for events in [late, live] {
            #expect(events.ended.count == 2)
            #expect(events.ended.allSatisfy { $0.1 == .passed })
            #expect(events.issues.isEmpty, "a survived trap is context in the log, not an issue: \(events.issues)")
        }
    }

    /// Tests that print without a final newline glue XCTest's own `Test Case '…' passed` line to their text (real
    /// capture: a progress line, a bare "\r", the words "Test Case " themselves). Every test still ends, passed.
    @Test func xctestLinesGluedToATestsOwnOutputStillCount() throws {
        let u = unit([("DemoKitTests", "ConsoleNoiseTests")])
        let events = parse(XCTestOutputParser(unit: u), stdout: try Captures.bytes("xctest-console-noise.stdout"),
                           stderr: try Captures.bytes("xctest-console-noise.stderr"))
        #expect(events.started.count == 2)
        #expect(events.ended.count == 2)
        #expect(events.ended.allSatisfy { $0.1 == .passed && $0.0.suite.module == "DemoKitTests" })
        #expect(events.issues.isEmpty)
        // Glued start lines too, and an assertion message that quotes an XCTest line stays an assertion.
        var p = XCTestOutputParser(suites: [SuiteID(module: "", name: "C")])
        var more = p.consume(stdout: Array("""
            50%...Test Case 'C.testA' started at 2026-11-21 22:08:59.505
            /p/C.swift:7: error: C.testA : XCTAssertEqual failed: ("Test Case 'x' passed (1 seconds)") is not equal to ("")
            fetch error: Test Case 'C.testA' failed (0.002 seconds)

            """.utf8))
        more += p.finish()
        #expect(more.started.count == 1)
        #expect(more.ended.map(\.1) == [.failed])
        #expect(more.issues.count == 1 && more.issues.first?.1.kind == .assertion)
    }

    /// The trap line can reach the parser before the crashing test's `started` line (two pipes): it still names
    /// the test that died.
    @Test func aTrapSeenBeforeItsTestStartedStillExplainsTheCrash() throws {
        let u = unit([("IntegrationTests", "JobQueueTests"), ("IntegrationTests", "WorkerPoolTests")])
        var p = XCTestOutputParser(unit: u)
        let stdout = String(decoding: try Captures.bytes("xctest-crash.stdout"), as: UTF8.self)
        let lastStart = try #require(stdout.range(of: "Test Case 'WorkerPoolTests.testEnqueueRespectsPriority' started"))
        var events = p.consume(stdout: Array(stdout[..<lastStart.lowerBound].utf8))
        events += p.consume(stderr: try Captures.bytes("xctest-crash.stderr"))
        events += p.consume(stdout: Array(stdout[lastStart.lowerBound...].utf8))
        events += p.finish()
        let crashed = TestID(module: "IntegrationTests", suite: "WorkerPoolTests", name: "testEnqueueRespectsPriority")
        #expect(events.issues.count == 1)
        let (id, trap) = try #require(events.issues.first)
        #expect(id == crashed)
        #expect(trap.kind == .crash && trap.message == "Fatal error: deliberate crash")
    }

    /// A trap line printed by a test that then ended, followed by a test that passed: nothing is reported.
    @Test func aTrapLineIsForgottenOnceItsTestEnds() {
        var p = XCTestOutputParser(suites: [SuiteID(module: "", name: "C")])
        var events = p.consume(stdout: Array("Test Case 'C.testA' started at 2026-11-21 22:08:59.505\n".utf8))
        events += p.consume(stderr: Array("/p/C.swift:3: Precondition failed: caught\n".utf8))
        events += p.consume(stdout: Array("Test Case 'C.testA' passed (0.001 seconds)\n".utf8))
        events += p.consume(stdout: Array("Test Case 'C.testB' started at 2026-11-21 22:08:59.506\n".utf8))
        events += p.consume(stdout: Array("Test Case 'C.testB' passed (0.001 seconds)\n".utf8))
        events += p.finish()
        #expect(events.issues.isEmpty)
        #expect(events.ended.map(\.1) == [.passed, .passed])
    }

    @Test func sameNamedClassesMapToTheModuleOfTheirUnit() throws {
        let stdout = try Captures.bytes("xctest-same-name.stdout")
        let a = parse(XCTestOutputParser(unit: unit([("IntegrationTests", "SharedNameTests")])), stdout: stdout)
        #expect(!a.ended.isEmpty)
        #expect(a.ended.allSatisfy { $0.0.suite.module == "IntegrationTests" })
        let b = parse(XCTestOutputParser(unit: unit([("DemoKitTests", "SharedNameTests")])), stdout: stdout)
        #expect(b.ended.count == a.ended.count)
        #expect(b.ended.allSatisfy { $0.0.suite.module == "DemoKitTests" })
    }

    @Test func multiLineMessagesStayWhole() {
        let out = """
        Test Case 'C.testA' started at 2026-11-21 22:08:59.505
        /p/C.swift:7: error: C.testA : XCTAssertEqual failed: ("a
        b") is not equal to ("c") - two
        lines
        Test Case 'C.testA' failed (0.001 seconds)

        """
        let events = parse(XCTestOutputParser(unit: unit([("M", "C")])), stdout: Array(out.utf8))
        #expect(events.issues.first?.1.message == "XCTAssertEqual failed: (\"a\nb\") is not equal to (\"c\") - two\nlines")
    }

    @Test func selectorNamesWholeClassesOrMethods() {
        var split = unit([("M", "A"), ("M", "B")])
        split.items[1].tests = ["testX", "testY"]
        split.items[1].isWholeSuite = false
        #expect(XCTestRunner.selector(for: split) == "M.A,M.B/testX,M.B/testY")
    }

    @Test func commandPutsTheSelectorLastAndAnEmptyUnitIsAnError() throws {
        var u = unit([("M", "A")])
        u.items[0].tests = ["testA"]
        let c = try XCTestRunner().command(for: u, binary: "/b/X.xctest",
                                           destination: Destination(name: "d", arguments: ["--verbose"]))
        #expect(c.arguments == ["--verbose", "M.A"])
        #expect(c.environment["SWIFT_BACKTRACE"]?.contains("interactive=no") == true)
        #expect(throws: RunnerError.self) { try XCTestRunner().command(for: unit([("M", "A")]), binary: "/b", destination: .local) }
    }

    @Test func listingFromDumpTestsJSON() throws {
        let suites = try XCTestRunner().parseListing(try Captures.text("dump-tests.json"))
        #expect(suites.count >= 40)
        let shared = suites.filter { $0.id.name == "SharedNameTests" }
        #expect(Set(shared.map(\.id.module)) == ["DemoKitTests", "IntegrationTests"])
        #expect(shared.first { $0.id.module == "IntegrationTests" }?.tests.contains("testSharedStore") == true)
        #expect(throws: ListingError.self) { try XCTestRunner().parseListing("garbage") }
    }

    @Test func neverTrapsOnGarbage() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0..<200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = parse(XCTestOutputParser(unit: unit([("M", "C")])), stdout: bytes, stderr: bytes, chunk: 13)
        }
        let tricky = ["Test Case '", "Test Case ''", "Test Case 'x' passed (", "Test Suite '' passed at", "\t Executed  in ",
                      ": error: ", ": Test Case '' measured [", "x: Test Case 'a.b' measured [Time", " : Test skipped",
                      "Fatal error: ", "a.b : Test skipped"]
        for line in tricky {
            _ = parse(XCTestOutputParser(unit: unit([("M", "C")])), stdout: Array((line + "\n").utf8), stderr: Array(line.utf8))
        }
    }
}
