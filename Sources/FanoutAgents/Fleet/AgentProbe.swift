/// What probing an agent found (`Transport.probe`): how it is reached, and what a run would need of it.
public struct AgentProbe: Sendable {
    /// How the agent is reached, hop by hop, with where each value came from; nil when it does not resolve.
    public var route: SSHRoute?
    /// Why the agent could not be reached or asked at all; nil when it answered.
    public var failure: String?
    public var connectSeconds: Double?
    /// `swift --version`'s first line, and `xcodebuild -version`'s on a Mac; nil: none found.
    public var toolchain: String?
    public var xcode: String?
    public var cpus: String?
    /// Free bytes where the agent keeps its work (nil: it could not be created or measured).
    public var freeBytes: Double?
    /// What makes the agent unusable for a run (no toolchain, too little disk, a cache others could change).
    public var problems: [String] = []
    /// Milliseconds each no-op command took on the open connection.
    public var dispatchMilliseconds: [Double] = []

    public init(route: SSHRoute? = nil, failure: String? = nil) {
        self.route = route
        self.failure = failure
    }

    /// Usable for a run: it answered and nothing is wrong with it.
    public var usable: Bool { failure == nil && problems.isEmpty }

    /// `user@host:port`, with ` via bastion,…` when it is reached through jump hosts; nil when it does not resolve.
    public var address: String? {
        route.map { "\($0.target.endpoint)" + ($0.jumps.isEmpty ? "" : " via " + $0.jumps.map(\.name).joined(separator: ",")) }
    }

    /// `route: alias → user@host:port via …` then, per hop, its values with their sources (fanout.yml, the ssh
    /// config, a default) and its notes; empty when the route does not resolve.
    public var routeLines: [String] {
        guard let route else { return [] }
        var lines = ["route: \(route)"]
        for (index, hop) in (route.jumps + [route.target]).enumerated() {
            let role = index == route.jumps.count ? "agent" : "bastion"
            let values = hop.sources.map { "\($0.key) \($0.value) (\($0.source))" }.joined(separator: ", ")
            lines.append("  \(role) \(hop.name): \(values)")
            for note in hop.notes { lines.append("  note: \(note)") }
        }
        return lines
    }
}
