import Synchronization
import Testing
@testable import FanoutCore

/// The polluter search on a model of state leaks: a test fails when every test of one of its "causes" ran before it.
@Suite(.timeLimit(.minutes(1))) struct BisectionTests {
    static func tests(_ n: Int) -> [TestID] { (0..<n).map { TestID(module: "M", suite: "C\($0 / 4)", name: "test\($0)") } }

    /// Runs the search where the victim fails after all tests of any set in `causes`; counts the processes.
    func search(_ n: Int, causes: [Set<Int>], repeats: Int = 1, maxPolluters: Int = 3,
                flakyPassEvery: Int? = nil, other: Int? = nil) async -> (Bisection.Finding, Int) {
        let before = Self.tests(n)
        let index = Dictionary(uniqueKeysWithValues: before.enumerated().map { ($1, $0) })
        let count = Mutex(0)
        let result = await Bisection(repeats: repeats, maxPolluters: maxPolluters).run(predecessors: before, inBudget: { true }) { ran in
            let k = count.withLock { $0 += 1; return $0 }
            let set = Set(ran.compactMap { index[$0] })
            #expect(ran.compactMap { index[$0] } == set.sorted(), "predecessors keep their order")
            if let other, set.contains(other) { return .other("the test crashed") }
            let fails = causes.contains { $0.isSubset(of: set) }
            if fails, let every = flakyPassEvery, k % every == 0 { return .passes }
            return fails ? .fails : .passes
        }
        return (result, count.withLock { $0 })
    }

    @Test(arguments: [1, 2, 7, 64, 1000])
    func namesTheOnePolluterWithinTheBound(n: Int) async {
        for polluter in Set([0, n / 2, n - 1]) {
            let (result, runs) = await search(n, causes: [[polluter]])
            #expect(result.conclusion == .found)
            #expect(result.polluters == [Self.tests(n)[polluter]])
            #expect(runs == result.runs)
            #expect(runs <= Bisection.steps(predecessors: n, polluters: 1), "one polluter: 2 + ⌈log2 n⌉ + 1 steps")
            #expect(runs <= result.bound)
        }
    }

    @Test func namesTwoPollutersNeededTogether() async {
        let (result, runs) = await search(100, causes: [[17, 80]])
        #expect(result.conclusion == .found)
        #expect(result.polluters == [Self.tests(100)[17], Self.tests(100)[80]])
        #expect(runs <= Bisection.steps(predecessors: 100, polluters: 2))
        // Either of two independent polluters is one answer: the first to run, alone.
        let (either, _) = await search(100, causes: [[17], [80]])
        #expect(either.polluters == [Self.tests(100)[17]])
    }

    @Test func aPassIsBelievedOnlyAfterRepeats() async {
        // A victim that passes by chance every third run: with one run per step the search is misled; with three
        // it still names the polluter.
        let (result, runs) = await search(64, causes: [[40]], repeats: 3, flakyPassEvery: 7)
        #expect(result.polluters == [Self.tests(64)[40]])
        #expect(runs <= result.bound)
    }

    @Test func notReproducedFailsAloneAndStopped() async {
        let (none, runs) = await search(10, causes: [], repeats: 2)
        #expect(none.conclusion == .notReproduced)
        #expect(runs == 2, "the reproduction is tried `repeats` times")
        #expect(none.message.contains("not reproduced"))
        let (alone, _) = await search(10, causes: [[]])
        #expect(alone.conclusion == .failsAlone)
        let (stopped, _) = await search(10, causes: [[3]], other: 9)
        #expect(stopped.conclusion == .stopped)
        #expect(stopped.message.contains("crashed"))
        let (tooMany, _) = await search(20, causes: [[1, 5, 9, 13]], maxPolluters: 3)
        #expect(tooMany.conclusion == .inconclusive)
        #expect(tooMany.polluters.count == 3)
    }

    @Test func aSpentBudgetKeepsTheStepsSoFar() async {
        let left = Mutex(3)
        let result = await Bisection(repeats: 1).run(predecessors: Self.tests(50), inBudget: {
            left.withLock { $0 -= 1; return $0 >= 0 }
        }) { ran in ran.contains(Self.tests(50)[30]) ? .fails : .passes }
        #expect(result.conclusion == .outOfBudget)
        #expect(result.steps.count == 3)
    }

    @Test func processOrderListsPredecessorsByPosition() throws {
        let a = TestID(module: "M", suite: "A", name: "testA")
        let b = TestID(module: "M", suite: "B", name: "testB")
        let v = TestID(module: "M", suite: "V", name: "testVictim")
        let other = TestID(module: "M", suite: "O", name: "testOther")
        let order = ProcessOrder(entries: [
            .init(test: v, framework: .xctest, destination: "local", unit: 3, position: 3, outcome: .failed, failure: "boom"),
            .init(test: b, framework: .xctest, destination: "local", unit: 3, position: 2, outcome: .passed),
            .init(test: a, framework: .xctest, destination: "local", unit: 3, position: 1, outcome: .passed),
            .init(test: other, framework: .xctest, destination: "local", unit: 4, position: 1, outcome: .passed),
        ])
        let replay = try order.replay(of: "V/testVictim", run: "r1")
        #expect(replay.predecessors == [a, b])
        #expect(replay.failure == "boom")
        #expect(throws: OrderError.self) { try order.replay(of: "M.A/testA", run: "r1") } // it passed
        #expect(throws: OrderError.self) { try order.replay(of: "Nope/test", run: "r1") }
        let old = ProcessOrder(entries: [.init(test: v, framework: .xctest, destination: "local", unit: 1, position: nil,
                                               outcome: .failed)])
        let error = #expect(throws: OrderError.self) { try old.replay(of: "M.V/testVictim", run: "r0") }
        #expect(error?.message.contains("no order data") == true)
        // A queue-mode build's merged run: two jobs' "unit 3" in one report. Their order cannot be told apart.
        let merged = ProcessOrder(entries: order.entries + [
            .init(test: TestID(module: "M", suite: "J", name: "testOtherJob"), framework: .xctest, destination: "local",
                  unit: 3, position: 1, outcome: .passed),
        ])
        let ambiguous = #expect(throws: OrderError.self) { try merged.replay(of: "V/testVictim", run: "q1") }
        #expect(ambiguous?.message.contains("ambiguous") == true)
    }
}
