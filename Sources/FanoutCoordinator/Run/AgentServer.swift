import FanoutAgents
import FanoutCore
import FanoutRunners
import Foundation

/// Serves one agent for the whole run: admission (deploys the product to it, runs its set-up hook, and re-admits
/// the agent with back-off when it is lost and comes back), the slot loops (each slot asks the dispatcher for a unit
/// and has `UnitExecution` run it, until the dispatcher has nothing left for it), and its teardown hooks. A
/// teardown is never skipped: one due when the agent was lost runs when it is back (before anything else there), or
/// at the end, after one more attempt to reach it; one that still cannot run is reported as not run.
struct AgentServer: Sendable {
    let settings: RunSettings
    let prepared: PreparedRun
    let runID: String
    let dispatcher: Dispatcher
    let progress: ProgressHandler
    /// Runs each unit a slot is given.
    let execution: UnitExecution
    let hooks: HookRunner

    /// Teardown hooks owed on one agent: those of slots, and the agent's own, whose set-up ran.
    private struct TeardownsDue {
        var slots: [Int] = []
        var agent = false
        /// The destinations the agent took work for when they were set up (their environment applies to the hooks).
        var serves: Set<String> = []
        var isEmpty: Bool { slots.isEmpty && !agent }
    }

    /// One agent for the whole run: deploy, run its slots until the queue is drained, and when it is lost, retry
    /// with backoff while work remains (re-admission). Returns whether the agent was ever usable: deployed, set up,
    /// and with a slot that was set up.
    func serve(_ transport: any Transport) async -> Bool {
        // Simulators of slots whose agent was lost: deleted once it is back, else here at the end.
        var stale: [SlotSimulators] = []
        var due = TeardownsDue()
        let usable = await serve(transport, stale: &stale, due: &due)
        if !due.isEmpty { await lastChance(due, on: transport) }
        if !stale.isEmpty {
            stale = await Self.delete(stale)
            if !stale.isEmpty {
                await dispatcher.warn("agent \(transport.name) was lost with simulators of this run on it: delete them there "
                    + "(xcrun simctl list devices | grep 'fanout \(runID) ')")
            }
        }
        return usable
    }

    private func serve(_ transport: any Transport, stale: inout [SlotSimulators], due: inout TeardownsDue) async -> Bool {
        let mine = transport.served(of: prepared.destinations)
        guard !mine.isEmpty else { return false }
        var admitted = false
        var tookWork = false
        var attempts = 0
        /// Admissions in a row lost before a slot took work (while setting up): past `backoff.count`, the agent is
        /// given up, or a set-up that takes its own agent down would be run again for as long as work remains.
        var lostSettingUp = 0
        let backoff: [Double] = [1, 2, 4, 8, 15, 15]
        while !Task.isCancelled {
            var binaries: [String: String] = [:]
            do {
                progress(.phase(admitted ? "re-admitting \(transport.name)" : "deploying to \(transport.name)"))
                var byProduct: [String: String] = [:]
                for spec in mine {
                    guard let product = prepared.products[spec.name] else { continue }
                    if byProduct[product.binary] == nil {
                        byProduct[product.binary] = try await transport.prepare(product: product, runID: runID)
                    }
                    binaries[spec.name] = byProduct[product.binary]
                }
            } catch {
                guard admitted else {
                    await dispatcher.warn("agent \(transport.name) is not usable and is skipped: \(error)")
                    return false
                }
                guard attempts < backoff.count, await dispatcher.hasWork else {
                    await dispatcher.warn("agent \(transport.name) did not come back (\(error)); the run went on without it")
                    return tookWork
                }
                await dispatcher.clock.pause(for: .seconds(backoff[attempts]))
                attempts += 1
                continue
            }
            for notice in transport.takeNotices() { await dispatcher.warn(notice) }
            stale = await Self.delete(stale)
            // Interrupted meanwhile: nothing more is set up (what is due is torn down at the end).
            if Task.isCancelled { break }
            if await dispatcher.stopped { break }
            let serves = Set(binaries.keys)
            // The agent is back: what its lost session owed runs first, then its set-up as on a first admission.
            due = await tearDown(due, on: transport, serves: due.isEmpty ? serves : due.serves)
            due.serves = serves
            var lostNow = !transport.isUsable
            if !lostNow, hooks.has(.agent, .setUp) {
                due.agent = hooks.has(.agent, .tearDown)
                let setUp = await hooks.run(.agent, .setUp, on: transport, serves: serves)
                await dispatcher.hookEnded(setUp)
                lostNow = !transport.isUsable
                if setUp?.status != .passed, !lostNow {
                    due = await tearDown(due, on: transport, serves: serves)
                    return tookWork
                }
            } else if !lostNow {
                due.agent = hooks.has(.agent, .tearDown)
            }
            if !lostNow {
                if admitted { await dispatcher.warn("agent \(transport.name) is back and takes work again") }
                let details = transport.details
                if let seconds = details.deploySeconds, let bytes = details.deployedBytes {
                    progress(.phase("\(transport.name) ready in \(formatSeconds(seconds)): "
                        + (details.deployCached == true ? "product already in its cache (0 bytes sent)" : "sent \(bytes) bytes")))
                }
                admitted = true
                attempts = 0
                let ending = await SlotLoop(settings: settings, prepared: prepared, runID: runID, dispatcher: dispatcher,
                                            execution: execution, transport: transport, binaries: binaries, hooks: hooks)
                    .run { [dispatcher] in
                        await dispatcher.agentReady(transport.name, serves: serves, hardwareClass: await transport.hardwareClass(),
                                               resources: await transport.resources())
                    }
                stale += ending.stale
                tookWork = tookWork || ending.ready
                lostSettingUp = ending.ready ? 0 : lostSettingUp
                due.slots += ending.teardownsDue
                await dispatcher.agentGone(transport.name)
                lostNow = ending.lost || !transport.isUsable
                if !lostNow { due = await tearDown(due, on: transport, serves: serves) }
                if lostNow, !ending.ready { lostSettingUp += 1 }
            } else {
                lostSettingUp += 1
            }
            guard lostNow, await dispatcher.hasWork else { break }
            if lostSettingUp > 0 {
                guard lostSettingUp < backoff.count else {
                    await dispatcher.warn("agent \(transport.name) was lost while setting up \(lostSettingUp) times in a row: "
                        + "the run goes on without it (see its hooks)")
                    break
                }
                await dispatcher.warn("agent \(transport.name) was lost while setting up: it is set up again when it is back")
            }
            await transport.reset()
            await dispatcher.clock.pause(for: .seconds(backoff[min(lostSettingUp, backoff.count - 1)]))
            attempts = 1
        }
        return tookWork
    }

    /// Runs the teardowns due on an agent that is reachable: its slots', then its own. Returns what is still due
    /// (the agent was lost again meanwhile).
    private func tearDown(_ due: TeardownsDue, on transport: any Transport, serves: Set<String>) async -> TeardownsDue {
        var left = TeardownsDue(serves: due.serves)
        for slot in due.slots {
            let hook = await hooks.run(.slot, .tearDown, on: transport, slot: slot, serves: serves)
            if hook?.status == .notRun, !transport.isUsable { left.slots.append(slot) } else { await dispatcher.hookEnded(hook) }
        }
        if due.agent {
            let hook = await hooks.run(.agent, .tearDown, on: transport, serves: serves)
            if hook?.status == .notRun, !transport.isUsable { left.agent = true } else { await dispatcher.hookEnded(hook) }
        }
        return left
    }

    /// The run is over and teardowns are still due on an agent (it was lost, or the run was interrupted before they
    /// ran): they run now, after one more attempt to reach a lost agent (a fresh connection and the product, from
    /// its cache); what still cannot run is reported. Detached: an interrupted run still gets its teardowns.
    private func lastChance(_ due: TeardownsDue, on transport: any Transport) async {
        let mine = transport.served(of: prepared.destinations)
        let serves = due.serves
        let (left, why) = await Task.detached { [self] () -> (TeardownsDue, String) in
            var why = "its agent was lost and did not come back before the run ended"
            if !transport.isUsable {
                do {
                    await transport.reset()
                    let products = Set(mine.compactMap { prepared.products[$0.name] })
                    for product in products { _ = try await transport.prepare(product: product, runID: runID) }
                } catch {
                    return (due, why + " (\(error))")
                }
            }
            why = "its agent was lost again"
            return (await tearDown(due, on: transport, serves: serves), why)
        }.value
        for slot in left.slots {
            await dispatcher.hookEnded(hooks.notRun(.slot, .tearDown, agent: transport.name, slot: slot, why: why))
        }
        if left.agent { await dispatcher.hookEnded(hooks.notRun(.agent, .tearDown, agent: transport.name, slot: nil, why: why)) }
    }

    /// Deletes what it can of these slots' simulators; returns those still there.
    private static func delete(_ simulators: [SlotSimulators]) async -> [SlotSimulators] {
        var left: [SlotSimulators] = []
        for var s in simulators {
            await s.deleteAll()
            if !s.isEmpty { left.append(s) }
        }
        return left
    }
}

extension Transport {
    /// The destinations this agent serves (local slots serve them all).
    func served(of destinations: [DestinationSpec]) -> [DestinationSpec] {
        let serving = serving
        return destinations.filter { serving.serves(name: $0.name, requiredTags: $0.tags) }
    }
}
