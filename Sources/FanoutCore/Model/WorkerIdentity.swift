/// Who a test process (or a hook) is within a run: what a suite needs to give each parallel worker a resource of its
/// own (a database per worker, as `TEST_ENV_NUMBER` does for Ruby's parallel_tests and `PYTEST_XDIST_WORKER` for
/// pytest-xdist).
///
/// Every test process gets these variables; `environment:` values of a destination or an agent may use them as
/// `${FANOUT_WORKER}` (expanded by ``expand(_:)``), and hooks get them in their environment. A unit retried or stolen
/// runs in another slot and gets that slot's identity: the identity belongs to the slot, never to the test.
public struct WorkerIdentity: Sendable, Hashable {
    /// The run's id (report.json's `runID`).
    public var runID: String
    /// How many workers the run has: every slot of every agent (`FANOUT_WORKERS`).
    public var workers: Int
    /// The agent's name (`local` for local slots).
    public var agent: String?
    /// The slot's index on its agent, from 0.
    public var slot: Int?
    /// The slot's index across the run (all agents, all destinations), from 0 to `workers - 1`: agents in the
    /// fleet's order, each agent's slots in order. Stable within the run, also when a lost agent comes back.
    public var worker: Int?
    /// The destination of the unit the process runs (absent in hooks: a slot may serve several).
    public var destination: String?

    public init(runID: String, workers: Int, agent: String? = nil, slot: Int? = nil, worker: Int? = nil,
                destination: String? = nil) {
        self.runID = runID
        self.workers = workers
        self.agent = agent
        self.slot = slot
        self.worker = worker
        self.destination = destination
    }

    /// The variables' names, in the order the documentation lists them. Set by Fanout alone: the config may not.
    public static let names = ["FANOUT_RUN_ID", "FANOUT_WORKERS", "FANOUT_AGENT", "FANOUT_SLOT", "FANOUT_WORKER",
                               "FANOUT_DESTINATION"]

    /// The variables this identity sets (those it knows: a run-level hook has no slot).
    public var environment: [String: String] {
        var env = ["FANOUT_RUN_ID": runID, "FANOUT_WORKERS": String(workers)]
        if let agent { env["FANOUT_AGENT"] = agent }
        if let slot { env["FANOUT_SLOT"] = String(slot) }
        if let worker { env["FANOUT_WORKER"] = String(worker) }
        if let destination { env["FANOUT_DESTINATION"] = destination }
        return env
    }

    /// `value` with every `${NAME}` of an identity variable replaced by its value: the one function that expands
    /// templated `environment:` values. Anything else is left as written (`$HOME`, `${OTHER}`, a lone `$`): the
    /// config already replaced the coordinator's own variables, and a variable this identity does not know (a
    /// slot's in a run-level hook) stays visible rather than becoming an empty string.
    public func expand(_ value: String) -> String {
        guard value.contains("${FANOUT_") else { return value }
        let env = environment
        var out = ""
        var rest = Substring(value)
        while let open = rest.range(of: "${") {
            out += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else { return out + rest[open.lowerBound...] }
            let name = String(rest[open.upperBound..<close])
            out += env[name] ?? String(rest[open.lowerBound...close])
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    /// The environment of a process with this identity: `configured` (a destination's and its agent's
    /// `environment:`, the agent's winning), each value expanded, then the identity's own variables.
    public func environment(configured: [String: String]) -> [String: String] {
        var env = configured.mapValues(expand)
        for (k, v) in environment { env[k] = v }
        return env
    }
}
