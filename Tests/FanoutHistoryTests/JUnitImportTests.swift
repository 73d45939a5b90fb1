import FanoutCore
@testable import FanoutHistory
import Foundation
import Testing

/// `fanout history import --junit`: timings seeded from JUnit XML land where the estimator looks for them.
@Suite("Seeding the history from JUnit XML", .timeLimit(.minutes(2)))
struct JUnitImportTests {
    static let captured = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Captured")
    /// `swift test --parallel --xunit-output` on the demo suite (see Fixtures/Captured/README.md).
    let xctestFile = captured.appendingPathComponent("swift-test-xunit.xml").path
    let swiftTestingFile = captured.appendingPathComponent("swift-test-xunit-swift-testing.xml").path
    let reader = JUnitHistoryReader(destination: nil, defaultDestination: "local", fanoutVersion: "test",
                                    now: Date(timeIntervalSince1970: 1_800_000_000))

    /// The fixture's own times per class, read with a regex rather than the importer's parser.
    func timesByClass(_ path: String) throws -> [String: [Double]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"<testcase classname="([^"]+)" name="[^"]+" time="([0-9.]+)""#)
        var times: [String: [Double]] = [:]
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            guard let name = Range(match.range(at: 1), in: text), let time = Range(match.range(at: 2), in: text),
                  let seconds = Double(text[time]) else { continue }
            times[String(text[name]), default: []].append(seconds)
        }
        return times
    }

    @Test func theRealSwiftTestXUnitFileTeachesEveryClassItsTime() throws {
        let store = try HistoryStore.inMemory()
        let (run, warnings) = try reader.read(from: xctestFile)
        #expect(warnings.isEmpty)
        #expect(try store.importRuns([run]).imported == [run.runID])

        let history = try store.timingHistory(destination: "local")
        let expected = try timesByClass(xctestFile)
        #expect(expected.count == 50, "the demo suite's 50 XCTest classes")
        #expect(history.classes.count == 50)
        for (classname, times) in expected {
            let dot = try #require(classname.firstIndex(of: "."))
            let suite = SuiteID(module: String(classname[..<dot]), name: String(classname[classname.index(after: dot)...]))
            let sample = try #require(history.classes[suite]?.first, "\(suite) has no sample")
            #expect(sample.testCount == times.count, "\(suite)")
            #expect(abs(sample.duration - times.reduce(0, +)) < 1e-9, "\(suite)")
        }
        // The failing test (DEMO_FAIL=1) still teaches its time, as a failed class does in a real run.
        let multiply = TestID(module: "DemoKitTests", suite: "ArithmeticTests", name: "testMultiply")
        #expect(run.tests.first { $0.id == multiply }?.outcome == .failed)
        #expect(history.tests[multiply]?.count == 1)
        #expect(history.tests.count == 196)
        #expect(run.counts.total == 196 && run.counts.failed == 1 && run.exitCode == 1)
        #expect(history.secondsPerTest.map { $0 > 0.1 && $0 < 1 } == true, "\(String(describing: history.secondsPerTest))")
        // The file has no timestamp: the run starts at the import.
        #expect(run.startedAt == Date(timeIntervalSince1970: 1_800_000_000))
    }

    @Test func swiftTestingNamesBecomeTheSuitesDiscoveryLists() throws {
        let (run, _) = try reader.read(from: swiftTestingFile)
        let suites = Set(run.classes.map { "\($0.module).\($0.suite)" })
        #expect(suites == ["DemoKitTests.(top level)", "DemoKitTests.MathSuite", "DemoKitTests.TrivialSuite",
                           "DemoKitTests.StringSuite", "DemoKitTests.StringSuite/Unicode",
                           "IntegrationTests.CheckoutSuite"])
        #expect(run.classes.allSatisfy { $0.framework == .swiftTesting })
        let skipped = try #require(run.tests.first { $0.name == "localeAwareCapitalisation()" })
        #expect(skipped.outcome == .skipped)
        #expect(run.tests.first { $0.name == "accents()" }?.suite == "StringSuite/Unicode")
        #expect(run.tests.first { $0.name == "freeStandingGCD()" }?.suite == SuiteID.swiftTestingTopLevel)
        // A skipped test counts in its class's test count (discovery lists it too) but adds no time.
        let strings = try #require(run.classes.first { $0.suite == "StringSuite" })
        #expect(strings.testCount == 5 && strings.outcome == .passed && strings.timingComplete)
    }

    @Test func importingTheSameFileTwiceAddsNothing() throws {
        let store = try HistoryStore.inMemory()
        let first = try reader.read(from: xctestFile).run
        let later = JUnitHistoryReader(destination: nil, defaultDestination: "local", fanoutVersion: "test",
                                       now: Date(timeIntervalSince1970: 1_900_000_000))
        _ = try store.importRuns([first])
        let again = try store.importRuns([later.read(from: xctestFile).run])
        #expect(again.alreadyPresent == [first.runID] && again.imported.isEmpty)
        // Another destination is another run.
        let release = JUnitHistoryReader(destination: "release", defaultDestination: "local", fanoutVersion: "test")
        #expect(try store.importRuns([release.read(from: xctestFile).run]).imported.count == 1)
        #expect(try store.timingHistory(destination: "release").classes.count == 50)
    }

    @Test(arguments: [
        ("DemoKitTests.ArithmeticTests", "testAdd", "DemoKitTests.ArithmeticTests/testAdd", Framework.xctest),
        ("DemoKitTests/ArithmeticTests", "testAdd", "DemoKitTests.ArithmeticTests/testAdd", .xctest),
        ("DemoKitTests.MathSuite", "multiplication()", "DemoKitTests.MathSuite/multiplication()", .swiftTesting),
        ("DemoKitTests.StringSuite.Unicode", "accents()", "DemoKitTests.StringSuite/Unicode/accents()", .swiftTesting),
        ("DemoKitTests.StringSuite/Unicode", "accents()", "DemoKitTests.StringSuite/Unicode/accents()", .swiftTesting),
        ("DemoKitTests", "freeStandingGCD()", "DemoKitTests.(top level)/freeStandingGCD()", .swiftTesting),
        ("AppTests.LoginTests", "testLogin [release]", "AppTests.LoginTests/testLogin", .xctest),
    ])
    func classnamesMapToDiscoveredIDs(classname: String, name: String, expected: String, framework: Framework) throws {
        let (id, found) = try #require(JUnitHistoryReader.testID(classname: classname, name: name,
                                                                 destination: "release"))
        #expect(id.description == expected)
        #expect(found == framework)
    }

    @Test func aClassnameWithoutAModuleCannotMatch() {
        #expect(JUnitHistoryReader.testID(classname: "ArithmeticTests", name: "testAdd", destination: nil) == nil)
        #expect(JUnitHistoryReader.testID(classname: "", name: "testAdd", destination: nil) == nil)
        #expect(JUnitHistoryReader.testID(classname: ".Tests", name: "testAdd", destination: nil) == nil)
    }

    /// Fanout's own junit.xml: destinations as properties, Surefire's flaky and rerun elements, crash errors.
    @Test func fanoutsOwnJUnitKeepsDestinationsRetriesAndCrashes() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites name="fanout r1">
              <testsuite name="release/AppTests" tests="5" timestamp="2027-01-15T08:00:00">
                <properties><property name="destination" value="release"/><property name="module" value="AppTests"/></properties>
                <testcase classname="AppTests.LoginTests" name="testA [release]" time="1.5"/>
                <testcase classname="AppTests.LoginTests" name="testB [release]" time="0.5">
                  <properties><property name="destination" value="not-this"/></properties>
                  <flakyFailure message="boom" type="assertion"><stackTrace>x</stackTrace></flakyFailure>
                </testcase>
                <testcase classname="AppTests.CartTests" name="testC [release]" time="2">
                  <failure message="no" type="assertion">body</failure>
                  <rerunFailure message="no" type="assertion"/>
                </testcase>
                <testcase classname="AppTests.CrashTests" name="testD [release]" time="0.1"><error type="crash"/></testcase>
                <testcase classname="AppTests.CrashTests" name="testE [release]" time="0"><error type="timeout"/></testcase>
              </testsuite>
              <testsuite name="other" tests="1">
                <testcase classname="AppTests.LoginTests" name="testA" time="0.25"><skipped message="later"/></testcase>
              </testsuite>
            </testsuites>
            """
        let (run, _) = try reader.run(from: Data(xml.utf8), path: "junit.xml")
        func test(_ name: String) throws -> HistoryRun.TestRun { try #require(run.tests.first { $0.name == name }) }
        #expect(try test("testA").destination == "release")
        #expect(try test("testB").outcome == .flaky)
        #expect(try test("testB").attempts.map(\.outcome) == [.failed, .passed])
        #expect(try test("testC").outcome == .failed)
        #expect(try test("testC").attempts.map(\.outcome) == [.failed, .failed])
        #expect(try test("testD").outcome == .crashed)
        #expect(try test("testE").outcome == .timedOut)
        #expect(run.tests.filter { $0.destination == "local" }.map(\.outcome) == [.skipped])
        #expect(run.destinations == ["release", "local"])
        #expect(run.startedAt == ISO8601Timestamp.date(from: "2027-01-15T08:00:00Z"))

        let store = try HistoryStore.inMemory()
        _ = try store.importRuns([run])
        let release = try store.timingHistory(destination: "release")
        // Crashed classes never teach; a flaky class does, with the whole time of its tests.
        #expect(release.classes.keys.map(\.name).sorted() == ["CartTests", "LoginTests"])
        #expect(release.classes[SuiteID(module: "AppTests", name: "LoginTests")]?.first?.duration == 2)
        #expect(try store.flakyTests().map(\.test.name) == ["testB"])
        #expect(try store.timingHistory(destination: "local").classes.isEmpty, "an all-skipped class teaches nothing")
    }

    @Test func theDestinationFlagWinsOverTheFile() throws {
        let xml = """
            <testsuite name="x"><properties><property name="destination" value="release"/></properties>
            <testcase classname="AppTests.LoginTests" name="testA [release]" time="1"/></testsuite>
            """
        let forced = JUnitHistoryReader(destination: "linux", defaultDestination: "local", fanoutVersion: "test")
        let run = try forced.run(from: Data(xml.utf8), path: "junit.xml").run
        #expect(run.destinations == ["linux"])
        #expect(run.tests.map(\.name) == ["testA"], "the suffix of the file's own destination still goes")
    }

    @Test func testCasesWithoutAModuleAreLeftOutWithAWarning() throws {
        let xml = """
            <testsuites><testsuite name="x">
            <testcase classname="AppTests.LoginTests" name="testA" time="1"/>
            <testcase classname="LoginTests" name="testB" time="1"/>
            </testsuite></testsuites>
            """
        let (run, warnings) = try reader.run(from: Data(xml.utf8), path: "junit.xml")
        #expect(run.tests.map(\.name) == ["testA"])
        #expect(warnings.count == 1 && warnings[0].contains("LoginTests/testB"), "\(warnings)")
    }

    @Test(arguments: [
        ("<testsuites><testsuite><testcase classname=\"A.B\" name=\"t\"", "cut short"),
        ("<testsuites><testsuite></testcase></testsuites>", "not well-formed XML"),
        ("{\"format\": \"fanout-history\"}", "it is JSON"),
        ("<testsuites><testsuite name=\"empty\"/></testsuites>", "no <testcase>"),
        ("<html><testcase classname=\"A.B\" name=\"t\"/></html>", "root element is <html>"),
        ("<testsuite><testcase classname=\"B\" name=\"t\"/></testsuite>", "names its module"),
        ("<testsuites><testsuite name=\"x\"><testcase classname=\"A.B\" name=\"t\" time=\"1\"/>", "cut short"),
        ("", "empty"),
    ])
    func badJUnitFilesSayWhatIsWrong(text: String, expected: String) {
        #expect(throws: HistoryFileError.self) { try reader.run(from: Data(text.utf8), path: "in.xml") }
        do {
            _ = try reader.run(from: Data(text.utf8), path: "in.xml")
        } catch {
            guard case .notJUnit = error else {
                Issue.record("\(error)")
                return
            }
            #expect(error.description.contains(expected), "\(error)")
            #expect(error.description.contains("swift test --xunit-output"), "says what to give instead")
        }
    }
}
