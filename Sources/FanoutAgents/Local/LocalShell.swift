import FanoutCore

/// Commands on the coordinator's own machine that are not tests (building, listing tests, `swift package
/// describe`, `ssh -G`): run to their end in a process group of their own, like every process Fanout starts, so a
/// second Ctrl-C stops them too. Not an agent: it has no slots and takes no work.
public struct LocalShell: Sendable {
    private let transport: LocalTransport

    /// `name` says what the commands are for, in messages.
    public init(_ name: String) { transport = LocalTransport(name: name, slots: 1) }

    /// Runs `command` to its end and returns everything it wrote.
    public func capture(_ command: Command, timeout: Double? = nil) async -> (UnitEnding, stdout: [UInt8], stderr: [UInt8]) {
        await transport.capture(command, timeout: timeout)
    }
}
