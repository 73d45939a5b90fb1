import FanoutCore
import Testing

/// The quarantine's rules: which entry applies to a test, when it expires, what `skip` takes out of a run and how a
/// muted failure is counted.
@Suite struct QuarantineTests {
    static func entry(_ test: String, _ mode: QuarantineMode = .mute, destination: String? = nil,
                      expires: String = "2026-12-31") -> QuarantineEntry {
        QuarantineEntry(test: test, destination: destination, mode: mode, reason: "flaky", owner: "@me",
                        added: "2026-11-01", expires: expires)
    }

    static let network = TestID(module: "App", suite: "Network", name: "testFetch")

    @Test func anEntryNamesOneTestOrAWholeClassOnOneOrEveryDestination() {
        #expect(Self.entry("App.Network/testFetch").matches(Self.network, destination: "linux"))
        #expect(Self.entry("App.Network").matches(Self.network, destination: "linux"))
        #expect(!Self.entry("App.Network/testFetchAll").matches(Self.network, destination: "linux"))
        #expect(!Self.entry("App.Net").matches(Self.network, destination: "linux"), "a prefix of the class is not the class")
        #expect(Self.entry("App.Network", destination: "linux").matches(Self.network, destination: "linux"))
        #expect(!Self.entry("App.Network", destination: "ios").matches(Self.network, destination: "linux"))
    }

    @Test func itAppliesThroughItsExpiryDayAndNotTheDayAfter() {
        let e = Self.entry("App.Network", expires: "2026-11-26")
        #expect(!e.isExpired(today: "2026-11-26"))
        #expect(e.isExpired(today: "2026-11-27"))
        let q = Quarantine(entries: [e])
        #expect(q.entry(for: Self.network, destination: "d", today: "2026-11-26") == e)
        #expect(q.entry(for: Self.network, destination: "d", today: "2026-11-27") == nil)
        #expect(q.expired(today: "2026-12-01") == [e])
    }

    @Test func theMostSpecificEntryWins() {
        let q = Quarantine(entries: [Self.entry("App.Network", .skip), Self.entry("App.Network/testFetch", .mute),
                                     Self.entry("App.Network/testFetch", .skip, destination: "ios")])
        #expect(q.entry(for: Self.network, destination: "linux", today: "2026-11-26")?.mode == .mute, "the test's own entry")
        #expect(q.entry(for: Self.network, destination: "ios", today: "2026-11-26")?.destination == "ios")
        let other = TestID(module: "App", suite: "Network", name: "testOther")
        #expect(q.entry(for: other, destination: "linux", today: "2026-11-26")?.mode == .skip, "the class's entry")
    }

    static func catalog() -> Catalog {
        Catalog(suites: [TestSuite(id: SuiteID(module: "App", name: "Network"), framework: .xctest,
                                   tests: ["testFetch", "testOther"]),
                         TestSuite(id: SuiteID(module: "App", name: "Disk"), framework: .xctest, tests: ["testWrite"]),
                         TestSuite(id: SuiteID(module: "App", name: "Math"), framework: .swiftTesting, tests: ["add()"])])
    }

    @Test func skipTakesTestsOutAndReportsThemAndMuteOnlyMarksThem() {
        let q = Quarantine(entries: [Self.entry("App.Network/testFetch", .skip), Self.entry("App.Disk", .skip),
                                     Self.entry("App.Math/add()", .mute)])
        let plan = QuarantinePlan(q, selected: ["linux": Self.catalog()], full: ["linux": Self.catalog()], today: "2026-11-26")
        let left = Set(plan.catalogs["linux"]?.suites.flatMap { $0.testIDs.map(\.description) } ?? [])
        #expect(left == ["App.Network/testOther", "App.Math/add()"], "App.Disk has no test left: it is gone")
        #expect(plan.trimmed == ["linux|App.Network"], "a class that lost some tests is selected test by test")
        #expect(Set(plan.outcome.skipped.map(\.id.description)) == ["App.Network/testFetch", "App.Disk/testWrite"])
        #expect(plan.outcome.skipped.allSatisfy { $0.outcome == .skipped && $0.quarantine?.mode == .skip })
        #expect(plan.outcome.skipped.allSatisfy { $0.attempts.first?.skipReason == "quarantined (skip): flaky" })
        #expect(plan.outcome.muted.keys.sorted() == ["linux|App.Math/add()"])
        #expect(plan.outcome.warnings.isEmpty)

        var items = [WorkItem(suite: SuiteID(module: "App", name: "Network"), framework: .xctest, destination: "linux",
                              tests: ["testOther"], isWholeSuite: true, estimate: 1, source: .history(samples: 1)),
                     WorkItem(suite: SuiteID(module: "App", name: "Math"), framework: .swiftTesting, destination: "linux",
                              tests: ["add()"], isWholeSuite: true, estimate: 1, source: .history(samples: 1))]
        plan.mark(&items)
        #expect(items.map(\.isWholeSuite) == [false, true])
    }

    @Test func anEntryForATestThatIsGoneWarnsAndOneFilteredOutDoesNot() {
        let q = Quarantine(entries: [Self.entry("App.Gone/testX"), Self.entry("App.Disk/testWrite"),
                                     Self.entry("App.Old", expires: "2026-01-01")])
        var selected = Self.catalog()
        selected = selected.filter { $0.id.name == "Network" }
        let plan = QuarantinePlan(q, selected: ["linux": selected], full: ["linux": Self.catalog()], today: "2026-11-26")
        #expect(plan.outcome.warnings.count == 2, "\(plan.outcome.warnings)")
        #expect(plan.outcome.warnings.contains { $0.contains("App.Gone/testX matches no test") })
        #expect(plan.outcome.warnings.contains { $0.contains("App.Old expired on 2026-01-01") })
        #expect(plan.outcome.muted.isEmpty, "App.Disk is not selected in this run")
    }

    @Test func aMutedFailureIsCountedApartAndDoesNotFailTheRun() {
        var muted = TestResult(id: Self.network, framework: .xctest, destination: "linux", outcome: .failed,
                               attempts: [Attempt(outcome: .failed, duration: 1, unit: 1, agent: "a")])
        muted.quarantine = Self.entry("App.Network/testFetch")
        let passed = TestResult(id: TestID(module: "App", suite: "Disk", name: "testWrite"), framework: .xctest,
                                destination: "linux", outcome: .passed,
                                attempts: [Attempt(outcome: .passed, duration: 1, unit: 1, agent: "a")])
        let counts = Counts(results: [muted, passed])
        #expect(counts.total == 2 && counts.muted == 1 && counts.failed == 0 && counts.failures == 0 && counts.passed == 1)
        #expect(Verdict.exitCode(Counts(results: [muted, passed])) == .success)

        var unmuted = muted
        unmuted.id = TestID(module: "App", suite: "Network", name: "testOther")
        unmuted.quarantine = nil
        #expect(Verdict.exitCode(Counts(results: [muted, unmuted, passed])) == .testFailures, "another failure still fails it")
        var mutedPass = passed
        mutedPass.quarantine = Self.entry("App.Disk")
        #expect(Counts(results: [mutedPass]).passed == 1 && Counts(results: [mutedPass]).muted == 0,
                "a muted test that passed is a pass")
    }

    @Test func applyingTheOutcomeKeepsEveryTestOnceInOrder() {
        var outcome = QuarantineEffect()
        let skippedID = TestID(module: "App", suite: "Disk", name: "testWrite")
        outcome.skipped = [QuarantineEffect.skippedResult(skippedID, framework: .xctest, destination: "linux",
                                                           entry: Self.entry("App.Disk", .skip))]
        outcome.muted["linux|\(Self.network)"] = Self.entry("App.Network/testFetch")
        let ran = TestResult(id: Self.network, framework: .xctest, destination: "linux", outcome: .failed,
                             attempts: [Attempt(outcome: .failed, duration: 1, unit: 1, agent: "a")])
        let all = outcome.apply(to: [ran])
        #expect(all.map(\.id) == [skippedID, Self.network])
        #expect(all.last?.isMutedFailure == true)
    }
}
