import FanoutCore

/// The `xcrun simctl` commands that give each slot of a macOS agent a simulator of its own: created from the
/// destination's device type and runtime, booted once, reused by every unit of the slot (erased between units when
/// the destination asks), deleted when the run ends. Runners describe them; transports run them.
public enum SimulatorCommands {
    /// A simulator's name: which run, agent and slot it belongs to, so a person (or a clean-up) can tell.
    public static func name(runID: String, agent: String, slot: Int, destination: String) -> String {
        "fanout \(runID) \(agent) slot \(slot) \(destination)"
    }

    /// Creates the simulator; its standard output is the new device's UDID.
    public static func create(_ device: Device, name: String, environment: [String: String]) -> Command {
        // simctl takes a device type by its name (`iPhone 16`) or identifier; names do not map to identifiers by
        // any rule (`iPod touch (7th generation)` is `iPod-touch--7th-generation-`), so the name goes, unless given.
        shell(ShellQuote.commandWord(device.xcrun) + " "
              + ShellQuote.join(["simctl", "create", name, device.deviceType ?? device.model, device.runtimeIdentifier]),
              environment)
    }

    /// Boots the simulator and waits until it has booted (`bootstatus -b` boots it when needed).
    public static func boot(_ device: Device, udid: String, environment: [String: String]) -> Command {
        shell(ShellQuote.commandWord(device.xcrun) + " " + ShellQuote.join(["simctl", "bootstatus", udid, "-b"]), environment)
    }

    /// Erases the simulator (a clean app state) and boots it again.
    public static func erase(_ device: Device, udid: String, environment: [String: String]) -> Command {
        let xcrun = ShellQuote.commandWord(device.xcrun)
        let id = ShellQuote.quote(udid)
        return shell("""
            \(xcrun) simctl shutdown \(id) >/dev/null 2>&1
            \(xcrun) simctl erase \(id) && \(xcrun) simctl bootstatus \(id) -b
            """, environment)
    }

    /// Shuts the simulator down and deletes it.
    public static func delete(_ device: Device, udid: String, environment: [String: String]) -> Command {
        let xcrun = ShellQuote.commandWord(device.xcrun)
        let id = ShellQuote.quote(udid)
        return shell("""
            \(xcrun) simctl shutdown \(id) >/dev/null 2>&1
            \(xcrun) simctl delete \(id)
            """, environment)
    }

    /// Through `/bin/sh`, so that the tools are found on the agent's PATH (local slots spawn without a shell).
    static func shell(_ script: String, _ environment: [String: String]) -> Command {
        Command(executable: "/bin/sh", arguments: ["-c", script], environment: environment)
    }

    /// The UDID `simctl create` printed (its last non-empty line), when it is one.
    public static func createdUDID(_ output: String) -> String? {
        guard let line = output.split(whereSeparator: \.isNewline).last?.trimmingCharacters(in: .whitespaces),
              isUDID(line) else { return nil }
        return line
    }

    /// `8-4-4-4-12` hexadecimal digits.
    public static func isUDID(_ s: String) -> Bool {
        let groups = s.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}
