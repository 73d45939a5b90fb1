import FanoutAgents
import FanoutCore
import FanoutReports
import FanoutSSH
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

    /// `agent  alias → user@host:port via …` then, per hop, its values with their sources.
    static func routeLines(_ route: SSHRoute) -> [String] {
        var lines = ["route: \(route)"]
        for (index, hop) in (route.jumps + [route.target]).enumerated() {
            let role = index == route.jumps.count ? "agent" : "bastion"
            let values = hop.sources.map { "\($0.key) \($0.value) (\($0.source))" }.joined(separator: ", ")
            lines.append("  \(role) \(hop.name): \(values)")
            for note in hop.notes { lines.append("  note: \(note)") }
        }
        return lines
    }

    /// Checks every agent; `latencyRuns` > 0 also measures dispatch latency (running `true` on the open connection).
    public static func run(settings: RunSettings, latencyRuns: Int = 0) async -> (Table, [Row]) {
        let rows = await withTaskGroup(of: (Int, Row).self) { group in
            for (i, spec) in settings.agents.enumerated() {
                group.addTask { (i, await check(spec, settings: settings.ssh, latencyRuns: latencyRuns)) }
            }
            var out: [(Int, Row)] = []
            for await r in group { out.append(r) }
            return out.sorted { $0.0 < $1.0 }.map(\.1)
        }
        var headers = ["agent", "address", "connect", "toolchain", "cpus", "free disk", "slots", "status"]
        if latencyRuns > 0 { headers.insert("dispatch p50/p99", at: 7) }
        return (Table(title: "Agents", headers: headers, rows: rows.map(\.cells)), rows)
    }

    static func check(_ spec: SSHAgentSpec, settings: SSHSettings, latencyRuns: Int) async -> Row {
        let transport = SSHTransport(spec: spec, settings: settings, archives: nil)
        let route = try? await transport.route()
        let address = route.map { "\($0.target.endpoint)" + ($0.jumps.isEmpty ? "" : " via " + $0.jumps.map(\.name).joined(separator: ",")) }
            ?? "\(spec.user ?? "?")@\(spec.host):\(spec.port.map(String.init) ?? "?")"
        let lines = route.map(routeLines) ?? []
        func failed(_ why: String) -> Row {
            var cells = [spec.name, address, "-", "-", "-", "-", String(spec.slots), "UNUSABLE"]
            if latencyRuns > 0 { cells.insert("-", at: 7) }
            return Row(agent: spec.name, address: address, usable: false, cells: cells, problem: why, route: lines)
        }
        let start = ContinuousClock.now
        let connection: SSHConnection
        do {
            connection = try await transport.connection()
        } catch {
            // Closed before returning (bastions too), never in the background: the command exits right after, and
            // an I/O thread still tearing its session down while exit() runs would touch libcrypto after its cleanup.
            await transport.shutdown()
            return failed("\(error)")
        }
        let connectTime = (ContinuousClock.now - start).seconds
        var row = await inspect(connection, spec: spec, address: address, connectTime: connectTime,
                                latencyRuns: latencyRuns, failed: failed)
        row.route = lines
        await transport.shutdown()
        return row
    }

    private static func inspect(_ connection: SSHConnection, spec: SSHAgentSpec, address: String, connectTime: Double,
                                latencyRuns: Int, failed: (String) -> Row) async -> Row {
        let swift = spec.swift ?? "$(command -v swift || echo /opt/swift/usr/bin/swift)"
        let probe = [
            "echo cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || sysctl -n hw.ncpu)",
            "mkdir -p \(ShellQuote.quote(spec.workdir)) && echo disk=$(df -Pk \(ShellQuote.quote(spec.workdir)) | awk 'NR==2 {print $4}')",
            "echo swift=$(\(swift) --version 2>/dev/null | head -1)",
            // A Mac agent: its Xcode (xcodebuild destinations), shown beside the toolchain.
            "echo xcode=$(xcodebuild -version 2>/dev/null | head -1)",
        ].joined(separator: "; ")
        let result: SSHCommandResult
        do {
            result = try await connection.run(probe, timeout: 30)
        } catch {
            return failed("\(error)")
        }
        var facts: [String: String] = [:]
        for line in result.stdoutText.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            facts[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        let toolchain = facts["swift"].flatMap { $0.isEmpty ? nil : $0 }
        let freeKiB = facts["disk"].flatMap { Double($0) }
        var problems: [String] = []
        if toolchain == nil { problems.append("no Swift toolchain found (set `swift:` for this agent)") }
        if let freeKiB, freeKiB < 1_048_576 { problems.append("less than 1 GiB free in \(spec.workdir)") }
        if freeKiB == nil { problems.append("cannot create or measure \(spec.workdir)") }
        // Who could change what Fanout runs there (the same checks a run makes before using the workdir).
        if freeKiB != nil, let layout = try? RemoteLayout(workdir: spec.workdir, runID: "check") {
            if let trust = try? await connection.run(layout.trustedCache, timeout: 30), !trust.succeeded {
                let why = trust.stderrText.trimmingCharacters(in: .whitespacesAndNewlines)
                problems.append(why.hasPrefix("fanout: ") ? String(why.dropFirst("fanout: ".count)) : why)
            }
        }
        var cells = [spec.name, address, "ok (\(formatSeconds(connectTime)))",
                     (toolchain.map(shortVersion) ?? "missing") + (facts["xcode"].map { $0.isEmpty ? "" : ", " + $0 } ?? ""),
                     facts["cpus"] ?? "?",
                     freeKiB.map { formatBytes($0 * 1024) } ?? "?", String(spec.slots),
                     problems.isEmpty ? "ok" : "UNUSABLE"]
        if latencyRuns > 0 {
            var samples: [Double] = []
            for _ in 0..<latencyRuns {
                let t = ContinuousClock.now
                guard (try? await connection.run("true", timeout: 10)) != nil else { break }
                samples.append((ContinuousClock.now - t).seconds * 1000)
            }
            let p50 = Estimator.percentile(samples, 0.5), p99 = Estimator.percentile(samples, 0.99)
            cells.insert(samples.isEmpty ? "-" : "\(String(format2: p50)) / \(String(format2: p99)) ms", at: 7)
        }
        return Row(agent: spec.name, address: address, usable: problems.isEmpty, cells: cells,
                   problem: problems.isEmpty ? nil : problems.joined(separator: "; "))
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
