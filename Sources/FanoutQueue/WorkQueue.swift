/// The seam between a run and the shared queue of its CI build (queue mode). PostgreSQL is the one implementation
/// (`PostgresQueue`); another server (Redis) would implement the same operations with the same guarantees:
///
/// - exactly one job of a build seeds it (atomically, on the server: claiming the build and filling its queue are one
///   transaction), and the others wait for the seed;
/// - a reservation is a lease on the server's clock: once it lapses, the item is reservable again;
/// - a completion counts only from the reservation that currently holds the item (its token), so the late result
///   of a job whose lease lapsed and whose item went to another job is refused: every item's results count once;
/// - builds never see each other's items, and a build's rows go once it expires.
public protocol WorkQueue: Sendable {
    /// Joins `build` as `worker`, offering `items` (this job's plan, longest first): the first job to join seeds the
    /// build with its items, atomically with claiming it (the others wait at most `within` seconds for that seed to
    /// be committed, and then use it); the others get `.follower`. Throws when the build was seeded with another
    /// fingerprint. Throws `workerTaken` when another job of the build with `worker`'s name was seen within the last
    /// `alive` seconds (0: not checked).
    func join(_ build: QueueBuild, as worker: QueueWorker, items: [QueueItem], within seconds: Double, alive: Double)
        async throws(QueueError) -> QueueRole
    /// The next item for `worker`, reserved for `lease` seconds; nil when none is reservable now (others may still
    /// hold some: see `state`).
    func reserve(_ build: QueueBuild, for worker: QueueWorker, lease: Double) async throws(QueueError) -> Reservation?
    /// Extends the leases of everything `worker` holds; returns the items it still holds.
    func renew(_ build: QueueBuild, for worker: QueueWorker, lease: Double) async throws(QueueError) -> Set<Int>
    /// Records a reservation's results, exactly once, and with them, within the build's requeue budget, `retry`
    /// (the tests to run again, on another job when there is one).
    func complete(_ reservation: Reservation, of build: QueueBuild, by worker: QueueWorker, results: [QueuedResult],
                  retry: QueueItem?) async throws(QueueError) -> Completion
    /// Gives reservations back unfinished (the job stops: interrupted): their items are queued again at once, for any
    /// job, and a result sent later under these reservations is refused.
    func release(_ reservations: [Reservation], of build: QueueBuild, by worker: QueueWorker) async throws(QueueError)
    /// Items by state.
    func state(_ build: QueueBuild) async throws(QueueError) -> QueueState
    /// What a job of this name took the first time (a CI retry of a job re-runs its share), reserved again for
    /// `worker` where done: all of it, or with `onlyFailures`, the items with a failed result.
    func firstShare(_ build: QueueBuild, for worker: QueueWorker, onlyFailures: Bool, lease: Double)
        async throws(QueueError) -> [Reservation]
    /// Every result recorded for the build, in the order they were recorded.
    func results(_ build: QueueBuild) async throws(QueueError) -> [StoredResult]
    /// Says `worker` is done with the build (it stops counting as a job that could take a retry).
    func leave(_ build: QueueBuild, as worker: QueueWorker) async throws(QueueError)
    /// The build of this id as its seeder queued it (its fingerprint); throws `unknownBuild` when none is queued.
    func lookup(_ id: String) async throws(QueueError) -> QueueBuild
    /// Every item of the build, in item order, with its state and holder.
    func items(_ build: QueueBuild) async throws(QueueError) -> [QueuedItemState]
    /// Keeps a job's own report (the caller's encoding) for the build's merged report; a job that sends it again
    /// replaces its earlier one.
    func keepReport(_ report: String, of build: QueueBuild, by worker: QueueWorker) async throws(QueueError)
    /// The jobs of the build that have not left and were seen within the last `seconds` (names).
    func liveJobs(_ build: QueueBuild, seenWithin seconds: Double) async throws(QueueError) -> [String]
    /// The reports the build's jobs kept, in the order they were sent.
    func reports(_ build: QueueBuild) async throws(QueueError) -> [(worker: String, report: String)]
}

extension WorkQueue {
    public func join(_ build: QueueBuild, as worker: QueueWorker, items: [QueueItem], within seconds: Double)
        async throws(QueueError) -> QueueRole {
        try await join(build, as: worker, items: items, within: seconds, alive: 0)
    }
}

/// An item as the queue has it now.
public struct QueuedItemState: Hashable, Sendable {
    public var item: Int
    public var payload: String
    /// "queued", "reserved" or "done".
    public var state: String
    /// The job that holds it, or held it last.
    public var worker: String?
    public var retryOf: Int?
}

/// A CI build's queue: its id (from the CI's own variables, or --build-id) and the fingerprint of what it tests (every
/// job of a build must run the same tests).
public struct QueueBuild: Hashable, Sendable {
    public var id: String
    public var fingerprint: String
    /// Seconds the build's rows are kept after it was created.
    public var expiresAfter: Double
    /// How many failed items a build may queue again, in all (ci-queue's requeue tolerance).
    public var requeueBudget: Int

    public init(id: String, fingerprint: String, expiresAfter: Double = 86_400, requeueBudget: Int = 0) {
        self.id = id
        self.fingerprint = fingerprint
        self.expiresAfter = expiresAfter
        self.requeueBudget = requeueBudget
    }
}

/// A job of the build: `name` is stable across the CI's retries of that job (its index), `session` is this process.
public struct QueueWorker: Hashable, Sendable {
    public var name: String
    public var session: String

    public init(name: String, session: String) {
        self.name = name
        self.session = session
    }
}

public enum QueueRole: Hashable, Sendable {
    case seeder
    case follower(seeder: String)
}

/// One work item as queued: what to run (the caller's encoding) and its estimate in seconds.
public struct QueueItem: Hashable, Sendable {
    public var payload: String
    public var estimate: Double

    public init(payload: String, estimate: Double) {
        self.payload = payload
        self.estimate = estimate
    }
}

/// An item held by a job: `token` names this very reservation (each reservation of an item gets the next one).
public struct Reservation: Hashable, Sendable {
    public var item: Int
    public var token: Int
    public var payload: String
    public var estimate: Double
    /// Set for an item queued again for its failures: the item it retries.
    public var retryOf: Int?
}

/// One test's result as a job reports it (`payload` is the caller's encoding).
public struct QueuedResult: Hashable, Sendable {
    public var test: String
    public var failed: Bool
    public var payload: String

    public init(test: String, failed: Bool, payload: String) {
        self.test = test
        self.failed = failed
        self.payload = payload
    }
}

/// A result as the queue keeps it.
public struct StoredResult: Hashable, Sendable {
    public var item: Int
    public var test: String
    public var failed: Bool
    public var payload: String
    /// The job (name) whose result it is.
    public var worker: String
}

public struct Completion: Hashable, Sendable {
    /// The results counted: the reservation still held the item.
    public var accepted: Bool
    /// The retry was queued (within the build's budget).
    public var retryQueued: Bool
}

public struct QueueState: Hashable, Sendable {
    public var queued: Int
    public var reserved: Int
    public var done: Int
    public var total: Int { queued + reserved + done }

    public init(queued: Int, reserved: Int, done: Int) {
        self.queued = queued
        self.reserved = reserved
        self.done = done
    }
    /// Nothing left to run: every item is done.
    public var drained: Bool { queued == 0 && reserved == 0 }
}
