@testable import FanoutCore

/// A whole-class item with this estimate and `tests` tests named t0, t1, ….
func item(_ module: String, _ name: String, _ estimate: Double, tests: Int = 3, framework: Framework = .xctest,
          destination: String = "local") -> WorkItem {
    WorkItem(suite: SuiteID(module: module, name: name), framework: framework, destination: destination,
             tests: (0..<tests).map { "t\($0)" }, isWholeSuite: true, estimate: estimate,
             source: .history(samples: 1))
}

/// Runs a scheduler to the end on a virtual clock where every unit takes exactly its estimate plus overhead.
/// Returns the makespan and every unit handed out.
func simulate(_ scheduler: inout Scheduler, actual: (WorkItem) -> Double = { $0.estimate }) -> (Double, [WorkUnit]) {
    var free = Array(repeating: 0.0, count: scheduler.options.slots)
    var units: [WorkUnit] = []
    var end = 0.0
    while true {
        guard let s = free.indices.min(by: { free[$0] < free[$1] }) else { break }
        guard let unit = scheduler.next(now: free[s]) else { break }
        units.append(unit)
        free[s] += scheduler.options.overhead + unit.items.reduce(0) { $0 + actual($1) }
        end = max(end, free[s])
    }
    return (end, units)
}

/// Tests must not depend on luck: Core's seeded generator, under the short name the tests use.
extension SeededRandom {
    init(_ seed: UInt64) { self.init(seed: seed) }
}
