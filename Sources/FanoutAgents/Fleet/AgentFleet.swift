/// The agents of a run, made from what the user configured: SSH agents when there are any, else local slots. The
/// Coordinator asks for a fleet and never names a kind of transport; a new kind of agent is added here.
public struct AgentFleet: Sendable {
    /// Every kind of transport the product knows: an emergency stop reaches all of them.
    static let kinds: [any Transport.Type] = [LocalTransport.self, SSHTransport.self]

    public let transports: [any Transport]
    /// The product packed once for every SSH agent.
    private let archives: ProductArchives?

    /// How each SSH agent of a run is reached (its ~/.ssh/config alias, ProxyJump, keys, as OpenSSH resolves them),
    /// in the order of the agents; resolved once, before anything is built, by ``resolveRoutes(of:ssh:)``.
    public struct Routes: Sendable {
        let routes: [SSHRoute]
        /// No agent resolved ahead: each resolves its own as it connects.
        public static let none = Routes(routes: [])
    }

    /// Resolves every agent's route; the first that does not resolve (a missing alias, a ProxyJump loop, a
    /// ProxyCommand, keys that are not there) is the error, saying which agent and what to fix. Up to 16 agents
    /// resolve at once (each asks `ssh -G`, a process of its own); the first error in the agents' order is said.
    public static func resolveRoutes(of agents: [SSHAgentSpec], ssh: SSHSettings) async throws(AgentError) -> Routes {
        let resolver = OpenSSHResolver(settings: ssh)
        let resolved = await withTaskGroup(of: (Int, Result<SSHRoute, AgentError>).self) { group in
            var results: [Int: Result<SSHRoute, AgentError>] = [:]
            for (i, spec) in agents.enumerated() {
                if i >= 16, let next = await group.next() { results[next.0] = next.1 }
                group.addTask {
                    do throws(AgentError) {
                        let route = try await resolver.resolve(spec, settings: ssh)
                        return (i, .success(route))
                    } catch {
                        return (i, .failure(error))
                    }
                }
            }
            while let next = await group.next() { results[next.0] = next.1 }
            return results
        }
        return Routes(routes: try agents.indices.map { i throws(AgentError) in try resolved[i]!.get() })
    }

    /// `routes`: each SSH agent's (``resolveRoutes(of:ssh:)``); an agent without one resolves its own.
    public init(agents: [SSHAgentSpec], ssh: SSHSettings, routes: Routes = .none, localSlots: Int) {
        let routes = routes.routes
        if agents.isEmpty {
            transports = [LocalTransport(slots: localSlots)]
            archives = nil
            return
        }
        let archives = ProductArchives()
        transports = agents.enumerated().map { i, spec in
            SSHTransport(spec: spec, settings: ssh, archives: archives, route: i < routes.count ? routes[i] : nil)
        }
        self.archives = archives
    }

    /// This machine alone, with `slots` slots: where a replay runs for the person who asked (`fanout bisect`).
    public static func thisMachine(slots: Int) -> AgentFleet {
        AgentFleet(transports: [LocalTransport(name: "local", slots: slots)])
    }

    /// Transports made elsewhere (tests, scripted agents).
    public init(transports: [any Transport]) {
        self.transports = transports
        archives = nil
    }

    /// Every agent starts getting ready for the run `runID` (``Transport/warmUp(runID:)``) while the coordinator
    /// builds and plans; the run's `shutdown` undoes what it did, whatever happens to the run meanwhile.
    public func warmUp(runID: String) {
        for transport in transports { transport.warmUp(runID: runID) }
    }

    /// Shuts every agent down, then deletes what was packed for them.
    public func shutdown() async {
        await withTaskGroup(of: Void.self) { group in
            for transport in transports { group.addTask { await transport.shutdown() } }
        }
        await archives?.discard()
    }

    /// The last thing a coordinator does when told to quit at once: every kind of transport kills what it started,
    /// waiting at most `deadline` seconds (see `Transport.emergencyStop`).
    public static func emergencyStop(deadline: Double = 2) {
        for kind in kinds { kind.emergencyStop(deadline: deadline) }
    }
}
