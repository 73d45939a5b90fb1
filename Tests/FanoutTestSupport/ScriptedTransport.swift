import FanoutAgents
import FanoutCore
import Foundation
import Synchronization

/// An agent that runs no process: every unit plays its tests from a `Script`, writing the lines a real XCTest
/// binary writes on Linux (`Test Case 'C.t' started at …`, `… passed (0.002 seconds)`, the error line of a failed
/// assertion, the suite summary, a runtime trap on standard error), so the coordinator's real parser and run loop
/// see what they see in production.
///
/// Scripted durations pass on the clock it is handed: a `VirtualClock` shared with the coordinator (the run takes
/// no real time, however long its script), or a real clock (then keep them tiny: milliseconds). Waits are polled
/// every 2 ms of that clock, so a loss of the agent or a cancel is noticed at once.
public final class ScriptedTransport: Transport {
    public let name: String
    public let slots: Int
    public var kind: TransportKind { TransportKind(rawValue: "scripted") }
    private let script: Script
    private let clock: any Clock<Duration>
    private let state: Mutex<State>

    private struct State {
        /// Why the agent is lost right now (nil: it is usable).
        var lost: String?
        /// The agent is lost as its processes are about to start a test after this many (once).
        var loseAfter: Int?
        var testsStarted = 0
        /// After a loss, `reset` makes the agent usable again (it is re-admitted).
        var comesBack: Bool
        var lostReason: String?
        var prepares = 0
        var commands: [Command] = []
        /// Deployments refused after a loss before one succeeds again (re-admission attempts that fail).
        var refusesAfterLoss = 0
        var refusalsLeft = 0
        /// When each deployment was tried (seconds on the run's clock), refused or not.
        var prepareTimes: [Double] = []
        /// When `shutdown` ended (seconds on the run's clock).
        var stoppedAt: Double?
    }

    /// - Parameters:
    ///   - loseAfter: the agent is lost (every unit running on it ends with `agentLost`) as its processes are about
    ///     to start a test after this many tests started on it.
    ///   - comesBack: after the loss the agent can be deployed to again (re-admission); else every later deployment
    ///     fails.
    ///   - clock: what scripted durations pass on.
    ///   - refusesAfterLoss: after a loss, this many deployments fail before one succeeds (with `comesBack`).
    ///   - stopping: what `shutdown` waits for before it ends (an SSH agent's clean-up over the network).
    public init(name: String, slots: Int, script: Script, loseAfter: Int? = nil, comesBack: Bool = false,
                refusesAfterLoss: Int = 0, stopping: (@Sendable () async -> Void)? = nil,
                clock: any Clock<Duration> = ContinuousClock()) {
        self.name = name
        self.stopping = stopping
        self.clock = clock
        self.slots = slots
        self.script = script
        runClock = RunClock(clock)
        state = Mutex(State(loseAfter: loseAfter, comesBack: comesBack, refusesAfterLoss: refusesAfterLoss))
    }

    private let runClock: RunClock
    private let stopping: (@Sendable () async -> Void)?

    /// When `shutdown` ended, in seconds since this transport was made; nil before.
    public var stoppedAt: Double? { state.withLock { $0.stoppedAt } }

    /// When each deployment was tried, in seconds since this transport was made (the run's start), refused or not.
    public var prepareTimes: [Double] { state.withLock { $0.prepareTimes } }

    /// How many times the product was deployed here (1 + re-admissions).
    public var prepares: Int { state.withLock { $0.prepares } }
    /// Every command a slot of this agent ran, in order.
    public var commands: [Command] { state.withLock { $0.commands } }

    public func prepare(product: TestProduct, runID: String) async throws -> String {
        let now = runClock.now()
        try state.withLock { s in
            s.prepareTimes.append(now)
            if let why = s.lost { throw ScriptedAgentLost(reason: why) }
            if s.refusalsLeft > 0 {
                s.refusalsLeft -= 1
                throw ScriptedAgentLost(reason: "scripted: still unreachable")
            }
            s.prepares += 1
        }
        return "/scripted/\(name)/" + (product.binary.split(separator: "/").last.map(String.init) ?? "tests.xctest")
    }

    public func run(_ command: Command, timeout: Double?) -> AsyncStream<ProcessEvent> {
        state.withLock { $0.commands.append(command) }
        let tests = selection(command)
        return AsyncStream { continuation in
            let task = Task { [self] in
                continuation.yield(.ended(await play(tests, timeout: timeout) { continuation.yield($0) }))
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    public func shutdown() async {
        await stopping?()
        let now = runClock.now()
        state.withLock { $0.stoppedAt = now }
    }

    public func reset() async {
        state.withLock { s in
            if s.comesBack, s.lost != nil {
                s.lost = nil
                s.refusalsLeft = s.refusesAfterLoss
            }
        }
    }

    public var isUsable: Bool { state.withLock { $0.lost == nil } }

    public func hardwareClass() async -> String? { "scripted" }

    public var details: AgentDetails { AgentDetails(lostReason: state.withLock { $0.lostReason }) }

    // MARK: - Playing a unit

    private enum Stop { case lost(String), timedOut(Double), cancelled }

    /// Plays the tests in order and returns how the process ended.
    private func play(_ tests: [TestID], timeout: Double?, emit: (ProcessEvent) -> Void) async -> UnitEnding {
        let clock = RunClock(self.clock)
        func out(_ line: String) { emit(.output(.stdout, Array((line + "\n").utf8))) }
        func ending(_ stop: Stop) -> UnitEnding {
            switch stop {
            case .lost(let why): .agentLost(why)
            case .timedOut(let limit): .timedOut(limit: limit)
            case .cancelled: .cancelled
            }
        }
        /// Waits until `seconds` after `from`; a loss, the time limit or a cancel stops the wait.
        func wait(_ seconds: Double, from: Double) async -> Stop? {
            while true {
                if Task.isCancelled { return .cancelled }
                if let why = state.withLock({ $0.lost }) { return .lost(why) }
                let elapsed = clock.now()
                if let timeout, elapsed >= timeout { return .timedOut(timeout) }
                let left = seconds - (elapsed - from)
                if left <= 0 { return nil }
                await clock.pause(for: .seconds(min(left, 0.002)))
            }
        }

        var failures = 0
        var classFailures: [SuiteID: Int] = [:]
        var suiteTime: [SuiteID: Double] = [:]
        for (index, id) in tests.enumerated() {
            let losing = state.withLock { s -> Bool in
                guard s.lost == nil, s.loseAfter == s.testsStarted else {
                    s.testsStarted += 1
                    return false
                }
                s.loseAfter = nil
                s.lost = "scripted loss of \(name) before \(id)"
                s.lostReason = s.lost
                return true
            }
            if losing, let why = state.withLock({ $0.lost }) { return .agentLost(why) }
            if let stop = await wait(0, from: clock.now()) { return ending(stop) }
            let test = "\(id.suite.name).\(id.name)"
            out("Test Case '\(test)' started at 2026-01-01 00:00:00.000")
            let began = clock.now()
            switch script.start(id) {
            case .passed(let seconds):
                if let stop = await wait(seconds, from: began) { return ending(stop) }
                out("Test Case '\(test)' passed (\(String(format: "%.3f", seconds)) seconds)")
                suiteTime[id.suite, default: 0] += seconds
            case .failed(let seconds, let message):
                if let stop = await wait(seconds, from: began) { return ending(stop) }
                out("/scripted/\(id.suite.module)/\(id.suite.name).swift:1: error: \(test) : XCTAssertTrue failed - \(message)")
                out("Test Case '\(test)' failed (\(String(format: "%.3f", seconds)) seconds)")
                suiteTime[id.suite, default: 0] += seconds
                failures += 1
                classFailures[id.suite, default: 0] += 1
            case .measured(let seconds):
                if let stop = await wait(seconds, from: began) { return ending(stop) }
                let value = String(format: "%.6f", seconds / 10)
                out("/scripted/\(id.suite.module)/\(id.suite.name).swift:1: Test Case '\(test)' measured [Time, seconds] "
                    + "average: \(value), relative standard deviation: 1.000%, values: [\(Array(repeating: value, count: 10).joined(separator: ", "))], "
                    + "performanceMetricID:org.swift.XCTPerformanceMetric_WallClockTime, maxPercentRelativeStandardDeviation: 10.000%, "
                    + "maxStandardDeviation: 0.100")
                out("Test Case '\(test)' passed (\(String(format: "%.3f", seconds)) seconds)")
                suiteTime[id.suite, default: 0] += seconds
            case .crash:
                emit(.output(.stderr, Array("\(id.suite.name).swift:1: Fatal error: scripted crash\n".utf8)))
                return .signaled(4)
            case .hang:
                return ending(await wait(.infinity, from: began) ?? .cancelled)
            }
            if index + 1 == tests.count || tests[index + 1].suite != id.suite {
                let seconds = String(format: "%.3f", suiteTime[id.suite] ?? 0)
                let failed = classFailures[id.suite] ?? 0
                out("Test Suite '\(id.suite.name)' \(failed > 0 ? "failed" : "passed") at 2026-01-01 00:00:00.000")
                out("\t Executed \(tests.filter { $0.suite == id.suite }.count) tests, with \(failed) failures (0 unexpected) in \(seconds) (\(seconds)) seconds")
            }
        }
        return .exited(failures > 0 ? 1 : 0)
    }

    /// The tests an XCTest selector (`M.A,M.B/t1`, the command's last argument) names, in the script's order.
    private func selection(_ command: Command) -> [TestID] {
        var wanted: Set<TestID> = []
        for part in (command.arguments.last ?? "").split(separator: ",") {
            let pieces = part.split(separator: "/", maxSplits: 1)
            guard let dot = pieces[0].firstIndex(of: ".") else { continue }
            let suite = SuiteID(module: String(pieces[0][..<dot]), name: String(pieces[0][pieces[0].index(after: dot)...]))
            if pieces.count == 2 {
                wanted.insert(TestID(suite: suite, name: String(pieces[1])))
            } else {
                wanted.formUnion(script.tests(of: suite))
            }
        }
        return script.tests.filter { wanted.contains($0) }
    }
}

/// A deployment to a scripted agent that was lost and does not come back.
public struct ScriptedAgentLost: Error, CustomStringConvertible {
    public var reason: String
    public var description: String { "the agent is gone (\(reason))" }
}
