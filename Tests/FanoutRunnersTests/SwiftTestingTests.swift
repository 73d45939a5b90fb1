import FanoutCore
import Testing
@testable import FanoutRunners

@Suite(.timeLimit(.minutes(2))) struct SwiftTestingTests {
    @Test func passingRunFromTheEventStream() throws {
        let events = parse(SwiftTestingEventParser(), stdout: try Captures.bytes("swift-testing-pass.jsonl"))
        #expect(events.started.count == 4, "suites and parameterized test cases are not tests of their own")
        #expect(events.ended.count == 4)
        #expect(events.ended.allSatisfy { $0.1 == .passed && $0.2 >= 0 })
        #expect(events.started.allSatisfy { $0.suite == SuiteID(module: "DemoKitTests", name: "MathSuite") })
        #expect(events.started.contains { $0.name == "primesArePrime(n:)" })
        #expect(events.suiteTimes.first?.0 == SuiteID(module: "DemoKitTests", name: "MathSuite"))
    }

    @Test func failureVerdictComesFromTheIssuesRecorded() throws {
        let events = parse(SwiftTestingEventParser(), stdout: try Captures.bytes("swift-testing-fail.jsonl"))
        let failed = events.ended.filter { $0.1 == .failed }
        #expect(failed.map(\.0.name) == ["multiplication()"])
        let (id, issue) = try #require(events.issues.first)
        #expect(id.name == "multiplication()")
        #expect(issue.isFailure)
        #expect(issue.message.contains("Expectation failed"))
        #expect(issue.location?.file.hasSuffix("MathSuite.swift") == true)
        #expect(issue.location?.line == 13)
    }

    @Test func versionZeroStreamParsesTheSame() throws {
        let events = parse(SwiftTestingEventParser(), stdout: try Captures.bytes("swift-testing-fail-v0.jsonl"))
        #expect(events.ended.contains { $0.1 == .failed })
        #expect(!events.issues.isEmpty)
    }

    @Test func skipsCarryTheirReasonAndNestedSuitesKeepTheirPath() throws {
        let events = parse(SwiftTestingEventParser(), stdout: try Captures.bytes("swift-testing-strings.jsonl"))
        let skipped = try #require(events.ended.first { $0.1 == .skipped })
        #expect(skipped.0.name == "localeAwareCapitalisation()")
        #expect(skipped.3 == "waiting for locale-aware capitalisation")
        #expect(events.ended.contains { $0.0.suite.name == "StringSuite/Unicode" })
    }

    /// A test's own `print` on the same line as a record, after it (captured from FlyingFox 0.27.1) or before it:
    /// the record still counts, so a test that passed is not called crashed at the unit's exit.
    @Test func aRecordSharingItsLineWithATestsOutputStillCounts() throws {
        let captured = try Captures.bytes("swift-testing-interleaved-flyingfox.jsonl")
        let events = parse(SwiftTestingEventParser(), stdout: captured)
        #expect(events.started.map(\.name) == ["socketRead0Byte_ReturnsEmptyArray()"])
        #expect(events.ended.map(\.0.name) == ["socketRead0Byte_ReturnsEmptyArray()"])
        #expect(events.ended.first?.1 == .passed)
        // The same records with output before them on their lines.
        let text = String(decoding: captured, as: UTF8.self).split(separator: "\n").map { "noise {not json} " + $0 }
        let prefixed = parse(SwiftTestingEventParser(), stdout: Array((text.joined(separator: "\n") + "\n").utf8))
        #expect(prefixed.ended.map(\.1) == [.passed])
        // An object ends at its closing brace outside strings; one cut short is none.
        let line = #"x{"kind":"test","payload":{"n":"a\"}b"}}tail"#
        let open = try #require(line.firstIndex(of: "{"))
        #expect(SwiftTestingEventParser.object(in: line, from: open) == #"{"kind":"test","payload":{"n":"a\"}b"}}"#)
        let cut = #"{"kind":"event","payload":{"a":"}"}"#
        #expect(SwiftTestingEventParser.object(in: cut, from: cut.startIndex) == nil)
    }

    @Test func nothingMatchedProducesNoEvents() throws {
        let events = parse(SwiftTestingEventParser(), stdout: try Captures.bytes("swift-testing-nomatch.jsonl"))
        #expect(events.isEmpty)
    }

    @Test func listingHandlesSuitesNestedSuitesAndFreeFunctions() throws {
        let suites = try SwiftTestingRunner().parseListing(try Captures.text("swift-testing-list.txt"))
        let byName = Dictionary(uniqueKeysWithValues: suites.map { ($0.id.description, $0.tests) })
        #expect(byName["DemoKitTests.MathSuite"]?.count == 4)
        #expect(byName["DemoKitTests.StringSuite/Unicode"] == ["accents()"])
        #expect(byName["DemoKitTests.(top level)"] == ["freeStandingGCD()"])
        #expect(byName["IntegrationTests.CheckoutSuite"]?.count == 2)
        let verbose = try SwiftTestingRunner().parseListing(try Captures.text("swift-testing-list-verbose.txt"))
        #expect(Set(verbose.map(\.id)) == Set(suites.map(\.id)), "source locations are not part of the name")
    }

    /// A binary without Swift Testing answers `--testing-library swift-testing --list-tests` with XCTest's listing
    /// (seen on weichsel/ZIPFoundation 0.9.20): before, its header became a phantom test `xctest:` that every run
    /// reported not run (exit 3 on a green suite).
    @Test func xctestsOwnListingIsNotSwiftTestingTests() throws {
        let listing = try Captures.text("swift-testing-list-xctest-only.txt")
        #expect(listing.hasPrefix("Listing 111 tests in debug.xctest:"))
        #expect(try SwiftTestingRunner().parseListing(listing).isEmpty)
        #expect(SwiftTestingNames.isXCTestListingHeader("Listing 1 test in debug.xctest:"))
        #expect(!SwiftTestingNames.isXCTestListingHeader("DemoKitTests.Listing/tests()"))
    }

    @Test func filtersAreAnchoredAndEscaped() {
        var u = unit([("DemoKitTests", "MathSuite"), ("DemoKitTests", "StringSuite/Unicode")], framework: .swiftTesting)
        #expect(SwiftTestingRunner.filters(for: u) == ["^DemoKitTests\\.MathSuite/", "^DemoKitTests\\.StringSuite/Unicode/"])
        u.items[0].tests = ["primesArePrime(n:)"]
        u.items[0].isWholeSuite = false
        #expect(SwiftTestingRunner.filters(for: u)[0] == "^DemoKitTests\\.MathSuite/primesArePrime\\(n:\\)(/|$)")
        let free = WorkUnit(id: 2, items: [WorkItem(
            suite: SuiteID(module: "DemoKitTests", name: SwiftTestingNames.topLevelSuite), framework: .swiftTesting,
            destination: "local", tests: ["freeStandingGCD()"], isWholeSuite: true, estimate: 1,
            source: .noHistory(secondsPerTest: 0.1))])
        #expect(SwiftTestingRunner.filters(for: free) == ["^DemoKitTests\\.freeStandingGCD\\(\\)(/|$)"])
    }

    @Test func commandStreamsEventsToStandardOutput() throws {
        var u = unit([("M", "S")], framework: .swiftTesting)
        u.items[0].tests = ["t()"]
        let c = try SwiftTestingRunner().command(for: u, binary: "/b/X.xctest", destination: .local)
        #expect(c.arguments.starts(with: ["--testing-library", "swift-testing"]))
        #expect(c.arguments.contains("/dev/stdout"))
        #expect(c.arguments.contains("^M\\.S/"))
    }

    @Test func neverTrapsOnGarbageOrTruncatedRecords() throws {
        let real = try Captures.bytes("swift-testing-fail.jsonl")
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var bytes = real
            for _ in 0..<5 { bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            let cut = Int.random(in: 0..<bytes.count, using: &rng)
            _ = parse(SwiftTestingEventParser(), stdout: Array(bytes[..<cut]), chunk: 97)
        }
        for line in ["{", "{}", "{\"kind\":\"event\"}", "{\"kind\":\"event\",\"payload\":{\"kind\":\"testEnded\",\"testID\":\"/\"}}",
                     "{\"kind\":\"event\",\"payload\":{\"kind\":\"testStarted\",\"testID\":\"a.b/c/d.swift:1:1\"}}"] {
            _ = parse(SwiftTestingEventParser(), stdout: Array((line + "\n").utf8))
        }
    }
}
