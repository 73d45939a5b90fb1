import FanoutCore
import FanoutRunners
import Foundation

/// Which classes are measured alone (README "Performance tests"): a class is a performance class when the history
/// saw it measure (on any destination), when its sources call `measure` (a package's `Tests/`), or when its name
/// matches `exclusive:` (default `(?i)performance`), unless it matches `not_exclusive:`. Such a class is never cut,
/// never stolen from, and runs with nothing else on its agent.
struct PerformanceClasses: Sendable {
    let byName: ClassPatterns
    let notExclusive: ClassPatterns
    /// Classes the history saw measure.
    let measured: Set<SuiteID>
    /// Names of the classes whose sources call `measure`.
    let fromSources: Set<String>

    init(settings: RunSettings, measured: Set<SuiteID>, fromSources: Set<String>) throws(FanoutError) {
        byName = try ClassPatterns(settings.exclusive, option: "exclusive")
        notExclusive = try ClassPatterns(settings.notExclusive, option: "not_exclusive")
        self.measured = measured
        self.fromSources = fromSources
    }

    /// Whether `suite` runs alone on its agent.
    func matches(_ suite: SuiteID) -> Bool { why(suite) != nil }

    /// Why `suite` runs alone; nil when it does not.
    func why(_ suite: SuiteID) -> String? {
        guard !notExclusive.matches(suite) else { return nil }
        if measured.contains(suite) { return "it measured in an earlier run" }
        if fromSources.contains(suite.name) { return "its sources call measure" }
        if byName.matches(suite) { return "its name matches exclusive" }
        return nil
    }

    /// The classes of the package's `Tests/` folder whose Swift sources call `measure`; none when the run uses a
    /// built product (`--bundle`: the sources beside it may not be its own).
    static func measuringInSources(of settings: RunSettings) -> Set<String> {
        guard settings.bundlePath == nil else { return [] }
        let tests = URL(fileURLWithPath: settings.packagePath).appendingPathComponent("Tests").path
        guard let walker = FileManager.default.enumerator(atPath: tests) else { return [] }
        var out: Set<String> = []
        while let path = walker.nextObject() as? String {
            let name = (path as NSString).lastPathComponent
            if name == ".build" || name == ".git" { walker.skipDescendants(); continue }
            guard path.hasSuffix(".swift"), let data = FileManager.default.contents(atPath: tests + "/" + path) else { continue }
            let text = String(decoding: data, as: UTF8.self)
            guard text.contains("measure") else { continue }
            out.formUnion(MeasureCalls.measuringClasses(in: text))
        }
        return out
    }
}
