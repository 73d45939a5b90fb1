import FanoutAgents
import FanoutCore
import FanoutRunners

/// The slots of one admitted agent. First every slot's set-up hook (all at once, before the agent takes work: nothing
/// runs beside a unit that must be alone on its agent); then each slot that was set up asks the dispatcher for a
/// unit, places it on the slot's simulator (Apple destinations), has `UnitExecution` run it with the slot's worker
/// identity and hands it back, until the dispatcher has nothing left for it or the agent is lost; then, once every
/// slot is done, their teardown hooks (due when the agent was lost: `AgentServer` runs them when it is back).
struct SlotLoop: Sendable {
    let settings: RunSettings
    let prepared: PreparedRun
    let runID: String
    let dispatcher: Dispatcher
    let execution: UnitExecution
    let transport: any Transport
    /// The test binary on the agent, by destination.
    let binaries: [String: String]
    let hooks: HookRunner

    /// What the slots left: whether the agent was lost, the simulators of slots that could not delete theirs (the
    /// agent was lost with them on it), and the slots whose teardown hook is due (it could not run: agent lost).
    struct Ending {
        /// Some slot was set up and took work.
        var ready = false
        var lost = false
        var stale: [SlotSimulators] = []
        var teardownsDue: [Int] = []
    }

    /// Sets the slots up, tells the dispatcher the agent is `ready` (when a slot is), runs every slot to its end, and
    /// tears them down.
    func run(ready: @Sendable () async -> Void) async -> Ending {
        var ending = Ending()
        let all = Array(0..<transport.slots)
        let serves = Set(binaries.keys)
        // Interrupted before the slots were set up: nothing more is set up (and so nothing is due).
        if Task.isCancelled { return ending }
        if await dispatcher.stopped { return ending }
        var usable = all
        if hooks.has(.slot, .setUp) {
            let passed = await eachSlot(all) { slot in
                await dispatcher.hookEnded(await hooks.run(.slot, .setUp, on: transport, slot: slot, serves: serves))
            }
            usable = all.filter { passed[$0] == true }
        }
        if !transport.isUsable {
            // Lost while setting up: every set-up may have begun, and is undone when the agent is back.
            ending.lost = true
            ending.teardownsDue = hooks.has(.slot, .tearDown) ? all : []
            return ending
        }
        // A set-up that failed is undone at once (a teardown runs whenever its set-up ran): its slot takes no work.
        let failed = all.filter { !usable.contains($0) }
        ending.teardownsDue = await tearDown(failed, serves: serves)
        guard !usable.isEmpty else { return ending }
        // Interrupted while setting up: what was set up is torn down at once, and takes no work.
        if await dispatcher.stopped {
            ending.teardownsDue += await tearDown(usable, serves: serves)
            ending.teardownsDue.sort()
            return ending
        }
        await ready()
        ending.ready = true
        await withTaskGroup(of: (Bool, SlotSimulators).self) { slots in
            for index in usable {
                slots.addTask { await serve(SlotRef(agent: transport.name, index: index)) }
            }
            for await (l, simulators) in slots {
                if l { ending.lost = true }
                if !simulators.isEmpty { ending.stale.append(simulators) }
            }
        }
        if ending.lost || !transport.isUsable {
            ending.lost = true
            ending.teardownsDue += hooks.has(.slot, .tearDown) ? usable : []
        } else {
            ending.teardownsDue += await tearDown(usable, serves: serves)
        }
        ending.teardownsDue.sort()
        return ending
    }

    /// Runs these slots' teardowns at once; returns the slots whose teardown is still due (the agent was lost).
    func tearDown(_ slots: [Int], serves: Set<String>) async -> [Int] {
        guard hooks.has(.slot, .tearDown), !slots.isEmpty else { return [] }
        let ran = await eachSlot(slots) { slot in
            let hook = await hooks.run(.slot, .tearDown, on: transport, slot: slot, serves: serves)
            if hook?.status == .notRun, !transport.isUsable { return false }
            await dispatcher.hookEnded(hook)
            return true
        }
        return slots.filter { ran[$0] != true }
    }

    /// `body` for every slot at once; what it returned, by slot.
    private func eachSlot(_ slots: [Int], _ body: @escaping @Sendable (Int) async -> Bool) async -> [Int: Bool] {
        await withTaskGroup(of: (Int, Bool).self) { group in
            for slot in slots { group.addTask { (slot, await body(slot)) } }
            var out: [Int: Bool] = [:]
            for await (slot, ok) in group { out[slot] = ok }
            return out
        }
    }

    /// One slot's units. Returns whether the agent was lost, and its simulators.
    private func serve(_ slot: SlotRef) async -> (Bool, SlotSimulators) {
        var simulators = SlotSimulators(transport: transport, runID: runID, slot: slot)
        var lost = false
        while transport.isUsable, let unit = await dispatcher.next(for: slot) {
            let configured = prepared.spec(unit.destination)?.destination ?? settings.destination
            let done: UnitRecord
            do throws(RunnerError) {
                let destination = try await simulators.place(configured, retry: unit.items.contains { $0.retry > 0 })
                done = await execution.run(unit, on: transport, binary: binaries[unit.destination] ?? "",
                                           destination: destination, slot: slot,
                                           identity: hooks.identity(agent: transport.name, slot: slot.index,
                                                                    destination: unit.destination))
            } catch {
                // No simulator, no unit: its tests go back to the queue (within the re-queue budget) and this slot
                // stops, while other slots and agents go on.
                done = execution.notStarted(unit, slot: slot, reason: error.description)
                await dispatcher.complete(done)
                await dispatcher.warn("slot \(slot.index) of \(transport.name) stops: \(error)")
                break
            }
            await dispatcher.complete(done)
            if case .agentLost(let why) = done.ending {
                await dispatcher.warn("agent \(transport.name) was lost (\(why)): its unfinished work goes back to the queue")
                lost = true
                break
            }
        }
        if !lost { await simulators.deleteAll() }
        return (lost, simulators)
    }
}
