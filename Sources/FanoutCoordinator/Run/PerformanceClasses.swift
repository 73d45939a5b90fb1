import FanoutCore
import FanoutRunners
import Foundation

/// Which tests are measured alone (README "Performance tests"): a class is a performance class when the history saw
/// it measure (on any destination), when its sources call `measure` (a package's `Tests/`), or when its name matches
/// `exclusive:` (default `(?i)performance`), unless it matches `not_exclusive:`. What runs alone is its tests that
/// measure, where those are known (the history's measurements, or sources whose every measure call lies in a `func
/// test…`); the rest of the class shares, splits and is stolen from as any class. A class matched by name, or whose
/// measuring tests cannot be read, runs alone whole. Work that runs alone is never cut, never stolen from, and runs
/// with nothing else on its agent.
struct PerformanceClasses: Sendable {
    let byName: ClassPatterns
    let notExclusive: ClassPatterns
    /// The tests the history saw measure, by class.
    let measured: [SuiteID: Set<String>]
    /// What the package's sources say measures, by class name.
    let fromSources: MeasureCalls.Found

    init(settings: RunSettings, measured: [SuiteID: Set<String>], fromSources: MeasureCalls.Found) throws(FanoutError) {
        byName = try ClassPatterns(settings.exclusive, option: "exclusive")
        notExclusive = try ClassPatterns(settings.notExclusive, option: "not_exclusive")
        self.measured = measured
        self.fromSources = fromSources
    }

    /// Whether `suite` is a performance class (some or all of its tests run alone).
    func matches(_ suite: SuiteID) -> Bool { why(suite) != nil }

    /// Why `suite` is a performance class; nil when it is not.
    func why(_ suite: SuiteID) -> String? {
        guard !notExclusive.matches(suite) else { return nil }
        if byName.matches(suite) { return "its name matches exclusive" }
        if measured[suite] != nil { return "it measured in an earlier run" }
        if fromSources.classes.contains(suite.name) { return "its sources call measure" }
        return nil
    }

    /// The tests of `suite` that must run alone; nil when every test of it does (or none: see `matches`).
    func measuringTests(of suite: SuiteID) -> Set<String>? {
        guard matches(suite), !byName.matches(suite), !fromSources.whole.contains(suite.name) else { return nil }
        return (measured[suite] ?? []).union(fromSources.tests[suite.name] ?? [])
    }

    /// `item` as it runs: whole and alone, as it is (not a performance class), or cut in two, its measuring tests
    /// alone (`exclusive`) and the rest as any work. The rest keeps `keepWhole`'s say over splitting.
    func separate(_ item: WorkItem, splitter: MethodSplitter, history: TimingHistory) -> [WorkItem] {
        guard matches(item.suite) else { return [item] }
        var whole = item
        guard let tests = measuringTests(of: item.suite) else {
            whole.exclusive = true
            return [whole]
        }
        if let (alone, rest) = splitter.separating(tests, from: item, history: history) {
            var measuring = alone
            measuring.exclusive = true
            return [measuring, rest]
        }
        // All of its tests here measure, or none does (a filter left the others out).
        whole.exclusive = !Set(item.tests).isDisjoint(with: tests)
        return [whole]
    }

    /// What the package's `Tests/` sources say measures; nothing when the run uses a built product (`--bundle`: the
    /// sources beside it may not be its own).
    static func measuringInSources(of settings: RunSettings) -> MeasureCalls.Found {
        var out = MeasureCalls.Found()
        guard settings.bundlePath == nil else { return out }
        let tests = URL(fileURLWithPath: settings.packagePath).appendingPathComponent("Tests").path
        guard let walker = FileManager.default.enumerator(atPath: tests) else { return out }
        while let path = walker.nextObject() as? String {
            let name = (path as NSString).lastPathComponent
            if name == ".build" || name == ".git" { walker.skipDescendants(); continue }
            guard path.hasSuffix(".swift"), let data = FileManager.default.contents(atPath: tests + "/" + path) else { continue }
            let text = String(decoding: data, as: UTF8.self)
            guard text.contains("measure") else { continue }
            out.merge(MeasureCalls.scan(text))
        }
        return out
    }
}
