import FanoutCore
import FanoutSSH
import Foundation

extension SSHTransport {
    /// Connects (bastions too), asks the agent for its cores, free disk, Swift toolchain and Xcode, checks that no
    /// one else could change its cache, and times `latencyRuns` no-op commands; then closes everything, before
    /// returning (never in the background: `fanout agents check` exits right after, and an I/O thread still
    /// tearing its session down while exit() runs would touch libcrypto after its cleanup).
    public func probe(latencyRuns: Int) async -> AgentProbe {
        var probe = AgentProbe(route: try? await route())
        let start = ContinuousClock.now
        let connection: SSHConnection
        do {
            connection = try await self.connection()
        } catch {
            await shutdown()
            probe.failure = "\(error)"
            return probe
        }
        probe.connectSeconds = (ContinuousClock.now - start).seconds
        await inspect(connection, into: &probe, latencyRuns: latencyRuns)
        await shutdown()
        return probe
    }

    private func inspect(_ connection: SSHConnection, into probe: inout AgentProbe, latencyRuns: Int) async {
        let swift = spec.swift ?? "$(command -v swift || echo /opt/swift/usr/bin/swift)"
        let script = [
            "echo cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || sysctl -n hw.ncpu)",
            "mkdir -p \(ShellQuote.quote(spec.workdir)) && echo disk=$(df -Pk \(ShellQuote.quote(spec.workdir)) | awk 'NR==2 {print $4}')",
            "echo swift=$(\(swift) --version 2>/dev/null | head -1)",
            // A Mac agent: its Xcode (xcodebuild destinations), shown beside the toolchain.
            "echo xcode=$(xcodebuild -version 2>/dev/null | head -1)",
        ].joined(separator: "; ")
        let result: SSHCommandResult
        do {
            result = try await connection.run(script, timeout: 30)
        } catch {
            probe.failure = "\(error)"
            return
        }
        var facts: [String: String] = [:]
        for line in result.stdoutText.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            facts[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        probe.toolchain = facts["swift"].flatMap { $0.isEmpty ? nil : $0 }
        probe.xcode = facts["xcode"].flatMap { $0.isEmpty ? nil : $0 }
        probe.cpus = facts["cpus"]
        let freeKiB = facts["disk"].flatMap { Double($0) }
        probe.freeBytes = freeKiB.map { $0 * 1024 }
        if probe.toolchain == nil { probe.problems.append("no Swift toolchain found (set `swift:` for this agent)") }
        if let freeKiB, freeKiB < 1_048_576 { probe.problems.append("less than 1 GiB free in \(spec.workdir)") }
        if freeKiB == nil { probe.problems.append("cannot create or measure \(spec.workdir)") }
        // Who could change what Fanout runs there (the same checks a run makes before using the workdir).
        if freeKiB != nil, let layout = try? RemoteLayout(workdir: spec.workdir, runID: "check") {
            if let trust = try? await connection.run(layout.trustedCache, timeout: 30), !trust.succeeded {
                let why = trust.stderrText.trimmingCharacters(in: .whitespacesAndNewlines)
                probe.problems.append(why.hasPrefix("fanout: ") ? String(why.dropFirst("fanout: ".count)) : why)
            }
        }
        for _ in 0..<latencyRuns {
            let t = ContinuousClock.now
            guard (try? await connection.run("true", timeout: 10)) != nil else { break }
            probe.dispatchMilliseconds.append((ContinuousClock.now - t).seconds * 1000)
        }
    }
}
