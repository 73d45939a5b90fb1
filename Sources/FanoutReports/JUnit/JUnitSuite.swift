import FanoutCore

/// The results of one module on one destination: one JUnit `<testsuite>`. Module-level suites (rather than one per
/// class) keep the file readable in CI while the classname still carries the class.
struct JUnitSuite {
    var destination: String
    var module: String
    var results: [TestResult]

    var name: String { "\(destination)/\(module)" }

    /// Suites in the report's destination order (unknown destinations after, by name), then by module; test cases
    /// by id, so the document does not depend on the order results arrived in.
    static func group(_ report: RunReport) -> [JUnitSuite] {
        struct Key: Hashable { var destination: String, module: String }
        let grouped = Dictionary(grouping: report.results) {
            Key(destination: $0.destination, module: $0.id.suite.module)
        }
        let rank = Dictionary(report.destinations.enumerated().map { ($1, $0) },
                              uniquingKeysWith: { first, _ in first })
        return grouped.keys
            .sorted { a, b in
                let ra = rank[a.destination] ?? Int.max, rb = rank[b.destination] ?? Int.max
                return (ra, a.destination, a.module) < (rb, b.destination, b.module)
            }
            .map { key in
                JUnitSuite(destination: key.destination, module: key.module,
                           results: grouped[key, default: []].sorted { $0.id < $1.id })
            }
    }

    /// Units that ran any attempt of this suite's tests, plus units of its destination that were meant to run its
    /// classes (a unit that died before its first test still explains the suite), by id.
    func unitIDs(in report: RunReport) -> [Int] {
        var ids = Set(results.flatMap(\.attempts).map(\.unit))
        let prefix = module + "."
        for unit in report.units
        where unit.destination == destination && unit.suites.contains(where: { $0.hasPrefix(prefix) }) {
            ids.insert(unit.id)
        }
        return ids.sorted()
    }
}
