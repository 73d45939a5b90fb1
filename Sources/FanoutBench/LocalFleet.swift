import Foundation

/// A fleet of real sshd agents on loopback, started by `Agents/local-fleet/up.sh` and always stopped by `down.sh`
/// (also when the benchmark is interrupted). Addresses 127.0.1.1…, a dedicated dir and port per fleet.
struct LocalFleet: Sendable {
    var dir: String
    var scripts: String
    var agents: Int
    var slotsPerAgent: Int
    var port: Int
    var addresses: [String]
    var user: String
    var identity: String
    var knownHosts: String
    var upSeconds: Double

    var config: String { dir + "/fleet.yml" }
    var slots: Int { agents * slotsPerAgent }
    var description: String { "\(agents) sshd agents × \(slotsPerAgent) slots on 127.0.1.1-\(agents) (loopback)" }
    func workdir(_ agent: Int) -> String { "\(dir)/agents/agent-\(agent + 1)/work" }

    /// Starts the fleet; `hide` are paths the agents must not see (the suite's build tree, like a real remote host).
    static func up(agents: Int, slots: Int, dir: String, port: Int, hide: [String], repo: String) async throws -> LocalFleet {
        let scripts = repo + "/Agents/local-fleet"
        // An earlier benchmark's fleet in this dir: stop whatever still runs and remove it with its agents' caches,
        // so that the first run really deploys (down.sh is safe when nothing runs).
        if FileManager.default.fileExists(atPath: dir + "/.fanout-fleet") {
            _ = await Processes.run("/bin/bash", [scripts + "/down.sh", "--dir", dir, "--clean"], timeout: 120)
        }
        Interrupts.trackFleet(dir: dir, downScript: scripts + "/down.sh")
        var args = [scripts + "/up.sh", String(agents), "--dir", dir, "--port", String(port), "--slots", String(slots),
                    "--no-check"]
        for h in hide { args += ["--hide", h] }
        let r = await Processes.run("/bin/bash", args, timeout: 120)
        guard r.succeeded else {
            _ = await Processes.run("/bin/bash", [scripts + "/down.sh", "--dir", dir])
            Interrupts.untrackFleet(dir: dir)
            throw BenchError("up.sh \(agents) failed (\(r.ending)):\n\(r.tail)")
        }
        let env = try readEnv(dir + "/env")
        func value(_ k: String) throws -> String {
            guard let v = env[k] else { throw BenchError("\(dir)/env has no \(k)") }
            return v
        }
        return LocalFleet(dir: dir, scripts: scripts, agents: agents, slotsPerAgent: slots, port: port,
                          addresses: try value("FANOUT_FLEET_ADDRESSES").split(separator: " ").map(String.init),
                          user: try value("FANOUT_FLEET_USER"), identity: try value("FANOUT_FLEET_IDENTITY"),
                          knownHosts: try value("FANOUT_FLEET_KNOWN_HOSTS"), upSeconds: r.seconds)
    }

    func down() async {
        let r = await Processes.run("/bin/bash", [scripts + "/down.sh", "--dir", dir], timeout: 120)
        if !r.succeeded { progress("warning: down.sh --dir \(dir): \(r.ending): \(r.tail)") }
        Interrupts.untrackFleet(dir: dir)
    }

    /// `ssh`/`scp` options: the fleet's key and known_hosts, host keys checked strictly, no user config.
    var sshOptions: [String] {
        ["-F", "/dev/null", "-i", identity, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
         "-o", "UserKnownHostsFile=\(knownHosts)", "-o", "GlobalKnownHostsFile=/dev/null",
         "-o", "StrictHostKeyChecking=yes", "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=10"]
    }

    func ssh(agent: Int, _ remoteCommand: String) -> (String, [String]) {
        ("ssh", sshOptions + ["-p", String(port), "\(user)@\(addresses[agent])", remoteCommand])
    }

    func scp(_ local: String, agent: Int, to remote: String) -> (String, [String]) {
        ("scp", ["-q"] + sshOptions + ["-P", String(port), local, "\(user)@\(addresses[agent]):\(remote)"])
    }

    static func readEnv(_ path: String) throws -> [String: String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw BenchError("cannot read \(path)") }
        var out: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("export ") {
            let kv = line.dropFirst("export ".count)
            guard let eq = kv.firstIndex(of: "=") else { continue }
            var v = String(kv[kv.index(after: eq)...])
            if v.hasPrefix("\""), v.hasSuffix("\""), v.count >= 2 { v = String(v.dropFirst().dropLast()) }
            out[String(kv[..<eq])] = v
        }
        return out
    }
}
