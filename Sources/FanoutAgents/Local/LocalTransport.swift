import FanoutCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Worker slots on this machine: test processes run as children of the coordinator.
public struct LocalTransport: Transport {
    /// Kills every process group still running on this machine (`LocalProcess.killAll`).
    public static func emergencyStop(deadline: Double) { LocalProcess.killAll() }

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

    /// This machine's online CPUs and physical memory; `machine` is /etc/machine-id, else the host name, as an SSH
    /// agent on this same machine reports it (``AgentResourcesProbe``), so its cores are counted once.
    public func resources() async -> AgentResources? {
        AgentResources(cores: max(1, ProcessInfo.processInfo.activeProcessorCount),
                       memoryBytes: Int64(clamping: ProcessInfo.processInfo.physicalMemory),
                       machine: Self.machineIdentity())
    }

    static func machineIdentity() -> String? {
        if let id = try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines), !id.isEmpty {
            return id
        }
        // gethostname, not ProcessInfo.hostName, which may wait on a DNS lookup.
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return nil }
        let host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return host.isEmpty ? nil : host
    }
}
