import FanoutCore

/// Queue mode's bookkeeping, as a plain value the `Dispatcher` owns (Dispatcher+Queue.swift): which queue items this
/// job holds open, which destinations it cannot serve, and when an item is settled, with what results.
///
/// An item is settled once none of its work is queued, running or waiting here (the caller says which items are
/// busy); its results are the attempts made for it, not those a test already had here when the item came (a retry
/// item this job took itself). An item of a destination no agent of this job serves, or serves any more, settles as
/// not run, with the reason.
struct QueueItems: Sendable {
    /// Per open item, the tests it holds.
    private(set) var open: [Int: [RunLedger.ResultKey]] = [:]
    /// Per open item, the attempts each of its tests had here before the item came.
    private var attemptsBefore: [Int: [RunLedger.ResultKey: Int]] = [:]
    /// Destinations no agent of this job serves, with the reason their tests do not run.
    private(set) var unserved: [String: String] = [:]
    /// The agents of this job that serve each destination, and those done for the run.
    private var servedBy: [String: Set<String>] = [:]
    private var retired: Set<String> = []
    /// Open items of an unserved destination: they settle as not run for that reason.
    private var unservedItems: Set<Int> = []

    init(unserved: [String: String] = [:], servedBy: [String: Set<String>] = [:]) {
        self.unserved = unserved
        self.servedBy = servedBy
    }

    /// An agent takes no more work in this run: the destinations none of whose agents is left, newly unserved (their
    /// queued work is to be taken out of the queue and handed to ``unservedWork(_:)``). While the feed is closed
    /// (`feedOpen` false) the agent is only remembered.
    mutating func retire(agent: String, feedOpen: Bool = true) -> [String] {
        retired.insert(agent)
        guard feedOpen else { return [] }
        var newly: [String] = []
        for (destination, agents) in servedBy.sorted(by: { $0.key < $1.key })
        where unserved[destination] == nil && agents.isSubset(of: retired) {
            unserved[destination] = "no agent of this job was left to serve destination \(destination) "
                + "(see the warnings for each agent)"
            newly.append(destination)
        }
        return newly
    }

    /// Work taken out of the queue because its destination is unserved: its items settle as not run.
    mutating func unservedWork(_ items: [WorkItem]) {
        for item in items { if let number = item.queueItem { unservedItems.insert(number) } }
    }

    /// Items the feed offers: they are open from now on. Returns the work to queue here (what of it an agent of this
    /// job serves); `attempts` says how many attempts a test already has here.
    mutating func offer(_ items: [WorkItem], attempts: (RunLedger.ResultKey) -> Int) -> [WorkItem] {
        for item in items {
            guard let number = item.queueItem else { continue }
            let keys = item.testIDs.map { RunLedger.ResultKey(destination: item.destination, test: $0) }
            open[number, default: []] += keys
            for key in keys { attemptsBefore[number, default: [:]][key] = attempts(key) }
        }
        let (runnable, cannot) = (items.filter { unserved[$0.destination] == nil },
                                  items.filter { unserved[$0.destination] != nil })
        unservedWork(cannot)
        return runnable
    }

    /// The open items none of whose work is `busy` any more, each with its tests' results (from `ledger`); they are no
    /// longer open.
    mutating func settle(busy: Set<Int>, ledger: RunLedger) -> [(item: Int, results: [TestResult])] {
        let settled = open.keys.filter { !busy.contains($0) }.sorted()
        return settled.map { number in
            let keys = open.removeValue(forKey: number) ?? []
            let reason = unservedItems.remove(number) != nil
                ? keys.first.flatMap { unserved[$0.destination] } ?? "no agent serves its destination"
                : "the run was interrupted before this test ran"
            let before = attemptsBefore.removeValue(forKey: number) ?? [:]
            return (number, ledger.results(of: keys, reasonForMissing: reason).map { result in
                Self.ownAttempts(result, skipping: before[RunLedger.ResultKey(destination: result.destination,
                                                                             test: result.id)] ?? 0, reason: reason)
            })
        }
    }

    /// A test's result for one queue item: without the first `skip` attempts (made for an earlier item), its verdict
    /// from the attempts left; none left: not run, for `reason`.
    static func ownAttempts(_ result: TestResult, skipping skip: Int, reason: String) -> TestResult {
        guard skip > 0 else { return result }
        var own = result
        own.attempts = Array(result.attempts.dropFirst(skip))
        if own.attempts.isEmpty {
            own.attempts = [Attempt(outcome: .notRun, duration: 0, issues: [Issue(kind: .other, message: reason)],
                                    unit: 0, agent: "")]
        }
        own.outcome = Verdict.test(own.attempts)
        return own
    }
}
