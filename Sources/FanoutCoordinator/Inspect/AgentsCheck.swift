import FanoutAgents
import FanoutCore
import FanoutReports
import Foundation

/// `fanout agents check`: every agent in parallel — reachable, host key, auth, Swift toolchain, free disk, slots.
public enum AgentsCheck {
    public struct Row: Sendable {
        public var agent: String
        public var address: String
        public var usable: Bool
        public var cells: [String]
        public var problem: String?
        /// How the agent is reached and where each value came from (fanout.yml, the ssh config, a default), one
        /// line per hop; empty when the route could not be resolved.
        public var route: [String] = []
    }

    /// Checks every agent; `latencyRuns` > 0 also measures dispatch latency (running `true` on the open connection).
    public static func run(settings: RunSettings, latencyRuns: Int = 0) async -> (Table, [Row]) {
        // One transport per configured agent, in order (with no agents configured, there is nothing to check).
        let transports = settings.agents.isEmpty ? []
            : AgentFleet(agents: settings.agents, ssh: settings.ssh, localSlots: 1).transports
        let rows = await withTaskGroup(of: (Int, Row).self) { group in
            for (i, (spec, transport)) in zip(settings.agents, transports).enumerated() {
                group.addTask { (i, await check(spec, on: transport, latencyRuns: latencyRuns)) }
            }
            var out: [(Int, Row)] = []
            for await r in group { out.append(r) }
            return out.sorted { $0.0 < $1.0 }.map(\.1)
        }
        var headers = ["agent", "address", "connect", "toolchain", "cpus", "free disk", "slots", "status"]
        if latencyRuns > 0 { headers.insert("dispatch p50/p99", at: 7) }
        return (Table(title: "Agents", headers: headers, rows: rows.map(\.cells)), rows)
    }

    /// Probes the agent (`Transport.probe`: probing is the transport's job) and makes its row.
    static func check(_ spec: SSHAgentSpec, on transport: any Transport, latencyRuns: Int) async -> Row {
        let probe = await transport.probe(latencyRuns: latencyRuns)
        let address = probe.address ?? "\(spec.user ?? "?")@\(spec.host):\(spec.port.map(String.init) ?? "?")"
        let lines = probe.routeLines
        if let failure = probe.failure {
            var cells = [spec.name, address, "-", "-", "-", "-", String(spec.slots), "UNUSABLE"]
            if latencyRuns > 0 { cells.insert("-", at: 7) }
            return Row(agent: spec.name, address: address, usable: false, cells: cells, problem: failure, route: lines)
        }
        var cells = [spec.name, address, "ok (\(formatSeconds(probe.connectSeconds ?? 0)))",
                     (probe.toolchain.map(shortVersion) ?? "missing") + (probe.xcode.map { ", " + $0 } ?? ""),
                     probe.cpus ?? "?",
                     probe.freeBytes.map(formatBytes) ?? "?", String(spec.slots),
                     probe.usable ? "ok" : "UNUSABLE"]
        if latencyRuns > 0 {
            let samples = probe.dispatchMilliseconds
            let p50 = Estimator.percentile(samples, 0.5), p99 = Estimator.percentile(samples, 0.99)
            cells.insert(samples.isEmpty ? "-" : "\(String(format2: p50)) / \(String(format2: p99)) ms", at: 7)
        }
        return Row(agent: spec.name, address: address, usable: probe.usable, cells: cells,
                   problem: probe.problems.isEmpty ? nil : probe.problems.joined(separator: "; "), route: lines)
    }

    static func shortVersion(_ s: String) -> String {
        // "Swift version 6.3.1 (swift-6.3.1-RELEASE)" → "Swift 6.3.1"
        let words = s.split(separator: " ")
        if let i = words.firstIndex(of: "version"), i + 1 < words.count { return "Swift \(words[i + 1])" }
        return s
    }

    static func formatBytes(_ b: Double) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var v = b, i = 0
        while v >= 1024, i < units.count - 1 { v /= 1024; i += 1 }
        return "\(String(format1: v)) \(units[i])"
    }
}
