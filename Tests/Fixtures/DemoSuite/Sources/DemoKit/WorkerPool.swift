/// A deterministic job queue with priorities, processed by N logical workers in rounds.
public struct Job: Equatable, Sendable {
    public let id: Int
    public let priority: Int
    public let cost: Int
    public init(id: Int, priority: Int = 0, cost: Int = 1) {
        self.id = id
        self.priority = priority
        self.cost = cost
    }
}

public struct JobQueue: Sendable {
    private var jobs: [Job] = []
    public init() {}
    public var count: Int { jobs.count }
    public var isEmpty: Bool { jobs.isEmpty }

    public mutating func enqueue(_ j: Job) {
        // stable: higher priority first, FIFO within a priority
        let idx = jobs.firstIndex { $0.priority < j.priority } ?? jobs.endIndex
        jobs.insert(j, at: idx)
    }

    public mutating func dequeue() -> Job? { jobs.isEmpty ? nil : jobs.removeFirst() }
}

public final class WorkerPool {
    public private(set) var workers: Int
    public private(set) var completed: [Int] = []
    public private(set) var isShutDown = false
    private var queue = JobQueue()

    public init(workers: Int) {
        precondition(workers > 0)
        self.workers = workers
    }

    public var pending: Int { queue.count }

    public func submit(_ j: Job) -> Bool {
        guard !isShutDown else { return false }
        queue.enqueue(j)
        return true
    }

    public func resize(to n: Int) {
        precondition(n > 0)
        workers = n
    }

    /// Processes one round: each worker takes one job. Returns jobs done.
    @discardableResult
    public func tick() -> Int {
        var done = 0
        for _ in 0..<workers {
            guard let j = queue.dequeue() else { break }
            completed.append(j.id)
            done += 1
        }
        return done
    }

    /// Runs rounds until the queue is empty; returns the number of rounds.
    @discardableResult
    public func drain() -> Int {
        var rounds = 0
        while !queue.isEmpty { tick(); rounds += 1 }
        return rounds
    }

    public func shutdown() { isShutDown = true }
}

/// Plans a makespan: greedy assignment of job costs to `workers` (longest first).
public enum Scheduler {
    public static func makespan(costs: [Int], workers: Int) -> Int {
        precondition(workers > 0)
        var loads = [Int](repeating: 0, count: workers)
        for c in costs.sorted(by: >) {
            let i = loads.indices.min { loads[$0] < loads[$1] }!
            loads[i] += c
        }
        return loads.max() ?? 0
    }
}
