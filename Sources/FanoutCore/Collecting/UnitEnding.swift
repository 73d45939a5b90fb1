/// How the process of a unit ended, as its transport saw it.
public enum UnitEnding: Hashable, Codable, Sendable, CustomStringConvertible {
    /// The process exited by itself with this status. 128+n means it died of signal n (how shells report it).
    case exited(Int32)
    /// The process was killed by this signal (reported by the transport directly).
    case signaled(Int32)
    /// Fanout killed the process group at a time limit: a test stopped making progress (its stall window), ran
    /// past its ceiling, or the unit ran past its transport's backstop.
    case timedOut(TimeLimitHit)
    /// The agent went away (connection lost, frozen, rebooted) while the unit ran.
    case agentLost(String)
    /// The run was interrupted (SIGINT/SIGTERM) and the unit was killed.
    case cancelled
    /// The process could not be started at all.
    case failedToStart(String)
    /// Fanout stopped the process as it started a test that another unit had taken over (work stealing): what it
    /// ran before counts, the test it was starting does not.
    case handedOver

    /// The signal the process died of, when it crashed.
    public var crashSignal: Int32? {
        switch self {
        case .signaled(let s): s
        case .exited(let code) where code > 128 && code < 160: code - 128
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .exited(let c): crashSignal.map { "exit \(c) (\(signalName($0)))" } ?? "exit \(c)"
        case .signaled(let s): "killed by \(signalName(s))"
        case .timedOut(let hit): hit.description
        case .agentLost(let why): "agent lost: \(why)"
        case .cancelled: "cancelled"
        case .failedToStart(let why): "failed to start: \(why)"
        case .handedOver: "stopped where the tests it had not started were taken over by other units (work stealing)"
        }
    }
}

extension UnitEnding {
    /// The transport's own backstop fired: the whole unit ran `limit` seconds.
    public static func timedOut(limit: Double) -> UnitEnding { .timedOut(TimeLimitHit(kind: .unit, limit: limit)) }
}

/// Which time limit ended a unit, and where it stood.
public struct TimeLimitHit: Hashable, Codable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Codable, Sendable {
        /// No output and no CPU time for the stall window: the test stopped making progress.
        case stalled
        /// The test ran past its ceiling although it kept busy (a busy infinite loop).
        case ceiling
        /// The transport's backstop for the whole unit (the coordinator's own watch should fire first).
        case unit
    }

    public var kind: Kind
    /// The limit that was reached, in seconds (the stall window, the ceiling, or the unit's backstop).
    public var limit: Double
    /// The test that was running, when one was.
    public var test: TestID?
    /// How long that test had run when it was stopped (a censored observation: it takes at least this long).
    public var elapsed: Double?
    /// Where the limit came from, for people (`no history: the default`, `5 × its p95 of 2.1 s`).
    public var basis: String?

    public init(kind: Kind, limit: Double, test: TestID? = nil, elapsed: Double? = nil, basis: String? = nil) {
        self.kind = kind
        self.limit = limit
        self.test = test
        self.elapsed = elapsed
        self.basis = basis
    }

    /// What happened, in words: `no output and no CPU time for 5.00 s, its stall window (…), after running 5.30 s`.
    public var reason: String {
        let why = basis.map { " (\($0))" } ?? ""
        switch kind {
        case .stalled:
            return "no output and no CPU time for \(formatSeconds(limit)), its stall window\(why)"
                + (elapsed.map { ", after running \(formatSeconds($0))" } ?? "")
        case .ceiling:
            return "ran past its ceiling of \(formatSeconds(limit))\(why) while still busy"
        case .unit:
            return "its unit ran past its time limit of \(formatSeconds(limit))"
        }
    }

    public var description: String {
        kind == .unit ? "timed out after \(formatSeconds(limit))" : "timed out: " + reason
    }
}

/// `SIGILL`, `SIGSEGV`, ... for the signals tests die of.
public func signalName(_ s: Int32) -> String {
    let names: [Int32: String] = [1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
                                  7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"]
    return names[s] ?? "signal \(s)"
}
