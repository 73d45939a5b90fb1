/// `--repeat N` (best with `--shuffle`): a test whose verdict differs between repetitions is checked against what ran
/// before it in each repetition's process. The suspects are the tests that preceded it in every repetition where it
/// failed and in none where it passed; when that leaves some, its verdict follows the order, not chance.
///
/// Evidence is asked of both sides (at least `minimum` failing and `minimum` passing repetitions with order data),
/// and chance is ruled out: a test unrelated to the victim precedes it in a repetition with some probability r, so it
/// lines up with exactly the f failing repetitions of n with probability at most (f/n)^f × (q/n)^q (q = n − f, at the
/// r that makes it likeliest). Over every test that ever preceded the victim (the candidates), that must stay under
/// `chance` (1 %), or the suspects are not named: a few repetitions of a test flaky by chance name nobody.
public enum OrderHunt {
    public static let minimum = 2
    public static let chance = 0.01

    /// Whether f failing and q passing repetitions can single out a suspect among `candidates` tests.
    public static func isSignificant(failing f: Int, passing q: Int, candidates: Int) -> Bool {
        let n = Double(f + q)
        let a = Double(f) / n, b = Double(q) / n
        var p = 1.0
        for _ in 0..<f { p *= a }
        for _ in 0..<q { p *= b }
        return Double(max(1, candidates)) * p <= chance
    }

    /// The results with `orderDependence` set where the repetitions say the verdict depends on the order.
    public static func analyse(_ results: [TestResult]) -> [TestResult] {
        var entries: [ProcessOrder.Entry] = []
        for r in results {
            for a in r.attempts where a.replayOf == nil {
                entries.append(.init(test: r.id, framework: r.framework, destination: r.destination, unit: a.unit,
                                     position: a.position, outcome: a.outcome))
            }
        }
        // Each unit's tests by position, once.
        var byUnit: [String: [(Int, TestID)]] = [:]
        for e in entries {
            guard let p = e.position else { continue }
            byUnit["\(e.destination)|\(e.unit)", default: []].append((p, e.test))
        }
        func before(_ a: Attempt, of test: TestID, destination: String) -> Set<TestID>? {
            guard let p = a.position, let unit = byUnit["\(destination)|\(a.unit)"] else { return nil }
            return Set(unit.filter { $0.0 < p && $0.1 != test }.map(\.1))
        }
        return results.map { result in
            guard result.repeats != nil, result.orderDependence == nil else { return result }
            let counted = result.attempts.filter { $0.replayOf == nil && $0.contended == nil }
            let failing = counted.filter { $0.outcome.isFailure }.compactMap { a in
                before(a, of: result.id, destination: result.destination).map { (a, $0) }
            }
            let passing = counted.filter { $0.outcome == .passed }.compactMap {
                before($0, of: result.id, destination: result.destination)
            }
            let candidates = failing.reduce(into: Set<TestID>()) { $0.formUnion($1.1) }
                .union(passing.reduce(into: Set<TestID>()) { $0.formUnion($1) })
            guard failing.count >= minimum, passing.count >= minimum,
                  isSignificant(failing: failing.count, passing: passing.count, candidates: candidates.count),
                  var always = failing.first?.1 else { return result }
            for (_, set) in failing.dropFirst() { always.formIntersection(set) }
            let everPassedAfter = passing.reduce(into: Set<TestID>()) { $0.formUnion($1) }
            let suspects = always.subtracting(everPassedAfter)
            guard !suspects.isEmpty, let first = failing.first?.0 else { return result }
            var marked = result
            let ordered = suspects.sorted()
            marked.orderDependence = OrderDependence(
                unit: first.unit, suspects: ordered, checkUnit: nil, polluters: ordered.count == 1 ? ordered : nil,
                search: "--repeat: it failed in \(failing.count) repetitions, each after \(ordered.count == 1 ? "this test" : "these tests"), "
                    + "and passed in \(passing.count) without \(ordered.count == 1 ? "it" : "them")")
            return marked
        }
    }
}
