import FanoutAgents
import FanoutCore
import FanoutRunners

/// The slots of one admitted agent: each runs its set-up hook, then asks the dispatcher for a unit, places it on the
/// slot's simulator (Apple destinations), has `UnitExecution` run it with the slot's worker identity and hands it
/// back, until the dispatcher has nothing left for it or the agent is lost; then its teardown hook (left due when
/// the agent was lost: `AgentServer` runs it when the agent is back).
struct SlotLoop: Sendable {
    let settings: RunSettings
    let prepared: PreparedRun
    let runID: String
    let state: Dispatcher
    let execution: UnitExecution
    let transport: any Transport
    /// The test binary on the agent, by destination.
    let binaries: [String: String]
    let hooks: HookRunner

    /// What the slots left: whether the agent was lost, the simulators of slots that could not delete theirs (the
    /// agent was lost with them on it), and the slots whose teardown hook is due (it could not run: agent lost).
    struct Ending {
        var lost = false
        var stale: [SlotSimulators] = []
        var teardownsDue: [Int] = []
    }

    /// Runs every slot to its end.
    func run() async -> Ending {
        await withTaskGroup(of: (Bool, SlotSimulators, Int?).self) { slots in
            for index in 0..<transport.slots {
                slots.addTask { await serve(SlotRef(agent: transport.name, index: index)) }
            }
            var ending = Ending()
            for await (l, simulators, due) in slots {
                if l { ending.lost = true }
                if !simulators.isEmpty { ending.stale.append(simulators) }
                if let due { ending.teardownsDue.append(due) }
            }
            ending.teardownsDue.sort()
            return ending
        }
    }

    /// One slot: set-up, units, teardown. Returns whether the agent was lost, its simulators, and its index when
    /// its teardown is due (the agent is gone: it runs when the agent is back).
    private func serve(_ slot: SlotRef) async -> (Bool, SlotSimulators, Int?) {
        var simulators = SlotSimulators(transport: transport, runID: runID, slot: slot)
        let serves = Set(binaries.keys)
        if hooks.has(.slot, .setUp) {
            let setUp = await hooks.run(.slot, .setUp, on: transport, slot: slot.index, serves: serves)
            guard await state.hookEnded(setUp) else {
                // A half-done set-up is undone too: a teardown runs whenever its set-up ran.
                guard transport.isUsable else { return (true, simulators, slot.index) }
                await state.hookEnded(await hooks.run(.slot, .tearDown, on: transport, slot: slot.index, serves: serves))
                return (false, simulators, nil)
            }
        }
        var lost = false
        while transport.isUsable, let unit = await state.next(for: slot) {
            let configured = prepared.spec(unit.destination)?.destination ?? settings.destination
            let done: FinishedUnit
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
                await state.complete(done)
                await state.warn("slot \(slot.index) of \(transport.name) stops: \(error)")
                break
            }
            await state.complete(done)
            if case .agentLost(let why) = done.ending {
                await state.warn("agent \(transport.name) was lost (\(why)): its unfinished work goes back to the queue")
                lost = true
                break
            }
        }
        if !lost { await simulators.deleteAll() }
        guard hooks.has(.slot, .tearDown) else { return (lost, simulators, nil) }
        if lost || !transport.isUsable { return (lost, simulators, slot.index) }
        await state.hookEnded(await hooks.run(.slot, .tearDown, on: transport, slot: slot.index, serves: serves))
        return (lost, simulators, nil)
    }
}
