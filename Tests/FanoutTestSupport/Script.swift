import FanoutCore
import Synchronization

/// What one test does when a process reaches it.
public enum ScriptedTest: Sendable, Hashable {
    /// Ends by itself after this many seconds (keep them tiny: milliseconds).
    case passed(Double)
    case failed(Double, message: String = "scripted failure")
    /// The process dies of SIGILL as the test runs, with a Swift runtime's last words on standard error.
    case crash
    /// Never ends: the unit's time limit stops it.
    case hang
    /// A `measure` test: after this many seconds it prints its measurement (XCTest on Linux's line) and passes.
    case measured(Double)
}

/// The tests of a scripted suite, in the order the binary runs them, and what each does on its 1st, 2nd, … start
/// (the last entry repeats). One script is shared by every `ScriptedTransport` of a run, so "fails on its first
/// start, passes on its retry" holds whichever agent runs it.
public final class Script: Sendable {
    public let tests: [TestID]
    private let plays: [TestID: [ScriptedTest]]
    private let started = Mutex<[TestID: Int]>([:])

    public init(_ tests: [(TestID, [ScriptedTest])]) {
        self.tests = tests.map(\.0)
        plays = Dictionary(tests, uniquingKeysWith: { first, _ in first })
    }

    /// `classes` classes `C0`, `C1`, … of module `M`, each with `tests` tests `t0`, `t1`, … that pass in `seconds`.
    public static func passing(classes: Int, tests: Int, seconds: Double = 0.002) -> Script {
        Script((0..<classes).flatMap { c in
            (0..<tests).map { t in (TestID(module: "M", suite: "C\(c)", name: "t\(t)"), [ScriptedTest.passed(seconds)]) }
        })
    }

    /// The same script with these tests doing something else.
    public func with(_ changes: [TestID: [ScriptedTest]]) -> Script {
        Script(tests.map { ($0, changes[$0] ?? plays[$0] ?? [.passed(0.001)]) })
    }

    /// What discovery finds: every class, as XCTest lists it.
    public var catalog: Catalog {
        var order: [SuiteID] = []
        var names: [SuiteID: [String]] = [:]
        for id in tests {
            if names[id.suite] == nil { order.append(id.suite) }
            names[id.suite, default: []].append(id.name)
        }
        return Catalog(suites: order.map { TestSuite(id: $0, framework: .xctest, tests: names[$0] ?? []) })
    }

    /// The tests of a class, in order.
    func tests(of suite: SuiteID) -> [TestID] { tests.filter { $0.suite == suite } }

    /// A process starts this test: what it does this time.
    func start(_ id: TestID) -> ScriptedTest {
        let n = started.withLock { counts -> Int in
            counts[id, default: 0] += 1
            return counts[id, default: 1]
        }
        let plays = plays[id] ?? [.passed(0.001)]
        return plays[min(n, plays.count) - 1]
    }

    /// How many times a process started this test.
    public func starts(of id: TestID) -> Int { started.withLock { $0[id] ?? 0 } }
}
