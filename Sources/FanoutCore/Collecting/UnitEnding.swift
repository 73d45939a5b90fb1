/// How the process of a unit ended, as its transport saw it.
public enum UnitEnding: Hashable, Codable, Sendable, CustomStringConvertible {
    /// The process exited by itself with this status. 128+n means it died of signal n (how shells report it).
    case exited(Int32)
    /// The process was killed by this signal (reported by the transport directly).
    case signaled(Int32)
    /// Fanout killed the process group because the unit ran past its time limit.
    case timedOut(limit: Double)
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
        case .timedOut(let limit): "timed out after \(formatSeconds(limit))"
        case .agentLost(let why): "agent lost: \(why)"
        case .cancelled: "cancelled"
        case .failedToStart(let why): "failed to start: \(why)"
        case .handedOver: "stopped where the tests it had not started were taken over by other units (work stealing)"
        }
    }
}

/// `SIGILL`, `SIGSEGV`, ... for the signals tests die of.
public func signalName(_ s: Int32) -> String {
    let names: [Int32: String] = [1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
                                  7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"]
    return names[s] ?? "signal \(s)"
}
