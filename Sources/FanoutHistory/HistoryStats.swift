import FanoutCore
import struct Foundation.Date

/// One past run, as `fanout history show` lists it.
public struct RunSummary: Hashable, Sendable {
    public var runID: String
    public var startedAt: Date
    public var finishedAt: Date
    public var destinations: [String]
    public var counts: Counts
    public var slots: Int
    /// Wall-clock seconds, build and discovery included.
    public var wall: Double?
    /// Seconds from the first unit's start to the last unit's end.
    public var makespan: Double?
    /// The lower bound of the run from the durations it measured.
    public var lowerBound: Double?
    public var predictedMakespan: Double?
    public var exitCode: Int32
    public var interrupted: Bool

    public init(runID: String, startedAt: Date, finishedAt: Date, destinations: [String], counts: Counts, slots: Int,
                wall: Double?, makespan: Double?, lowerBound: Double?, predictedMakespan: Double?, exitCode: Int32,
                interrupted: Bool) {
        self.runID = runID
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.destinations = destinations
        self.counts = counts
        self.slots = slots
        self.wall = wall
        self.makespan = makespan
        self.lowerBound = lowerBound
        self.predictedMakespan = predictedMakespan
        self.exitCode = exitCode
        self.interrupted = interrupted
    }

    /// makespan / lower bound (1.0 is perfect), when both are known.
    public var efficiency: Double? {
        guard let makespan, let lowerBound, lowerBound > 0 else { return nil }
        return makespan / lowerBound
    }
}

/// The recent times of one class on one destination, over the runs that count for estimates.
public struct ClassStat: Hashable, Sendable {
    public var suite: SuiteID
    public var destination: String
    /// How many counted runs the figures below come from.
    public var runs: Int
    /// Seconds of the newest counted run.
    public var last: Double
    public var p50: Double
    public var p80: Double
    public var max: Double
    /// Test count of the newest counted run.
    public var testCount: Int

    public init(suite: SuiteID, destination: String, runs: Int, last: Double, p50: Double, p80: Double, max: Double,
                testCount: Int) {
        self.suite = suite
        self.destination = destination
        self.runs = runs
        self.last = last
        self.p50 = p50
        self.p80 = p80
        self.max = max
        self.testCount = testCount
    }
}

/// A test with evidence of a flake in the recent runs it appeared in (see ``HistoryStore/flakyTests(runs:)``).
public struct FlakyStat: Hashable, Sendable {
    public var test: TestID
    public var destination: String
    /// Recent runs that ran the test on this destination.
    public var runs: Int
    /// Attempts over those runs, retries included.
    public var attempts: Int
    /// Failures per attempt on the products it also passed on, with its interval.
    public var score: FlakeScore

    public init(test: TestID, destination: String, runs: Int, attempts: Int, score: FlakeScore) {
        self.test = test
        self.destination = destination
        self.runs = runs
        self.attempts = attempts
        self.score = score
    }

    /// Of its recent runs, those where it was flaky (failed, then passed on a retry).
    public var flakyRuns: Int { score.flakyRuns }

    /// Share of its recent runs in which the test was flaky (failed, then passed on a retry), 0...1.
    public var rate: Double { runs > 0 ? Double(flakyRuns) / Double(runs) : 0 }
}

/// A measurement of an earlier run, as baselines will compare against.
public struct PastMeasurement: Hashable, Sendable {
    public var runID: String
    public var startedAt: Date
    public var agent: String
    public var measurement: Measurement
    /// The agent's hardware class (the empty string: it could not be read); nil for a measurement recorded before
    /// the history kept it.
    public var hardwareClass: String?
    /// The baseline average the measurement was judged against, when it had one.
    public var baseline: Double?

    public init(runID: String, startedAt: Date, agent: String, measurement: Measurement, hardwareClass: String? = nil,
                baseline: Double? = nil) {
        self.runID = runID
        self.startedAt = startedAt
        self.agent = agent
        self.measurement = measurement
        self.hardwareClass = hardwareClass
        self.baseline = baseline
    }
}

/// A test found order-dependent in recent runs (see ``HistoryStore/orderDependentTests(runs:)``).
public struct OrderDependentStat: Hashable, Sendable {
    public var test: TestID
    public var destination: String
    /// Recent runs in which it was found order-dependent.
    public var runs: Int
    /// The polluters its newest such run named (empty: not narrowed down there).
    public var polluters: [String]
    public var lastRun: String
    public var lastSeen: Date
}
