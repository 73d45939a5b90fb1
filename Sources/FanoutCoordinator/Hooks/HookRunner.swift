import FanoutAgents
import FanoutCore
import Foundation

/// Runs the hooks of `hooks:` where their scope lives: a slot's and an agent's on that agent (its transport: a
/// process group with a deadline, killed like any unit), the run's on the coordinator. A teardown runs in a task of
/// its own that no interruption cancels: one due after Ctrl-C still runs, within its own deadline; a set-up is
/// stopped by an interruption (its process group killed).
///
/// The hook's environment is the worker identity (`WorkerIdentity`) over the agent's `environment:` and, when the
/// agent serves one destination, that destination's (expanded as a test process's would be), so that a slot's
/// set-up can create exactly the database its tests' `DATABASE_URL` names.
struct HookRunner: Sendable {
    let hooks: HookSettings
    let runID: String
    /// Every slot of every agent, and the worker index of each agent's slot 0 (agents in the fleet's order).
    let workers: Int
    let firstWorker: [String: Int]
    let clock: RunClock
    /// The configured environment of each destination, by name.
    let destinations: [String: [String: String]]

    init(hooks: HookSettings, runID: String, transports: [any Transport], clock: RunClock,
         destinations: [String: [String: String]]) {
        self.hooks = hooks
        self.runID = runID
        self.clock = clock
        self.destinations = destinations
        var next = 0
        var first: [String: Int] = [:]
        for t in transports {
            first[t.name] = next
            next += t.slots
        }
        firstWorker = first
        workers = next
    }

    /// The identity of a process in this slot (tests add their destination).
    func identity(agent: String, slot: Int?, destination: String? = nil) -> WorkerIdentity {
        WorkerIdentity(runID: runID, workers: workers, agent: agent, slot: slot,
                       worker: slot.map { (firstWorker[agent] ?? 0) + $0 }, destination: destination)
    }

    func has(_ scope: HookReport.Scope, _ phase: HookReport.Phase) -> Bool { hooks[scope, phase] != nil }

    /// Runs the hook of `scope` and `phase` on `transport` (the slot's when `slot` is given); nil when the config has
    /// none. `serves`: the destinations the agent takes work for (one of them: its environment applies too).
    func run(_ scope: HookReport.Scope, _ phase: HookReport.Phase, on transport: any Transport, slot: Int? = nil,
             serves: Set<String>) async -> HookReport? {
        guard let hook = hooks[scope, phase] else { return nil }
        let identity = identity(agent: transport.name, slot: slot, destination: serves.count == 1 ? serves.first : nil)
        var configured = serves.count == 1 ? destinations[serves.first!] ?? [:] : [:]
        configured.merge(transport.environment) { $1 }
        return await run(hook, scope: scope, phase: phase, agent: transport.name, identity: identity, configured: configured) {
            await transport.capture($0, timeout: $1)
        }
    }

    /// The run's own hook, on the coordinator (with the run's one destination's environment, if it has one).
    func runOnCoordinator(_ phase: HookReport.Phase) async -> HookReport? {
        guard let hook = hooks[.run, phase] else { return nil }
        let configured = destinations.count == 1 ? destinations.values.first! : [:]
        let shell = LocalShell("the run's \(phase == .setUp ? "set-up" : "teardown") hook")
        return await run(hook, scope: .run, phase: phase, agent: nil, identity: WorkerIdentity(runID: runID, workers: workers),
                         configured: configured) { await shell.capture($0, timeout: $1) }
    }

    /// What a hook that was due could not do (its agent was lost and never came back).
    func notRun(_ scope: HookReport.Scope, _ phase: HookReport.Phase, agent: String, slot: Int?, why: String) -> HookReport? {
        guard let hook = hooks[scope, phase] else { return nil }
        let identity = identity(agent: agent, slot: slot)
        return HookReport(scope: scope, phase: phase, agent: agent, slot: slot, worker: identity.worker, command: hook.line,
                          status: .notRun, detail: why, startedAt: clock.now(), duration: 0, output: "")
    }

    private func run(_ hook: HookSettings.Command, scope: HookReport.Scope, phase: HookReport.Phase, agent: String?,
                     identity: WorkerIdentity, configured: [String: String],
                     capture: @escaping @Sendable (Command, Double) async -> (UnitEnding, [UInt8], [UInt8])) async -> HookReport {
        let command = Command(executable: "/bin/sh", arguments: ["-c", hook.line],
                              environment: identity.environment(configured: configured))
        let start = clock.now()
        // The transport kills the hook's process group at its deadline; should its output still not end (a process
        // that left the group holds it open), the hook is given up a grace period later all the same.
        let bounded = { @Sendable () async -> (UnitEnding, [UInt8], [UInt8]) in
            await withTaskGroup(of: (UnitEnding, [UInt8], [UInt8])?.self) { group in
                group.addTask { await capture(command, hook.timeout) }
                group.addTask {
                    try? await Task.sleep(for: .seconds(hook.timeout + Self.grace))
                    return Task.isCancelled ? nil : (.timedOut(TimeLimitHit(kind: .ceiling, limit: hook.timeout)), [], [])
                }
                // Both children end once cancelled: `capture` iterates an AsyncStream, whose iteration ends when its
                // consumer is cancelled (and the transport then kills the process group).
                let first = await group.next() ?? nil
                group.cancelAll()
                var result = first ?? (.cancelled, [], [])
                // Interrupted: whatever the children said first, the hook was stopped (what it wrote is kept).
                if Task.isCancelled, case .exited = result.0 {} else if Task.isCancelled { result.0 = .cancelled }
                return result
            }
        }
        // A teardown is detached: an interrupted run cancels its tasks, and the teardown must still run.
        let (ending, out, err) = phase == .tearDown ? await Task.detached { await bounded() }.value : await bounded()
        let status: HookReport.Status
        let detail: String
        switch ending {
        case .exited(0):
            (status, detail) = (.passed, "exit 0")
        case .timedOut:
            (status, detail) = (.timedOut, "still running after its deadline of \(formatSeconds(hook.timeout)): killed")
        case .cancelled:
            (status, detail) = (.notRun, "the run was interrupted: killed")
        case .agentLost(let why):
            (status, detail) = (.notRun, "its agent was lost: \(why)")
        case .failedToStart(let why):
            (status, detail) = (.notRun, "could not start: \(why)")
        default:
            (status, detail) = (.failed, ending.description)
        }
        var output = String(decoding: out, as: UTF8.self)
        let errors = String(decoding: err, as: UTF8.self)
        if !errors.isEmpty { output += (output.isEmpty || output.hasSuffix("\n") ? "" : "\n") + errors }
        if output.utf8.count > Self.outputLimit {
            output = "…" + String(decoding: Array(output.utf8.suffix(Self.outputLimit)), as: UTF8.self)
        }
        return HookReport(scope: scope, phase: phase, agent: agent, slot: identity.slot,
                          worker: identity.worker, command: hook.line, status: status, detail: detail, startedAt: start,
                          duration: clock.now() - start, output: output)
    }

    /// Seconds past its deadline (on the wall clock, as the transport's own deadline) after which a hook whose output
    /// never ended is given up.
    static let grace: Double = 10

    /// What a report keeps of a hook's output: its last 16 KiB.
    static let outputLimit = 16 * 1024
}
