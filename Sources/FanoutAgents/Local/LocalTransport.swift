import FanoutCore

/// Worker slots on this machine: test processes run as children of the coordinator.
public struct LocalTransport: Transport {
    public let name: String
    public let slots: Int
    public var kind: TransportKind { .local }

    public init(name: String = "local", slots: Int) {
        self.name = name
        self.slots = max(1, slots)
    }

    public func prepare(product: TestProduct, runID: String) async throws -> String { product.binary }

    public func run(_ command: Command, timeout: Double?) -> AsyncStream<ProcessEvent> {
        let (stream, continuation) = AsyncStream<ProcessEvent>.makeStream(bufferingPolicy: .unbounded)
        let process = LocalProcess.start(command, timeout: timeout, events: continuation)
        continuation.onTermination = { reason in
            if case .cancelled = reason { process?.cancel() }
        }
        return stream
    }

    public func shutdown() async {}

    public func hardwareClass() async -> String? {
        let (ending, out, _) = await capture(Command(executable: "/bin/sh", arguments: ["-c", HardwareClass.probe]), timeout: 10)
        guard ending == .exited(0) else { return nil }
        return HardwareClass.parse(String(decoding: out, as: UTF8.self))
    }
}
