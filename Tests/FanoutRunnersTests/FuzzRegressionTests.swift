import FanoutCore
import Foundation
import Testing
@testable import FanoutRunners

#if os(Linux)
/// Minor page faults of the calling thread so far (memory touched for the first time).
private func minorPageFaults() -> Int {
    var usage = rusage()
    let rusageThread: __rusage_who_t = 1 // RUSAGE_THREAD: C declares it only with _GNU_SOURCE
    getrusage(rusageThread, &usage)
    return usage.ru_minflt
}
#endif

/// What fuzzing the parsers (FuzzTests.swift) found, each input pinned to the fix it led to.
@Suite(.timeLimit(.minutes(10))) struct FuzzRegressionTests {
    // MARK: XCTest durations

    /// `Double` reads `nan`, `inf`, `-1` and `1e999`: a duration was NaN, infinite or negative, and every sum and
    /// percentile of timing history downstream with it.
    @Test(arguments: ["nan", "NaN", "-nan", "+inf", "-inf", "infinity", "1e999", "-1", "-0.001", "-1.7976931348623157e308"])
    func impossibleTestDurationsBecomeZero(_ number: String) {
        let stdout = """
            Test Case 'GCDTests.testLCM' started at 2026-11-21 23:00:19.175
            Test Case 'GCDTests.testLCM' passed (\(number) seconds)

            """
        let events = parse(XCTestOutputParser(unit: unit([("DemoKitTests", "GCDTests")])), stdout: Array(stdout.utf8))
        #expect(events.ended.count == 1)
        #expect(events.ended.first?.1 == .passed)
        #expect(events.ended.first?.2 == 0)
    }

    @Test func impossibleSuiteDurationsGiveNoSuiteTime() {
        let stdout = """
            Test Suite 'PlatformTests' passed at 2026-11-21 23:00:09.766
            \t Executed 1 test, with 1 test skipped and 0 failures (0 unexpected) in nan (-inf) seconds
            Test Suite 'GCDTests' passed at 2026-11-21 23:00:09.766
            \t Executed 1 test, with 0 failures (0 unexpected) in 0.028 (1e999) seconds

            """
        let parser = XCTestOutputParser(unit: unit([("DemoKitTests", "PlatformTests"), ("DemoKitTests", "GCDTests")]))
        let events = parse(parser, stdout: Array(stdout.utf8))
        // The first has no time at all; the second falls back to its time without set-up and tear-down.
        #expect(events.suiteTimes.map(\.0.name) == ["GCDTests"])
        #expect(events.suiteTimes.first?.1 == 0.028)
    }

    // MARK: XCTest multi-line messages

    /// Found probing how parsing scales with long inputs: each continuation line of an assertion message copied the
    /// whole message so far (the stored copy kept the string shared), so 200 long lines after a failure cost n²/2
    /// line-lengths of copying: 8.1 s instead of 3.6 s for 200 lines of 500 KB (debug build). Time is a poor witness here (scanning each line costs as much), memory is a good one:
    /// every copy faults in a fresh, larger buffer, while appending in place grows it a few times.
    @Test func continuationLinesDoNotCopyTheMessage() {
        #if os(Linux)
        func faults(after first: String) -> (Int, Int) {
            var text = "Test Case 'C.testA' started at 2026\n\(first)\n"
            let line = String(repeating: "y", count: 50_000) + "\n"
            for _ in 0..<200 { text += line }
            text += "Test Case 'C.testA' failed (0.1 seconds)\n"
            let bytes = Array(text.utf8)
            let before = minorPageFaults()
            let events = parse(XCTestOutputParser(suites: []), stdout: bytes, chunk: 1 << 16)
            return (minorPageFaults() - before, events.issues.first?.1.message.utf8.count ?? 0)
        }
        // The same 200 lines after a plain line (ignored) and after an error line (they join its message).
        let (ignored, _) = faults(after: "some output of the test")
        let (joined, length) = faults(after: "/f.swift:1: error: C.testA : failed - x")
        #expect(length == 10 + 200 * 50_001)
        // A 10 MB message is ~2,500 pages: growing it by doubling touches ~5,000, copying it line by line ~78,000.
        #expect(joined - ignored < 8 * length / 4096, "\(joined - ignored) page faults to build a \(length)-byte message")
        #endif
    }

    // MARK: Line buffer

    /// A line over the limit was cut wherever a chunk happened to end (or not at all when its newline came in the
    /// same chunk): the same output gave other lines depending on how the pipe delivered it.
    @Test(arguments: [1, 3, 4, 11, 64])
    func longLinesAreCutTheSameWhateverTheChunks(chunk: Int) {
        let bytes = Array("abcdefghij\nklm\r\nnopqrstu".utf8)
        var buffer = LineBuffer(maxLineLength: 4)
        var lines: [String] = []
        var i = 0
        while i < bytes.count {
            lines += buffer.append(Array(bytes[i..<min(bytes.count, i + chunk)]))
            i += chunk
        }
        if let last = buffer.flush() { lines.append(last) }
        #expect(lines == ["abcd", "efgh", "ij", "klm", "nopq", "rstu"])
    }

    /// The exact cuts loop while a line is over the limit: a limit of 0 would cut empty pieces forever.
    @Test func aZeroLimitStillEnds() {
        var buffer = LineBuffer(maxLineLength: 0)
        #expect(buffer.append(Array("ab\n".utf8)) == ["a", "b"])
    }

    // MARK: XCTest listing

    /// `.X`, `M.` and nameless tests came back as suites and tests no selector can name.
    @Test func listingDropsClassesAndTestsWithoutANamePart() throws {
        let json = #"""
            {"name":"All tests","tests":[{"name":"debug.xctest","tests":[{"name":".I5InUKnto","tests":[{"name":"testA"}]},
            {"name":"dyaJvuklbk.","tests":[]},{"name":"M.C","tests":[{"name":""},{"name":"testB"}]}]}]}
            """#
        let suites = try XCTestRunner().parseListing(json)
        #expect(suites.map(\.id) == [SuiteID(module: "M", name: "C")])
        #expect(suites.first?.tests == ["testB"])
    }

    // MARK: JSON nested exactly to Foundation's limit

    /// Found by the fuzzer (a console line, then a mutated record): Foundation's JSONDecoder traps (SIGILL in
    /// `JSONError.SourceLocation.sourceLocation(at:fullSource:)`) when a text ends right where its nesting limit of
    /// 512 is reached. A test printing that line crashed the whole run.
    @Test(arguments: [511, 512, 513, 5000])
    func eventStreamLineNestedToTheLimitIsSkipped(depth: Int) {
        let stdout = "\u{25C7} Test accents() started.\n{\"kind\":\"event\",\"payload\":" + String(repeating: "[", count: depth)
        #expect(parse(SwiftTestingEventParser(), stdout: Array(stdout.utf8)).isEmpty)
    }

    @Test(arguments: [511, 512, 513])
    func listingNestedToTheLimitIsRejected(depth: Int) {
        let json = #"{"name":"a","tests":"# + String(repeating: "[", count: depth)
        #expect(throws: ListingError.self) { try XCTestRunner().parseListing(json) }
    }

    /// Brackets inside strings are text, not nesting: a record whose message prints a deep array still counts.
    @Test func bracketsInStringsDoNotCount() throws {
        let text = String(repeating: "[", count: 600) + #"\"]"#
        let stdout = """
            {"kind":"event","payload":{"issue":{"isFailure":true},"kind":"issueRecorded","messages":[{"text":"\(text)"}],"testID":"M.S/f()"}}

            """
        let events = parse(SwiftTestingEventParser(), stdout: Array(stdout.utf8))
        let issue = try #require(events.issues.first)
        #expect(issue.1.message.hasPrefix("[[[["))
        #expect(issue.1.message.hasSuffix("\"]"))
    }

    // MARK: Swift Testing

    /// Instants at both ends of the Double range subtract to infinity.
    @Test func farApartInstantsGiveNoInfiniteDuration() {
        let stdout = """
            {"kind":"event","payload":{"instant":{"absolute":-1.7976931348623157e308},"kind":"testStarted","testID":"M.S/f()/F.swift:1:2"}}
            {"kind":"event","payload":{"instant":{"absolute":1.7976931348623157e308},"kind":"testEnded","testID":"M.S/f()/F.swift:1:2"}}

            """
        let events = parse(SwiftTestingEventParser(), stdout: Array(stdout.utf8))
        #expect(events.ended.count == 1)
        #expect(events.ended.first?.2 == 0)
    }

    /// Line 0, a negative line or an empty file name is no place to show in a report.
    @Test(arguments: [#""filePath":"/w/F.swift","line":0"#, #""filePath":"/w/F.swift","line":-3"#, #""filePath":"","line":4"#])
    func issuesAtNoRealPlaceHaveNoLocation(_ location: String) throws {
        let stdout = """
            {"kind":"event","payload":{"issue":{"isFailure":true,"sourceLocation":{\(location)}},"kind":"issueRecorded","messages":[{"text":"x"}],"testID":"M.S/f()"}}

            """
        let events = parse(SwiftTestingEventParser(), stdout: Array(stdout.utf8))
        let issue = try #require(events.issues.first)
        #expect(issue.1.location == nil)
    }

    // MARK: xcodebuild

    static func xcodebuildUnit(_ tests: [String]) -> WorkUnit {
        WorkUnit(id: 1, items: [WorkItem(suite: SuiteID(module: "AppTests", name: "LoginTests"), framework: .xcodebuild,
                                         destination: "local", tests: tests, isWholeSuite: true, estimate: 1,
                                         source: .noHistory(secondsPerTest: 0.1))])
    }

    /// A parallel-testing clone's line ends a test it never started; when the bundle corrected that verdict, the
    /// correction started the test again, after its end (the collector's order is start → issues → end).
    @Test func bundleCorrectionDoesNotStartATestTheConsoleEnded() {
        let stdout = """
            Test case 'LoginTests.testLogin()' passed on 'Clone 1 of iPhone 16 - App (123)' (0.002 seconds)
            \(XcodebuildRunner.bundleBegin)
            {"testNodes":[{"nodeType":"Test Plan","children":[{"name":"AppTests","nodeType":"Unit test bundle","children":[
            {"name":"LoginTests","nodeType":"Test Suite","children":[{"name":"testLogin()","nodeIdentifier":"LoginTests/testLogin()",
            "nodeType":"Test Case","result":"Failed","durationInSeconds":0.25,
            "children":[{"name":"LoginTests.swift:12: XCTAssertTrue failed","nodeType":"Failure Message"}]}]}]}]}]}

            \(XcodebuildRunner.bundleEnd)

            """
        let events = parse(XcodebuildOutputParser(unit: Self.xcodebuildUnit(["testLogin"])), stdout: Array(stdout.utf8))
        let id = TestID(suite: SuiteID(module: "AppTests", name: "LoginTests"), name: "testLogin")
        #expect(events == [
            .ended(id, .passed, duration: 0.002, reason: nil),
            .issue(id, Issue(kind: .assertion, message: "XCTAssertTrue failed", location: SourceLocation(file: "LoginTests.swift", line: 12))),
            .ended(id, .failed, duration: 0.25, reason: nil),
        ])
    }

    /// Xcode 16 indents a suite's summary by five spaces (MixedTestLog_6_0_macOS.txt): the suite's time was lost.
    @Test(arguments: ["     ", " ", "\t "])
    func summaryIndentedByXcodeGivesTheSuiteTime(_ indent: String) {
        let stdout = """
            Test Suite 'LoginTests' failed at 2025-08-10 01:38:41.939.
            \(indent)Executed 4 tests, with 1 failure (0 unexpected) in 0.166 (0.167) seconds

            """
        let events = parse(XcodebuildOutputParser(unit: Self.xcodebuildUnit(["testLogin"])), stdout: Array(stdout.utf8))
        #expect(events.suiteTimes.map(\.1) == [0.167])
    }

    /// `duration` is read when `durationInSeconds` is absent: `1e308h` is a finite number of hours and an infinite
    /// number of seconds.
    @Test(arguments: ["1.7976931348623157e308m", "1e308h 1e308h", "1e308h"])
    func resultBundleDurationsBeyondAnyClockBecomeZero(_ duration: String) throws {
        let json = """
            {"testNodes":[{"name":"AppTests","nodeType":"Unit test bundle","children":[{"name":"LoginTests","nodeType":"Test Suite",
            "children":[{"name":"testLogin()","nodeIdentifier":"LoginTests/testLogin()","nodeType":"Test Case","result":"Passed",
            "duration":"\(duration)"}]}]}]}
            """
        let results = try XCResultParser.parse(Array(json.utf8))
        #expect(results.map(\.duration) == [0])
    }

    /// A binary property list holding a set (one flipped bit turns an array into one) made Foundation trap while
    /// reading it (swift-corelibs-foundation, Swift 6.3): an .xctestrun file crashed the coordinator.
    @Test func binaryXCTestRunHoldingASetIsRejected() throws {
        let plist: [String: Any] = ["AppTests": ["TestBundlePath": "__TESTROOT__/App.app/PlugIns/AppTests.xctest",
                                                 "Environment": [["Key": "Value"]]]]
        var bytes = [UInt8](try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0))
        // Every object's offset is in the table the trailer points to; the array of one dictionary is marked 0xA1.
        func integer(_ range: Range<Int>) -> Int { bytes[range].reduce(0) { $0 << 8 | Int($1) } }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let count = integer((trailer + 8)..<(trailer + 16)), table = integer((trailer + 24)..<(trailer + 32))
        let offsets = (0..<count).map { i in integer((table + i * offsetSize)..<(table + (i + 1) * offsetSize)) }
        let array = try #require(offsets.first { bytes[$0] == 0xA1 })
        bytes[array] = 0xC1
        let data = Data(bytes)
        #expect(throws: XCTestRunFile.Failure.self) { try XCTestRunFile.parse(data) }
        #expect(throws: XCTestRunFile.Failure.self) { try XCTestRunFile.relocated(data, productFolder: "/Users/me/Products") }
        // The file as written still reads.
        bytes[array] = 0xA1
        #expect(try XCTestRunFile.parse(Data(bytes)).targets == ["AppTests"])
    }

    /// Each test was looked for among its suite's tests before it was added: a list of one class of many tests was
    /// quadratic (FuzzScaling.testList; .xctestrun targets and folders likewise, FuzzScaling.xctestrunTargets). The
    /// set that replaced the search keeps each test once, in the list's order.
    @Test func testListKeepsEachTestOnceInOrder() throws {
        let json = #"{"values":[{"enabledTests":[{"identifier":"T/C/b"},{"identifier":"T/C/a"},{"identifier":"T/C/b"},"#
            + #"{"identifier":"T/D/a"},{"identifier":"T/C/a"}]}]}"#
        let suites = try TestEnumeration.parse(json)
        #expect(suites.map(\.id.name) == ["C", "D"])
        #expect(suites.map(\.tests) == [["b", "a"], ["a"]])
    }
}
