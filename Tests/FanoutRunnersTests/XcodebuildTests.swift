import FanoutCore
import Foundation
import Testing
@testable import FanoutRunners

/// The xcodebuild runner against real captured Xcode output (Tests/Fixtures/Xcodebuild, see its SOURCES.md).
@Suite struct XcodebuildTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Xcodebuild")

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixtures.appendingPathComponent(name)))
    }

    /// A unit of these tests of `Target.Class`.
    static func unit(_ target: String, _ cls: String, _ tests: [String], whole: Bool = true) -> WorkUnit {
        WorkUnit(id: 7, items: [WorkItem(suite: SuiteID(module: target, name: cls), framework: .xcodebuild,
                                         destination: "iphone", tests: tests, isWholeSuite: whole, estimate: 1,
                                         source: .noHistory(secondsPerTest: 1))])
    }

    static let randomStuff = ["testExample", "testExample2", "testExpectedFailure", "testExpectedFailure2", "testFoo",
                              "testPerformanceExample", "testSkippedTest"]

    // MARK: - Console lines

    @Test func macOSConsoleLinesTakeTheLinuxForm() {
        #expect(XcodebuildOutputParser.linuxForm("Test Case '-[XcbeautifyLibTests.CaptureGroupTests testForceFailure]' started.")
                == "Test Case 'CaptureGroupTests.testForceFailure' started.")
        #expect(XcodebuildOutputParser.linuxForm(
            "/Users/runner/CaptureGroupTests.swift:34: error: -[XcbeautifyLibTests.CaptureGroupTests testForceFailure] : XCTAssertTrue failed - True is never false.")
                == "/Users/runner/CaptureGroupTests.swift:34: error: CaptureGroupTests.testForceFailure : XCTAssertTrue failed - True is never false.")
        #expect(XcodebuildOutputParser.linuxForm(
            "Test case 'BuildFlagTests.test_failIntentionally()' failed on 'Clone 1 of iPhone 13 mini - xctest (59522)' (0.278 seconds)")
                == "Test Case 'BuildFlagTests.test_failIntentionally' failed (0.278 seconds).")
        // Lines that merely contain `-[` stay as they are.
        #expect(XcodebuildOutputParser.linuxForm("value -[oops") == "value -[oops")
        #expect(XcodebuildOutputParser.linuxForm("-[NoDot method]") == "NoDot.method", "an Objective-C class")
        #expect(XcodebuildOutputParser.linuxForm("-[Two words here]") == "-[Two words here]")
    }

    /// The real serial macOS log: every test's verdict as its summary line counts them.
    @Test func aRealMacOSLogGivesEveryVerdict() throws {
        let log = try Self.fixture("xcbeautify-TestLog.txt")
        let text = String(decoding: log, as: UTF8.self)
        var classes: [String] = []
        for line in text.split(separator: "\n") where line.hasPrefix("Test Suite '") && line.contains("' started") {
            let name = line.dropFirst("Test Suite '".count).prefix { $0 != "'" }
            if !name.hasSuffix(".xctest"), name != "All tests" { classes.append(String(name)) }
        }
        let unit = WorkUnit(id: 1, items: classes.map {
            WorkItem(suite: SuiteID(module: "XcbeautifyLibTests", name: $0), framework: .xcodebuild, destination: "mac",
                     tests: [], isWholeSuite: true, estimate: 1, source: .noHistory(secondsPerTest: 1))
        })
        for chunk in [1, 7, 4096] {
            let events = parse(XcodebuildOutputParser(unit: unit), stdout: log, chunk: chunk)
            let ended = events.compactMap { e -> (TestID, TestStatus)? in
                if case .ended(let id, let s, _, _) = e { return (id, s) } else { return nil }
            }
            let starts = text.components(separatedBy: "' started.").count - 1
            #expect(ended.count == starts, "every started test ended (chunks of \(chunk))")
            #expect(ended.allSatisfy { $0.0.suite.module == "XcbeautifyLibTests" })
            let failed = ended.filter { $0.1 == .failed }.map(\.0.name)
            #expect(failed == ["testAggregateTarget"] || failed.contains("testAggregateTarget"))
            let issue = events.compactMap { e -> FanoutCore.Issue? in if case .issue(_, let i) = e { return i } else { return nil } }.first
            #expect(issue?.location?.line == 13 && issue?.message.hasPrefix("XCTAssertEqual failed") == true)
        }
    }

    /// Parallel-testing clones name tests without their module and with `()`.
    @Test func parallelCloneLinesGiveVerdicts() throws {
        let log = try Self.fixture("xcbeautify-ParallelTestLog.txt")
        let unit = Self.unit("App", "BuildFlagTests", [])
        let events = parse(XcodebuildOutputParser(unit: unit), stdout: log)
        let ended = events.compactMap { e -> (TestID, TestStatus, Double)? in
            if case .ended(let id, let s, let d, _) = e { return (id, s, d) } else { return nil }
        }
        #expect(ended.count == 21, "one verdict per `Test case` line of the log")
        let fail = try #require(ended.first { $0.0.name == "test_failIntentionally" })
        #expect(fail.0.suite == SuiteID(module: "App", name: "BuildFlagTests"))
        #expect(fail.1 == .failed && fail.2 == 0.278)
        #expect(ended.filter { $0.1 == .skipped }.count == 1)
    }

    /// The real xcpretty-era log of `test-without-building -xctestrun … -only-testing:` (Xcode 8).
    @Test func aRealTestWithoutBuildingLog() throws {
        let log = try Self.fixture("xcodebuild-test-without-building-xctestrun-uitest-fail-xcode8.log")
        let events = parse(XcodebuildOutputParser(unit: Self.unit("viewUITests", "vmtAboutWindow", [])), stdout: log)
        let ended = events.compactMap { e -> (String, TestStatus, Double)? in
            if case .ended(let id, let s, let d, _) = e { return (id.name, s, d) } else { return nil }
        }
        #expect(ended.count == 1)
        #expect(ended.first?.0 == "testConnectToDesktop" && ended.first?.1 == .failed && ended.first?.2 == 22.490)
    }

    // MARK: - Result bundles

    @Test func resultBundleVerdictsOfARealRun() throws {
        let results = try XCResultParser.parse(try Self.fixture("xcresulttool-test-results-tests-failures-xcode26.json"))
        let byName = Dictionary(uniqueKeysWithValues: results.map { ($0.name, $0) })
        #expect(results.count == 7)
        #expect(results.allSatisfy { $0.target == "RandomStuffTests" && $0.suite == "RandomStuffTests" })
        #expect(byName["testExample()"]?.status == .passed)
        #expect(byName["testExample()"]?.duration == 0.0006170272827148438, "durationInSeconds, not the locale's `0,00062s`")
        let foo = try #require(byName["testFoo()"])
        #expect(foo.status == .failed)
        #expect(foo.issues == [FanoutCore.Issue(kind: .assertion, message: "XCTAssertEqual failed: (\"1\") is not equal to (\"2\")",
                                     location: SourceLocation(file: "RandomStuffTests.swift", line: 38))])
        let expected = try #require(byName["testExpectedFailure()"])
        #expect(expected.status == .passed, "an expected failure passes")
        #expect(expected.issues.allSatisfy { !$0.isFailure } && expected.issues.count == 1)
        let skipped = try #require(byName["testSkippedTest()"])
        #expect(skipped.status == .skipped && skipped.issues.isEmpty)
        #expect(skipped.skipReason == "Required API is not available for this test.")
    }

    @Test func uiAndUnitBundlesWithLaunchConfigurations() throws {
        let results = try XCResultParser.parse(try Self.fixture("xcresulttool-test-results-tests-ui-and-unit-xcode26.json"))
        let ids = Set(results.map { "\($0.target)/\($0.suite)/\($0.name)" })
        #expect(ids == ["RandomStuffUITests/RandomStuffUITestsLaunchTests/testLaunch", "RandomStuffUITests/RandomStuffUITests/testExample()",
                        "RandomStuffUITests/RandomStuffUITests/testLaunchPerformance()", "RandomStuffTests/RandomStuffTests/testExample()",
                        "RandomStuffTests/RandomStuffTests/testPerformanceExample()"])
        #expect(results.allSatisfy { $0.status == .passed && $0.duration > 0 })
    }

    @Test func localeDurationsAreReadWhenNoSecondsAreGiven() {
        let seconds = { (text: String) in XCResultParser.seconds(XCResultParser.Node(duration: text)) }
        #expect(seconds("0,18s") == 0.18)
        #expect(seconds("1m 14s") == 74)
        #expect(seconds("12ms") == 0.012)
        #expect(seconds("nonsense") == 0)
    }

    /// A unit of RandomStuffTests, and its output: these console lines, then the real bundle of those tests.
    static func randomStuffUnit(console: String) throws -> (WorkUnit, [UInt8]) {
        let bundle = try fixture("xcresulttool-test-results-tests-failures-xcode26.json")
        let head = console + "\n\(XcodebuildRunner.bundleBegin)\n\n"
        return (unit("RandomStuffTests", "RandomStuffTests", randomStuff),
                Array(head.utf8) + bundle + Array("\n\(XcodebuildRunner.bundleEnd)\n".utf8))
    }

    /// The bundle adds what the console never said and corrects what it said otherwise; the console's issues stay.
    @Test func theBundleCompletesAndCorrectsTheConsole() throws {
        // The console saw testExample pass and testFoo pass (wrongly), then the runner died: nothing else.
        let (unit, stdout) = try Self.randomStuffUnit(console: """
            Test Case '-[RandomStuffTests.RandomStuffTests testExample]' started.
            Test Case '-[RandomStuffTests.RandomStuffTests testExample]' passed (0.001 seconds).
            Test Case '-[RandomStuffTests.RandomStuffTests testFoo]' started.
            Test Case '-[RandomStuffTests.RandomStuffTests testFoo]' passed (0.002 seconds).
            """)
        for chunk in [3, 4096] {
            let events = parse(XcodebuildOutputParser(unit: unit), stdout: stdout, chunk: chunk)
            var collector = UnitCollector(unit: unit, agent: "mac")
            var live: [TestID] = []
            for e in events { if let (id, _) = collector.consume(e) { live.append(id) } }
            let result = collector.finish(.exited(65), diagnostics: "")
            let outcomes = Dictionary(uniqueKeysWithValues: result.attempts.map { ($0.key.name, $0.value.outcome) })
            #expect(outcomes == ["testExample": .passed, "testExample2": .passed, "testExpectedFailure": .passed,
                                 "testExpectedFailure2": .failed, "testFoo": .failed, "testPerformanceExample": .passed,
                                 "testSkippedTest": .skipped])
            #expect(live.count == 7, "each test reported live once, the correction included: \(live.map(\.name))")
            #expect(result.attempts[TestID(suite: unit.items[0].suite, name: "testFoo")]?.issues.first?.location?.line == 38)
            #expect(result.missing.isEmpty)
        }
    }

    /// Xcode prints a skip's reason on a line of its own, which real logs do not always hold: a skip the console gave
    /// no reason takes the bundle's (the one case where the bundle ends a test the console already ended the same
    /// way).
    @Test func aSkipTheConsoleGaveNoReasonTakesTheBundles() throws {
        // The skip line is line 173 of xcbeautify-TestLog.txt, its identity replaced.
        let (unit, stdout) = try Self.randomStuffUnit(console: """
            Test Case '-[RandomStuffTests.RandomStuffTests testSkippedTest]' started.
            Test Case '-[RandomStuffTests.RandomStuffTests testSkippedTest]' skipped (0.000 seconds).
            """)
        for chunk in [5, 4096] {
            var collector = UnitCollector(unit: unit, agent: "mac")
            for e in parse(XcodebuildOutputParser(unit: unit), stdout: stdout, chunk: chunk) { _ = collector.consume(e) }
            let result = collector.finish(.exited(65), diagnostics: "")
            let skipped = try #require(result.attempts[TestID(suite: unit.items[0].suite, name: "testSkippedTest")])
            #expect(skipped.outcome == .skipped)
            #expect(skipped.skipReason == "Required API is not available for this test.", "chunks of \(chunk)")
        }
    }

    /// XCTExpectFailure: the issue is printed, and the test passes. Xcode's verdict stands; the issue is a known one.
    @Test func anExpectedFailureOnTheConsolePasses() {
        let unit = Self.unit("T", "C", ["testKnown", "testBroken"])
        let console = """
            Test Case '-[T.C testKnown]' started.
            /src/C.swift:12: error: -[T.C testKnown] : XCTAssertTrue failed - known bug
            Test Case '-[T.C testKnown]' passed (0.010 seconds).
            Test Case '-[T.C testBroken]' started.
            /src/C.swift:20: error: -[T.C testBroken] : XCTAssertEqual failed
            Test Case '-[T.C testBroken]' failed (0.010 seconds).

            """
        for chunk in [1, 4096] {
            var collector = UnitCollector(unit: unit, agent: "mac")
            collector.consume(parse(XcodebuildOutputParser(unit: unit), stdout: Array(console.utf8), chunk: chunk))
            let result = collector.finish(.exited(65), diagnostics: "")
            let known = result.attempts[TestID(suite: unit.items[0].suite, name: "testKnown")]
            #expect(known?.outcome == .passed && known?.issues.count == 1 && known?.issues.first?.isFailure == false)
            #expect(result.attempts[TestID(suite: unit.items[0].suite, name: "testBroken")]?.outcome == .failed)
        }
    }

    /// The unit's log keeps xcodebuild's own lines; the result bundle and the attachments are one line each.
    @Test func theLogLeavesThePayloadsOut() {
        let unit = Self.unit("T", "C", ["testA"])
        let out = """
            Test Case '-[T.C testA]' started.
            Test Case '-[T.C testA]' failed (0.010 seconds).
            ** TEST EXECUTE FAILED **
            \(XcodebuildRunner.bundleBegin)
            {"testNodes": []}
            \(XcodebuildRunner.bundleEnd)
            \(XcodebuildRunner.attachmentBegin)shot.png ===
            iVBORw0KGgo=
            \(XcodebuildRunner.attachmentEnd)

            """
        var parser = XcodebuildOutputParser(unit: unit)
        _ = parser.consume(stdout: Array(out.utf8))
        _ = parser.finish()
        let log = String(decoding: parser.takeLog() ?? [], as: UTF8.self)
        #expect(log.contains("** TEST EXECUTE FAILED **") && log.contains("Test Case '-[T.C testA]' failed"))
        #expect(!log.contains("testNodes") && !log.contains("iVBORw0KGgo="))
        #expect(log.contains("[fanout: result bundle's test results,") && log.contains("[fanout: attachment shot.png:"))
    }

    /// Objective-C classes have no module prefix; a bundle named after its product, not its target, still matches.
    @Test func objectiveCLinesAndProductNamedBundles() throws {
        #expect(XcodebuildOutputParser.linuxForm("Test Case '-[LegacyTests testOld]' passed (0.010 seconds).")
                == "Test Case 'LegacyTests.testOld' passed (0.010 seconds).")
        let unit = Self.unit("RandomStuffTarget", "RandomStuffTests", ["testExample", "testFoo"])
        let bundle = try Self.fixture("xcresulttool-test-results-tests-failures-xcode26.json")
        let stdout = Array("\(XcodebuildRunner.bundleBegin)\n".utf8) + bundle + Array("\n\(XcodebuildRunner.bundleEnd)\n".utf8)
        let ended = parse(XcodebuildOutputParser(unit: unit), stdout: stdout).compactMap { e -> (String, TestStatus)? in
            if case .ended(let id, let s, _, _) = e { return (id.name, s) } else { return nil }
        }
        #expect(ended.map(\.0) == ["testExample", "testFoo"] && ended.map(\.1) == [.passed, .failed])
    }

    /// Swift Testing functions outside any suite: `Target/func()` in lists and directly under the bundle.
    @Test func topLevelSwiftTestingFunctions() throws {
        let suites = try TestEnumeration.parse(#"{"values":[{"enabledTests":[{"identifier":"AppTests/launches()"},{"identifier":"AppTests/S/t()"}]}]}"#)
        let top = try #require(suites.first { $0.id.name == SuiteID.swiftTestingTopLevel })
        #expect(top.id.module == "AppTests" && top.tests == ["launches()"])
        let item = WorkItem(suite: top.id, framework: .xcodebuild, destination: "d", tests: top.tests, isWholeSuite: true,
                            estimate: 1, source: .noHistory(secondsPerTest: 1))
        #expect(XcodebuildRunner.onlyTesting(for: WorkUnit(id: 1, items: [item])) == ["AppTests/launches()"])
        let json = #"{"testNodes":[{"nodeType":"Unit test bundle","name":"AppTests","children":[{"nodeType":"Test Case","name":"launches()","nodeIdentifier":"launches()","result":"Passed","durationInSeconds":0.5}]}]}"#
        let results = try XCResultParser.parse(Array(json.utf8))
        #expect(results.map(\.suite) == [SuiteID.swiftTestingTopLevel] && results.map(\.name) == ["launches()"])
    }

    @Test func withoutABundleTheConsoleStands() {
        let unit = Self.unit("T", "C", ["testA", "testB"])
        let console = """
            Test Case '-[T.C testA]' started.
            Test Case '-[T.C testA]' failed (0.010 seconds).
            \(XcodebuildRunner.bundleBegin)
            {"broken":
            \(XcodebuildRunner.bundleEnd)

            """
        let events = parse(XcodebuildOutputParser(unit: unit), stdout: Array(console.utf8))
        let ended = events.compactMap { e -> TestStatus? in if case .ended(_, let s, _, _) = e { return s } else { return nil } }
        #expect(ended == [.failed])
    }

    // MARK: - Listing, products, commands

    @Test func aRealTestListGivesSuitesOfTargets() throws {
        let text = String(decoding: try Self.fixture("enumerate-tests-flat-json-xcode16-trimmed.json"), as: UTF8.self)
        let suites = try TestEnumeration.parse(text)
        #expect(suites.count == 16)
        #expect(suites.allSatisfy { $0.id.module == "Feature10Tests" && $0.tests.count == 10 && $0.framework == .xcodebuild })
        #expect(suites.first?.id.name == "Feature10Test100Tests" && suites.first?.tests.first == "testExample1")
        #expect(try TestEnumeration.parse("A/B/c()\nA/Outer/Inner/d()\nnot an id\n").map(\.id.name) == ["B", "Outer/Inner"])
        #expect(throws: ListingError.self) {
            try TestEnumeration.parse(#"{"errors":["Unable to find a destination"],"values":[]}"#)
        }
        let disabled = #"{"errors":[],"values":[{"disabledTests":[{"identifier":"A/B/off"}],"enabledTests":[{"identifier":"A/B/on"}]}]}"#
        #expect(try TestEnumeration.parse(disabled).first?.tests == ["on"])
    }

    @Test func realXCTestRunFilesOfBothFormats() throws {
        let v2 = try XCTestRunFile.parse(Data(try Self.fixture("FakeCounterAppTest_FakeAppTestPlan_iphoneos18.0-arm64.formatv2.xctestrun")))
        #expect(v2.formatVersion == 2)
        #expect(v2.targets == ["FakeCounterAppTests", "FakeCounterAppUITests"])
        #expect(v2.folders == ["Debug-iphoneos"])
        let v1 = try XCTestRunFile.parse(Data(try Self.fixture("SampleXCUITests_iphoneos14.4-arm64.formatv1-uitest.xctestrun")))
        #expect(v1.formatVersion == 1 && v1.targets == ["SampleXCUITests"])
        #expect(!v1.folders.isEmpty)
        #expect(throws: XCTestRunFile.Failure.self) { try XCTestRunFile.parse(Data("not a plist".utf8)) }
    }

    /// `DYLD_FRAMEWORK_PATH` and its kin are `:` lists: each piece counts, and is relocated on its own.
    @Test func pathListsInAnXCTestRun() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>MacTests</key><dict>
              <key>TestBundlePath</key><string>__TESTROOT__/Debug/MacTests.xctest</string>
              <key>TestingEnvironmentVariables</key><dict>
                <key>DYLD_FRAMEWORK_PATH</key><string>__TESTROOT__/Debug:__PLATFORMS__/MacOSX.platform/Developer/Library/Frameworks</string>
                <key>DYLD_LIBRARY_PATH</key><string>/Users/me/Build/Products/PackageFrameworks:__TESTROOT__/Debug</string>
              </dict>
            </dict>
            <key>__xctestrun_metadata__</key><dict><key>FormatVersion</key><integer>1</integer></dict>
            </dict></plist>
            """
        let file = try XCTestRunFile.parse(Data(plist.utf8))
        #expect(file.folders == ["Debug"] && file.targets == ["MacTests"])
        let moved = try #require(try XCTestRunFile.relocated(Data(plist.utf8), productFolder: "/Users/me/Build/Products"))
        #expect(String(decoding: moved, as: UTF8.self).contains("__TESTROOT__/PackageFrameworks:__TESTROOT__/Debug"))
        #expect(try XCTestRunFile.parse(moved).folders == ["Debug", "PackageFrameworks"])
    }

    @Test func absolutePathsIntoTheProductFolderAreRelocated() throws {
        let data = Data(try Self.fixture("FakeCounterAppTest_FakeAppTestPlan_iphoneos18.0-arm64.formatv2.xctestrun"))
        #expect(try XCTestRunFile.relocated(data, productFolder: "/Users/me/Build/Products") == nil, "already relative")
        let text = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "__TESTROOT__/", with: "/Users/me/Build/Products/")
        let moved = try #require(try XCTestRunFile.relocated(Data(text.utf8), productFolder: "/Users/me/Build/Products"))
        let again = try XCTestRunFile.parse(moved)
        #expect(again.folders == ["Debug-iphoneos"] && again.targets.count == 2)
        #expect(!String(decoding: moved, as: UTF8.self).contains("/Users/me/Build/Products/"))
    }

    @Test func theUnitCommandSelectsExactlyItsTestsOnTheSlotsSimulator() throws {
        var device = Device(platform: "iOS Simulator", model: "iPhone 16", os: "18.2")
        var destination = Destination(name: "iphone", environment: ["DEVELOPER_DIR": "/Applications/Xcode 16.app"],
                                      arguments: ["-test-timeouts-enabled", "YES"], device: device)
        let whole = Self.unit("AppTests", "LoginTests", ["testA", "testB"])
        #expect(throws: RunnerError.self) { try XcodebuildRunner().command(for: whole, binary: "/b/App.xctestrun", destination: destination) }
        device.udid = "A201851A-8D41-48D2-86EE-319440740DAA"
        destination.device = device
        let command = try XcodebuildRunner().command(for: whole, binary: "/b/my app.xctestrun", destination: destination)
        #expect(command.executable == "/bin/sh" && command.environment["DEVELOPER_DIR"] == "/Applications/Xcode 16.app")
        let script = command.arguments[1]
        #expect(script.contains("-xctestrun '/b/my app.xctestrun'"))
        #expect(script.contains("-destination 'platform=iOS Simulator,id=A201851A-8D41-48D2-86EE-319440740DAA'"))
        #expect(script.contains("-only-testing:AppTests/LoginTests") && !script.contains("LoginTests/testA"))
        #expect(script.contains("-parallel-testing-enabled NO") && script.contains("-test-timeouts-enabled YES"))
        #expect(script.contains("xcresulttool get test-results tests"))
        let part = Self.unit("AppTests", "LoginTests", ["testA", "test'B"], whole: false)
        #expect(XcodebuildRunner.onlyTesting(for: part) == ["AppTests/LoginTests/testA", "AppTests/LoginTests/test'B"])
        let quoted = try XcodebuildRunner().command(for: part, binary: "/b/x.xctestrun", destination: destination).arguments[1]
        #expect(quoted.contains(#"'-only-testing:AppTests/LoginTests/test'\''B'"#), "every value quoted by ShellQuote")
        // The worker identity reaches the test process through xcodebuild's TEST_RUNNER_ prefix.
        destination.environment = WorkerIdentity(runID: "r1", workers: 4, agent: "mac-1", slot: 1, worker: 3, destination: "iphone")
            .environment(configured: destination.environment)
        let env = try XcodebuildRunner().command(for: whole, binary: "/b/x.xctestrun", destination: destination).environment
        #expect(env["TEST_RUNNER_FANOUT_WORKER"] == "3" && env["FANOUT_WORKER"] == "3" && env["TEST_RUNNER_FANOUT_AGENT"] == "mac-1")
        #expect(env["TEST_RUNNER_DEVELOPER_DIR"] == nil, "the rest stays xcodebuild's own")
    }

    @Test func devicesNameTheirSimulatorTypesAndRuntimes() {
        let iPad = Device(platform: "iOS Simulator", model: "iPad Pro (12.9-inch) (6th generation)", os: "17.5")
        #expect(iPad.deviceTypeIdentifier == "com.apple.CoreSimulator.SimDeviceType.iPad-Pro-12-9-inch-6th-generation")
        #expect(iPad.runtimeIdentifier == "com.apple.CoreSimulator.SimRuntime.iOS-17-5")
        #expect(iPad.identity == "iPad Pro (12.9-inch) (6th generation), iOS Simulator 17.5")
        #expect(iPad.destinationSpecifier == "platform=iOS Simulator,name=iPad Pro (12.9-inch) (6th generation),OS=17.5")
        #expect(Device(platform: "visionOS Simulator", model: "Apple Vision Pro", os: "2.0").runtimeIdentifier
                == "com.apple.CoreSimulator.SimRuntime.xrOS-2-0")
        let tv = Device(platform: "tvOS Simulator", model: "Apple TV 4K (3rd generation)", os: "18.0", runtime: "custom.runtime")
        #expect(tv.runtimeIdentifier == "custom.runtime" && tv.osName == "tvOS")
        let mac = Device(platform: "macOS")
        #expect(!mac.isSimulator && mac.destinationSpecifier == "platform=macOS" && mac.identity == "macOS")
    }

    /// The device types and runtimes of a real `simctl list -j devices` are spelled as Device derives them.
    @Test func derivedIdentifiersMatchARealSimulatorList() throws {
        struct List: Decodable {
            struct Entry: Decodable { var name: String; var deviceTypeIdentifier: String?; var udid: String }
            var devices: [String: [Entry]]
        }
        let list = try JSONDecoder().decode(List.self, from: Data(try Self.fixture("simctl-list-devices-j.json")))
        var checked = 0
        for (runtime, entries) in list.devices {
            for e in entries {
                #expect(SimulatorCommands.isUDID(e.udid))
                guard let type = e.deviceTypeIdentifier, !e.name.contains("("), !e.name.contains("-") else { continue }
                let version = runtime.split(separator: ".").last.map { $0.split(separator: "-").dropFirst().joined(separator: ".") } ?? ""
                let device = Device(platform: "iOS Simulator", model: e.name, os: version)
                #expect(device.deviceTypeIdentifier == type, "\(e.name)")
                #expect(device.runtimeIdentifier == runtime)
                checked += 1
            }
        }
        #expect(checked > 10)
    }

    @Test func simulatorCommandsQuoteAndReadTheNewDevice() {
        let device = Device(platform: "iOS Simulator", model: "iPhone 16", os: "18.2", xcrun: "/opt/x tools/xcrun")
        let create = SimulatorCommands.create(device, name: "fanout r1 agent-1 slot 0 iphone", environment: [:])
        #expect(create.arguments[1] == "'/opt/x tools/xcrun' simctl create 'fanout r1 agent-1 slot 0 iphone' "
                + "'iPhone 16' com.apple.CoreSimulator.SimRuntime.iOS-18-2", "the model by its name, which simctl resolves")
        #expect(SimulatorCommands.createdUDID("A201851A-8D41-48D2-86EE-319440740DAA\n") == "A201851A-8D41-48D2-86EE-319440740DAA")
        #expect(SimulatorCommands.createdUDID("Invalid device type: x\n") == nil)
        #expect(SimulatorCommands.erase(device, udid: "A201851A-8D41-48D2-86EE-319440740DAA", environment: [:])
            .arguments[1].contains("simctl erase A201851A-8D41-48D2-86EE-319440740DAA"))
    }
}
