/// What a quarantine does to a test.
public enum QuarantineMode: String, Codable, Sendable, Hashable, CaseIterable {
    /// The test runs and its result is reported, but its failure does not fail the run.
    case mute
    /// The test does not run at all; it is reported skipped by quarantine.
    case skip
}

/// One entry of the quarantine file (`fanout-quarantine.yml`, docs/quarantine.md): a flaky or broken test that
/// must stop breaking builds without being forgotten.
///
/// Dates are calendar days, `YYYY-MM-DD` (UTC): an entry applies up to and including its `expires` day, and from
/// the next day on it warns and stops applying, so a quarantine cannot outlive the reason for it unnoticed.
public struct QuarantineEntry: Codable, Sendable, Hashable {
    /// `Module.Class/test` (one test) or `Module.Class` (every test of the class), as `fanout list --tests` shows.
    public var test: String
    /// The destination it applies on; nil: every destination.
    public var destination: String?
    public var mode: QuarantineMode
    public var reason: String
    /// Who owns the fix, and where it is tracked: at least one of the two.
    public var owner: String?
    public var issue: String?
    public var added: String
    public var expires: String

    public init(test: String, destination: String? = nil, mode: QuarantineMode, reason: String, owner: String? = nil,
                issue: String? = nil, added: String, expires: String) {
        self.test = test
        self.destination = destination
        self.mode = mode
        self.reason = reason
        self.owner = owner
        self.issue = issue
        self.added = added
        self.expires = expires
    }

    /// Whether it names this test (exactly, or its whole class) on this destination.
    public func matches(_ id: TestID, destination: String) -> Bool {
        if let mine = self.destination, mine != destination { return false }
        return test == id.description || test == id.suite.description
    }

    /// Whether it names this class or one of its tests.
    public func touches(_ suite: SuiteID) -> Bool {
        test == suite.description || test.hasPrefix(suite.description + "/")
    }

    /// Expired from the day after `expires` on. `today` is `YYYY-MM-DD`: such strings order as the days do.
    public func isExpired(today: String) -> Bool { expires < today }

    /// `DemoTests.NetworkTests/testRetry` or, for one destination, `… on linux`.
    public var label: String { destination.map { "\(test) on \($0)" } ?? test }

    /// Who and where, for a report line: `@alice, https://…/12`.
    public var ownership: String { [owner, issue].compactMap { $0 }.joined(separator: ", ") }
}

/// The entries of a quarantine file, and the rules that apply them to a run.
public struct Quarantine: Sendable, Hashable {
    public var entries: [QuarantineEntry]

    public init(entries: [QuarantineEntry] = []) {
        self.entries = entries
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// The entry in force for a test on a destination: not expired; an exact test entry before a class entry, a
    /// destination's own entry before one for every destination, and `skip` before `mute`.
    public func entry(for id: TestID, destination: String, today: String) -> QuarantineEntry? {
        Self.pick(entries.filter { !$0.isExpired(today: today) && $0.matches(id, destination: destination) })
    }

    /// The entry that wins among those that match one test (see ``entry(for:destination:today:)``).
    static func pick(_ matching: [QuarantineEntry]) -> QuarantineEntry? {
        matching.min { rank($0) < rank($1) }
    }

    /// The entries in force today by the test or class they name: a run looks each test up by its two names
    /// instead of comparing it with every entry (a suite of 100,000 tests and a long quarantine).
    func index(today: String) -> [String: [QuarantineEntry]] {
        Dictionary(grouping: entries.filter { !$0.isExpired(today: today) }, by: \.test)
    }

    private static func rank(_ e: QuarantineEntry) -> (Int, Int, Int) {
        (e.test.contains("/") ? 0 : 1, e.destination == nil ? 1 : 0, e.mode == .skip ? 0 : 1)
    }

    /// Entries past their expiry day: a run warns about each and no longer applies it.
    public func expired(today: String) -> [QuarantineEntry] {
        entries.filter { $0.isExpired(today: today) }
    }

    /// The index of the entry for exactly this test and destination, if any.
    public func index(of test: String, destination: String?) -> Int? {
        entries.firstIndex { $0.test == test && $0.destination == destination }
    }
}

/// What the quarantine did to one run, for the report and the warnings.
public struct QuarantineEffect: Sendable, Hashable {
    /// Tests that were not run, one result each (outcome `skipped`, marked with their entry).
    public var skipped: [TestResult] = []
    /// The entry of each muted test, by destination and test.
    public var muted: [String: QuarantineEntry] = [:]
    public var warnings: [String] = []

    public init() {}

    public static func key(destination: String, test: TestID) -> String { "\(destination)|\(test)" }

    /// Marks every result with a mute entry, and adds the skipped ones: every test asked for stays in the report.
    public func apply(to results: [TestResult]) -> [TestResult] {
        var out = results.map { result -> TestResult in
            var result = result
            if let entry = muted[Self.key(destination: result.destination, test: result.id)] { result.quarantine = entry }
            return result
        }
        out += skipped
        return out.sorted { ($0.destination, $0.id) < ($1.destination, $1.id) }
    }

    /// A result for a test the quarantine kept from running.
    public static func skippedResult(_ id: TestID, framework: Framework, destination: String,
                                     entry: QuarantineEntry) -> TestResult {
        let attempt = Attempt(outcome: .skipped, duration: 0, skipReason: "quarantined (skip): \(entry.reason)",
                              unit: 0, agent: "")
        var result = TestResult(id: id, framework: framework, destination: destination, outcome: .skipped,
                                attempts: [attempt])
        result.quarantine = entry
        return result
    }
}

extension TestResult {
    /// A muted test whose outcome is a failure: reported, but it does not fail the run.
    public var isMutedFailure: Bool { quarantine?.mode == .mute && outcome.isFailure }
}

/// The quarantine applied to the tests of one run: what still runs, and what the report says about the rest.
public struct QuarantinePlan: Sendable, Hashable {
    /// Each destination's catalog without the tests quarantined with `skip`.
    public var catalogs: [String: Catalog]
    /// `destination|Module.Class` of classes that lost some (not all) of their tests: they must be selected test by
    /// test, since selecting the class by name would run the skipped tests too.
    public var trimmed: Set<String>
    public var outcome: QuarantineEffect

    /// - Parameters:
    ///   - selected: each destination's catalog after the filters (what the run would run).
    ///   - full: each destination's whole catalog, to tell an entry whose test is gone from one filtered out.
    ///   - today: `YYYY-MM-DD`; expired entries warn and do not apply.
    public init(_ quarantine: Quarantine, selected: [String: Catalog], full: [String: Catalog], today: String) {
        catalogs = selected
        trimmed = []
        outcome = QuarantineEffect()
        for entry in quarantine.expired(today: today) {
            outcome.warnings.append("quarantine: the entry for \(entry.label) expired on \(entry.expires) and no longer "
                + "applies: fix the test and remove the entry (`fanout quarantine remove \(entry.test)`), or extend its "
                + "`expires`")
        }
        for entry in quarantine.entries where !entry.isExpired(today: today) {
            let places = full.filter { entry.destination == nil || entry.destination == $0.key }
            let exists = places.values.contains { catalog in
                catalog.suites.contains { s in entry.touches(s.id) && (entry.test == s.id.description
                    || s.tests.contains { TestID(suite: s.id, name: $0).description == entry.test }) }
            }
            if !places.isEmpty, !exists {
                outcome.warnings.append("quarantine: \(entry.label) matches no test of the product (renamed or removed?): "
                    + "remove the entry with `fanout quarantine remove \(entry.test)`")
            }
        }
        let index = quarantine.index(today: today)
        for (destination, catalog) in selected {
            var suites: [TestSuite] = []
            for suite in catalog.suites {
                let className = suite.id.description
                let forClass = index[className] ?? []
                if forClass.isEmpty, !index.keys.contains(where: { $0.hasPrefix(className + "/") }) {
                    suites.append(suite)
                    continue
                }
                var kept: [String] = []
                for name in suite.tests {
                    let id = TestID(suite: suite.id, name: name)
                    let matching = (forClass + (index[id.description] ?? [])).filter {
                        $0.matches(id, destination: destination)
                    }
                    guard let entry = Quarantine.pick(matching) else {
                        kept.append(name)
                        continue
                    }
                    switch entry.mode {
                    case .mute:
                        kept.append(name)
                        outcome.muted[QuarantineEffect.key(destination: destination, test: id)] = entry
                    case .skip:
                        outcome.skipped.append(QuarantineEffect.skippedResult(id, framework: suite.framework,
                                                                               destination: destination, entry: entry))
                    }
                }
                if kept.count < suite.tests.count, !kept.isEmpty { trimmed.insert("\(destination)|\(suite.id)") }
                var mine = suite
                mine.tests = kept
                suites.append(mine)
            }
            catalogs[destination] = Catalog(suites: suites).filter { _ in true }
        }
    }

    /// Marks the items of trimmed classes as parts of their class.
    public func mark(_ items: inout [WorkItem]) {
        for i in items.indices where trimmed.contains("\(items[i].destination)|\(items[i].suite)") {
            items[i].isWholeSuite = false
        }
    }
}
