import Synchronization

/// A clock whose time moves only when a test moves it, as NIO's EmbeddedEventLoop does: `advance(by:)` wakes every
/// sleeper whose deadline has come, in deadline order. Sleepers that are cancelled wake at once with
/// `CancellationError`, like `Task.sleep`.
///
/// `run(_:)` drives a whole run on it: whenever the tasks of the run have settled (no one read or slept on the
/// clock for a while of `Task.yield`s), time jumps to the earliest deadline. A run of minutes of scripted time
/// then takes milliseconds, and no test waits for real time to pass.
public final class VirtualClock: Clock, Sendable {
    public struct Instant: InstantProtocol, Sendable {
        public var offset: Duration
        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private struct Sleeper {
        var id: Int
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID = 0
        /// Counts every use of the clock: a run that still moves changes it.
        var activity = 0
        /// Sleepers whose ids were cancelled before they were registered.
        var cancelled: Set<Int> = []
    }

    private let state = Mutex(State())

    public init() {}

    public var now: Instant {
        state.withLock { s in
            s.activity += 1
            return s.now
        }
    }

    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Sleepers waiting right now.
    public var sleeping: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            s.activity += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLock { s in
                    if s.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= s.now { return .success(()) }
                    s.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let sleeper = state.withLock { s -> Sleeper? in
                guard let i = s.sleepers.firstIndex(where: { $0.id == id }) else {
                    s.cancelled.insert(id)
                    return nil
                }
                return s.sleepers.remove(at: i)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        state.withLock { s in
            _ = s.cancelled.remove(id)
            s.activity += 1
        }
    }

    /// Moves time forward by `duration`, waking every sleeper whose deadline has come, earliest first.
    public func advance(by duration: Duration) {
        advance(to: state.withLock { $0.now }.advanced(by: duration))
    }

    /// Moves time to `instant` (never back), waking every sleeper whose deadline has come, earliest first.
    public func advance(to instant: Instant) {
        let due = state.withLock { s -> [Sleeper] in
            if instant > s.now { s.now = instant }
            let now = s.now
            let due = s.sleepers.filter { $0.deadline <= now }.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
            s.sleepers.removeAll { $0.deadline <= now }
            s.activity += 1
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves time to the earliest deadline of a sleeper, if any; returns whether it did.
    @discardableResult
    public func advanceToNextDeadline() -> Bool {
        guard let next = state.withLock({ $0.sleepers.map(\.deadline).min() }) else { return false }
        advance(to: next)
        return true
    }

    /// Runs `body` with time jumping to the next deadline whenever the run has settled: `settle` yields in a row
    /// with no use of the clock. Generous: in a full test run the 2 threads of the cooperative pool are shared with
    /// what earlier suites left behind, and 64 yields were seen to pass before a scripted unit's output was read (a
    /// jump then made it overrun, and a straggler twin started).
    public func run<T: Sendable>(settle: Int = 512, _ body: @Sendable () async throws -> T) async rethrows -> T {
        let driver = Task {
            var quiet = 0
            var seen = -1
            while !Task.isCancelled {
                await Task.yield()
                let (activity, waiting) = state.withLock { ($0.activity, !$0.sleepers.isEmpty) }
                if activity != seen || !waiting {
                    seen = activity
                    quiet = 0
                    continue
                }
                quiet += 1
                if quiet >= settle {
                    advanceToNextDeadline()
                    quiet = 0
                }
            }
        }
        defer { driver.cancel() }
        return try await body()
    }
}
