/// Finds the smallest set of a failing test's predecessors (in their order) that still makes it fail: the polluter(s).
///
/// Each step runs the test after a subset of its predecessors, kept in their original order, in a fresh process
/// (`check`). The search assumes what leaks state keeps leaking: with more predecessors a test fails at least as
/// often. It finds the polluters one at a time: a binary search for the shortest prefix that still fails names a
/// polluter, the last of those needed together or the first of independent ones (⌈log2 n⌉ steps); if the test fails
/// after the polluters found so far alone, they are the answer, else the search goes on before the earliest one with
/// them kept. So one polluter costs 2 + ⌈log2 n⌉ + 1 steps (the
/// first two reproduce the failure and check that the test passes alone), each further polluter ⌈log2 n⌉ + 1.
///
/// A failure is evidence at once; a pass is believed only after `repeats` passing runs (a flaky test passes by
/// chance, not fails by it). So the number of processes is at most `repeats` × the steps (`bound`).
public struct Bisection: Sendable {
    /// What one process of a step said of the test.
    public enum Answer: Sendable, Hashable {
        case fails
        case passes
        /// It ended otherwise (crashed where it failed, did not run, the process could not start): the search stops.
        case other(String)
    }

    /// One judgement: the test after these predecessors, run until it failed or passed `repeats` times.
    public struct Step: Sendable, Hashable, Codable {
        public var number: Int
        /// What the step asks ("reproduce", "alone", "prefix of 12", "polluter alone").
        public var purpose: String
        /// The predecessors it ran before the test, in order.
        public var before: [TestID]
        /// `fails`, `passes`, or why it stopped.
        public var result: String
        /// Processes it took.
        public var runs: Int
    }

    public enum Conclusion: String, Sendable, Hashable, Codable {
        /// The polluters are named.
        case found
        /// The test passed after all of its predecessors `repeats` times: the failure did not come back.
        case notReproduced = "not-reproduced"
        /// It fails with no predecessor: not order-dependent.
        case failsAlone = "fails-alone"
        /// A step ended for another reason (see the message).
        case stopped
        /// The time budget ran out first; the steps so far are kept.
        case outOfBudget = "out-of-budget"
        /// The steps contradict each other (a predecessor that cures, or chance): the suspects so far are named.
        case inconclusive
    }

    public struct Finding: Sendable, Hashable, Codable {
        public var conclusion: Conclusion
        /// The polluters found, in the order they ran (for `inconclusive`/`outOfBudget`: those found so far).
        public var polluters: [TestID]
        public var steps: [Step]
        /// The bound announced before the first step: at most this many processes.
        public var bound: Int
        public var message: String

        public var runs: Int { steps.reduce(0) { $0 + $1.runs } }
    }

    /// Passing runs a step needs before its pass is believed.
    public var repeats: Int
    /// The search stops after naming this many polluters (a test that needs more is `inconclusive`).
    public var maxPolluters: Int

    public init(repeats: Int = 2, maxPolluters: Int = 3) {
        self.repeats = max(1, repeats)
        self.maxPolluters = max(1, maxPolluters)
    }

    /// Steps to name `polluters` polluters among `predecessors` tests, at most.
    public static func steps(predecessors n: Int, polluters k: Int) -> Int {
        2 + k * (log2Ceiling(n) + 1)
    }

    /// The processes the search may run at most: announced before it starts.
    public func bound(predecessors n: Int) -> Int {
        repeats * Self.steps(predecessors: n, polluters: maxPolluters)
    }

    /// Runs the search. `check` runs the test once after the given predecessors (in order) in a fresh process;
    /// `inBudget` says whether another process may still start.
    /// `confirmed`: the failure after all predecessors and the pass alone are already known (a run's order check
    /// saw both): the search starts narrowing at once.
    public func run(predecessors: [TestID], confirmed: Bool = false, inBudget: @Sendable () -> Bool,
                    check: @Sendable ([TestID]) async -> Answer) async -> Finding {
        var steps: [Step] = []
        let bound = bound(predecessors: predecessors.count)

        /// One step: the test after these predecessors (indices into `predecessors`, run in their order).
        func judge(_ indices: [Int], _ purpose: String) async -> Answer? {
            let before = indices.sorted().map { predecessors[$0] }
            var runs = 0
            var verdict = Answer.passes
            while runs < repeats {
                guard inBudget() else {
                    if runs > 0 { steps.append(Step(number: steps.count + 1, purpose: purpose, before: before,
                                                    result: "passes so far (budget spent)", runs: runs)) }
                    return nil
                }
                runs += 1
                verdict = await check(before)
                if verdict != .passes { break }
            }
            let text = switch verdict {
            case .fails: "fails"
            case .passes: "passes"
            case .other(let why): why
            }
            steps.append(Step(number: steps.count + 1, purpose: purpose, before: before, result: text, runs: runs))
            return verdict
        }
        func finish(_ conclusion: Conclusion, _ found: [Int], _ message: String) -> Finding {
            Finding(conclusion: conclusion, polluters: found.sorted().map { predecessors[$0] }, steps: steps,
                   bound: bound, message: message)
        }
        func stopped(_ verdict: Answer?, _ found: [Int]) -> Finding? {
            switch verdict {
            case nil:
                return finish(.outOfBudget, found, "the time budget ran out after \(steps.count) steps")
            case .other(let why)?:
                return finish(.stopped, found, "step \(steps.count) stopped the search: \(why)")
            case .fails?, .passes?:
                return nil
            }
        }

        let all = Array(predecessors.indices)
        if confirmed, !predecessors.isEmpty { return await narrow(all, judge: judge, stopped: stopped, finish: finish) }
        let reproduced = await judge(all, "reproduce: after all \(predecessors.count) predecessors")
        if let end = stopped(reproduced, []) { return end }
        guard reproduced == .fails else {
            return finish(.notReproduced, [], "the test passed \(repeats) time\(repeats == 1 ? "" : "s") after all "
                + "\(predecessors.count) tests that preceded it: the failure was not reproduced")
        }
        guard !predecessors.isEmpty else {
            return finish(.failsAlone, [], "the test ran first in its process: nothing preceded it, so it is not order-dependent")
        }
        let alone = await judge([], "alone")
        if let end = stopped(alone, []) { return end }
        guard alone == .passes else {
            return finish(.failsAlone, [], "the test fails alone, with no predecessor: it is not order-dependent")
        }
        return await narrow(all, judge: judge, stopped: stopped, finish: finish)
    }

    /// The polluters one at a time, from the end (see the type's comment).
    private func narrow(_ all: [Int], judge: ([Int], String) async -> Answer?, stopped: (Answer?, [Int]) -> Finding?,
                        finish: (Conclusion, [Int], String) -> Finding) async -> Finding {
        var found: [Int] = []
        // Candidates: the predecessors before the earliest polluter found so far. Invariant: the test fails after
        // all candidates plus `found`, and passes after `found` alone.
        var candidates = all
        while true {
            var lo = 0, hi = candidates.count
            while hi - lo > 1 {
                let mid = (lo + hi) / 2
                let verdict = await judge(Array(candidates[..<mid]) + found, "prefix of \(mid) + \(found.count) found")
                if let end = stopped(verdict, found) { return end }
                if verdict == .fails { hi = mid } else { lo = mid }
            }
            // hi ≥ 1: the loop keeps hi > lo ≥ 0, and candidates is never empty here.
            found.append(candidates[hi - 1])
            candidates = Array(candidates[..<(hi - 1)])
            let verdict = await judge(found, "the \(found.count) found alone")
            if let end = stopped(verdict, found) { return end }
            if verdict == .fails {
                return finish(.found, found, found.count == 1 ? "one polluter" : "\(found.count) polluters, needed together")
            }
            guard found.count < maxPolluters, !candidates.isEmpty else {
                return finish(.inconclusive, found, found.count >= maxPolluters
                    ? "more than \(maxPolluters) polluters would be needed (--max-polluters)"
                    : "the test passes after every suspect found; the failure needs something the replay does not repeat")
            }
        }
    }

    static func log2Ceiling(_ n: Int) -> Int {
        var bits = 0
        while (1 << bits) < n { bits += 1 }
        return bits
    }
}
