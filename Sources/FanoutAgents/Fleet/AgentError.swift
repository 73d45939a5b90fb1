/// Problems with an agent, each saying what to fix.
public enum AgentError: Error, Sendable, CustomStringConvertible {
    case invalidConfig(String)
    case unusable(agent: String, reason: String)
    case deployFailed(agent: String, reason: String)
    /// Connecting along the agent's route failed at one hop (a bastion or the agent itself).
    case unreachable(agent: String, route: String, hop: String, reason: String)

    public var description: String {
        switch self {
        case .invalidConfig(let why): why
        case .unusable(let agent, let reason): "agent \(agent) is not usable: \(reason)"
        case .deployFailed(let agent, let reason): "deploying the test product to \(agent) failed: \(reason)"
        case let .unreachable(agent, route, hop, reason): "agent \(agent) (\(route)) cannot be reached: \(hop): \(reason)"
        }
    }
}
