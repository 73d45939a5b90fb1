import FanoutAgents
import FanoutCore
import FanoutRunners

/// The slots of one admitted agent: each asks the dispatcher for a unit, places it on the slot's simulator (Apple
/// destinations), has `UnitExecution` run it and hands it back, until the dispatcher has nothing left for it or the
/// agent is lost.
struct SlotLoop: Sendable {
    let settings: RunSettings
    let prepared: PreparedRun
    let runID: String
    let state: Dispatcher
    let execution: UnitExecution
    let transport: any Transport
    /// The test binary on the agent, by destination.
    let binaries: [String: String]

    /// Runs every slot to its end. Returns whether the agent was lost, and the simulators of slots that could not
    /// delete theirs (the agent was lost with them on it).
    func run() async -> (lost: Bool, stale: [SlotSimulators]) {
        await withTaskGroup(of: (Bool, SlotSimulators).self) { slots in
            for index in 0..<transport.slots {
                slots.addTask { await serve(SlotRef(agent: transport.name, index: index)) }
            }
            var lost = false
            var stale: [SlotSimulators] = []
            for await (l, simulators) in slots {
                if l { lost = true }
                if !simulators.isEmpty { stale.append(simulators) }
            }
            return (lost, stale)
        }
    }

    private func serve(_ slot: SlotRef) async -> (Bool, SlotSimulators) {
        var simulators = SlotSimulators(transport: transport, runID: runID, slot: slot)
        var lost = false
        while transport.isUsable, let unit = await state.next(for: slot) {
            let configured = prepared.spec(unit.destination)?.destination ?? settings.destination
            let done: FinishedUnit
            do throws(RunnerError) {
                let destination = try await simulators.place(configured, retry: unit.items.contains { $0.retry > 0 })
                done = await execution.run(unit, on: transport, binary: binaries[unit.destination] ?? "",
                                           destination: destination, slot: slot)
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
        return (lost, simulators)
    }
}
