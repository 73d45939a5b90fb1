import FanoutAgents
import FanoutCore
import FanoutRunners

/// The simulators of one slot: each simulator destination the slot runs gets a simulator of its own, created on the
/// slot's first unit there, booted once and reused by the slot's later units (erased first when the destination
/// asks, or when the unit re-runs failed tests), and deleted when the slot is done. Slots never share one.
struct SlotSimulators: Sendable {
    let transport: any Transport
    let runID: String
    let slot: SlotRef
    private var udids: [String: String] = [:]
    private var devices: [String: (Device, [String: String])] = [:]

    /// Creating and booting a simulator can take minutes on a loaded Mac.
    static let timeout = 600.0

    init(transport: any Transport, runID: String, slot: SlotRef) {
        self.transport = transport
        self.runID = runID
        self.slot = slot
    }

    /// The destination as this slot runs it: on its own simulator. Throws why it has none.
    mutating func place(_ destination: Destination, retry: Bool) async throws(RunnerError) -> Destination {
        guard var device = destination.device, device.isSimulator else { return destination }
        let env = destination.environment
        if let udid = udids[destination.name] {
            if device.eraseBetweenUnits || retry {
                try await run(SimulatorCommands.erase(device, udid: udid, environment: env), "erasing simulator \(udid)")
            }
            device.udid = udid
        } else {
            let name = SimulatorCommands.name(runID: runID, agent: slot.agent, slot: slot.index, destination: destination.name)
            let out = try await run(SimulatorCommands.create(device, name: name, environment: env),
                                    "creating a \(device.identity) simulator")
            guard let udid = SimulatorCommands.createdUDID(out) else {
                throw RunnerError("creating a \(device.identity) simulator on \(slot.agent) printed no device id: \(out.prefix(300))")
            }
            udids[destination.name] = udid
            devices[destination.name] = (device, env)
            await transport.runIfCoordinatorGone(SimulatorCommands.delete(device, udid: udid, environment: env))
            try await run(SimulatorCommands.boot(device, udid: udid, environment: env), "booting simulator \(udid)")
            device.udid = udid
        }
        var placed = destination
        placed.device = device
        return placed
    }

    /// True when every simulator this slot created is deleted.
    var isEmpty: Bool { udids.isEmpty }

    /// Deletes every simulator this slot created; those that could not be deleted (the agent is unreachable) are
    /// kept, for a later try. Runs outside the caller's task, so that a cancelled run (Ctrl-C, a CI job's SIGTERM)
    /// still cleans up: a cancelled task's process streams would end before simctl ran.
    mutating func deleteAll() async {
        let me = self
        udids = await Task.detached {
            var left: [String: String] = [:]
            for (name, udid) in me.udids.sorted(by: { $0.key < $1.key }) {
                guard let (device, env) = me.devices[name] else { continue }
                let (ending, _, _) = await me.transport.capture(SimulatorCommands.delete(device, udid: udid, environment: env),
                                                                timeout: 120)
                if ending != .exited(0) { left[name] = udid }
            }
            return left
        }.value
    }

    @discardableResult
    private func run(_ command: Command, _ what: String) async throws(RunnerError) -> String {
        let (ending, out, err) = await transport.capture(command, timeout: Self.timeout)
        guard ending == .exited(0) else {
            let text = String(decoding: err.isEmpty ? out : err, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw RunnerError("\(what) on \(slot.agent) failed (\(ending)): \(text.suffix(500))")
        }
        return String(decoding: out, as: UTF8.self)
    }
}
