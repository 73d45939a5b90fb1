import FanoutCore
import FanoutSSH
import Foundation

/// Resolves an agent's `host:` the way OpenSSH does, by asking OpenSSH itself: `ssh -G NAME` prints the options
/// `ssh NAME` would use after reading the client config (Host and Match blocks, wildcards, first value wins), so no
/// config parser of ours can disagree with it. `ssh -F /dev/null -G NAME` gives OpenSSH's defaults, which tells a
/// value the config set from one it did not.
///
/// Precedence: values in fanout.yml win, then the ssh config, then OpenSSH's defaults. Host-key checking never gets
/// weaker than fanout.yml's `host_key_policy` (strict by default) because of a `StrictHostKeyChecking` line.
///
/// Without an OpenSSH client, `host:` is used as written, the port is 22 and the user the local one unless
/// fanout.yml says otherwise, and `proxy_jump:` entries are taken literally (`[user@]host[:port]`); `ssh_config:` is
/// then an error.
public struct OpenSSHResolver: Sendable {
    /// The `ssh` executable, nil when no OpenSSH client is installed.
    public var ssh: String?
    /// The client config `ssh -G` reads (`-F`): fanout.yml's `ssh_config:`, else `$HOME/.ssh/config` when `$HOME`
    /// is not the account's home directory (OpenSSH itself reads the passwd entry's home, not `$HOME`); nil: OpenSSH
    /// picks (`~/.ssh/config`, then `/etc/ssh/ssh_config`).
    public var configFile: String?
    /// `~` and `%d` in key and certificate paths.
    public var home: String
    public var localUser: String

    public init(settings: SSHSettings, environment: [String: String] = ProcessInfo.processInfo.environment) {
        ssh = Self.findSSH(environment["PATH"] ?? "/usr/bin:/bin")
        let accountHome = FileManager.default.homeDirectoryForCurrentUser.path
        home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? accountHome
        localUser = environment["USER"] ?? NSUserName()
        if let file = settings.sshConfig {
            configFile = Self.expandTilde(file, home: home)
        } else if home != accountHome, FileManager.default.fileExists(atPath: home + "/.ssh/config") {
            configFile = home + "/.ssh/config"
        }
    }

    static func findSSH(_ path: String) -> String? {
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/ssh"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    static func expandTilde(_ path: String, home: String) -> String {
        if path == "~" { return home }
        guard path.hasPrefix("~/") else { return path }
        return home + path.dropFirst(1)
    }

    private var configName: String { configFile ?? "~/.ssh/config" }

    // MARK: - Resolving

    /// The route to `spec`: its ProxyJump hops (each resolved like a destination of its own, its own ProxyJump
    /// first), then the agent.
    public func resolve(_ spec: SSHAgentSpec, settings: SSHSettings) async throws(AgentError) -> SSHRoute {
        if configFile != nil, ssh == nil {
            throw .invalidConfig("agent \(spec.name): `ssh_config: \(settings.sshConfig ?? "")` needs OpenSSH's client "
                + "(ssh) to read it, and none is on PATH: install it (apt-get install openssh-client), or write "
                + "host, port, user, identity and proxy_jump into fanout.yml")
        }
        let target = try await hop(spec.host, agent: spec, fallbackIdentity: nil, settings: settings, isTarget: true)
        let jumpList = spec.proxyJump ?? target.proxyJump
        var jumps: [SSHHop] = []
        if let jumpList, jumpList != "none" {
            var seen: Set<String> = [spec.host]
            try await expand(jumpList, agent: spec, settings: settings, into: &jumps, seen: &seen, depth: 0)
        }
        return SSHRoute(jumps: jumps, target: target.hop)
    }

    /// ProxyJump `a,b`: a's own route (its ProxyJump in the ssh config), a, then b.
    private func expand(_ list: String, agent: SSHAgentSpec, settings: SSHSettings, into jumps: inout [SSHHop],
                        seen: inout Set<String>, depth: Int) async throws(AgentError) {
        guard depth < 8 else {
            throw .invalidConfig("agent \(agent.name): ProxyJump chains nest more than 8 deep (a loop?)")
        }
        let entries = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for (position, entry) in entries.enumerated() {
            guard !seen.contains(entry) else {
                throw .invalidConfig("agent \(agent.name): ProxyJump loops back to \(entry)")
            }
            seen.insert(entry)
            let resolved = try await hop(entry, agent: agent, fallbackIdentity: agent.identity, settings: settings,
                                   isTarget: false)
            // `ssh -J a,b` reaches b with `-J a`, which overrides b's own ProxyJump; a keeps its own.
            if position == 0, let own = resolved.proxyJump {
                try await expand(own, agent: agent, settings: settings, into: &jumps, seen: &seen, depth: depth + 1)
            }
            jumps.append(resolved.hop)
        }
    }

    /// One destination: `[user@]host[:port]` (a ProxyJump entry) or an agent's `host:`.
    private func hop(_ written: String, agent: SSHAgentSpec, fallbackIdentity: String?, settings: SSHSettings,
                     isTarget: Bool) async throws(AgentError) -> (hop: SSHHop, proxyJump: String?) {
        var name = written
        var entryUser: String?
        var entryPort: Int?
        if !isTarget {
            if let at = name.lastIndex(of: "@") {
                entryUser = String(name[..<at])
                name = String(name[name.index(after: at)...])
            }
            if let colon = name.lastIndex(of: ":"), !name.hasPrefix("["), let port = Int(name[name.index(after: colon)...]) {
                entryPort = port
                name = String(name[..<colon])
            }
        }
        let yml = isTarget
        let configured = try await query(name, agent: agent.name, config: configFile)
        let defaults = configured.isEmpty ? [:] : try await query(name, agent: agent.name, config: "/dev/null")
        func source(_ key: String) -> RouteSource {
            configured[key] != nil && configured[key] != defaults[key] ? .sshConfig(configName)
                : (ssh == nil ? .fanoutDefault : .openSSHDefault)
        }
        var sources: [(key: String, value: String, source: RouteSource)] = []
        var notes: [String] = []

        let host = configured["hostname"]?.first ?? name
        sources.append(("hostname", host, host == name ? (ssh == nil ? .fanoutYML : source("hostname")) : .sshConfig(configName)))

        let user: String
        if yml, let u = agent.user {
            user = u
            sources.append(("user", u, .fanoutYML))
        } else if let u = entryUser {
            user = u
            sources.append(("user", u, .fanoutYML))
        } else {
            user = configured["user"]?.first ?? localUser
            sources.append(("user", user, source("user")))
        }

        let port: Int
        if yml, let p = agent.port {
            port = p
            sources.append(("port", String(p), .fanoutYML))
        } else if let p = entryPort {
            port = p
            sources.append(("port", String(p), .fanoutYML))
        } else {
            port = configured["port"]?.first.flatMap { Int($0) } ?? 22
            sources.append(("port", String(port), source("port")))
        }

        let authentication = try self.authentication(
            agent: agent, yml: yml, fallbackIdentity: fallbackIdentity, configured: configured,
            source: source, host: host, user: user, port: port, sources: &sources, notes: &notes)

        var knownHosts = Self.expandTilde(settings.knownHosts, home: home)
        if settings.explicit.contains("known_hosts") {
            sources.append(("known_hosts", knownHosts, .fanoutYML))
        } else if source("userknownhostsfile") != .openSSHDefault && source("userknownhostsfile") != .fanoutDefault,
                  let first = configured["userknownhostsfile"]?.first {
            knownHosts = Self.expandTilde(first, home: home)
            sources.append(("known_hosts", knownHosts, .sshConfig(configName)))
        } else {
            sources.append(("known_hosts", knownHosts, .fanoutDefault))
        }
        if let strict = configured["stricthostkeychecking"]?.first,
           ["no", "false", "off", "accept-new"].contains(strict), source("stricthostkeychecking") != .openSSHDefault {
            notes.append("\(name): the ssh config says StrictHostKeyChecking \(strict); Fanout keeps host_key_policy "
                + "\(settings.hostKeyPolicy.rawValue) (only host_key_policy in fanout.yml changes it)")
        }

        var connectTimeout = settings.connectTimeout
        if !settings.explicit.contains("connect_timeout"), let v = configured["connecttimeout"]?.first,
           let seconds = Double(v), seconds > 0 {
            connectTimeout = seconds
            sources.append(("connect_timeout", v, .sshConfig(configName)))
        }
        var keepalive = settings.keepaliveInterval
        if !settings.explicit.contains("keepalive"), let v = configured["serveraliveinterval"]?.first,
           let seconds = Int(v), seconds > 0 {
            keepalive = seconds
            sources.append(("keepalive", v, .sshConfig(configName)))
        }

        var proxyJump: String?
        if let jump = configured["proxyjump"]?.first, jump != "none" {
            proxyJump = jump
            if yml && agent.proxyJump == nil { sources.append(("proxy_jump", jump, .sshConfig(configName))) }
        } else if let command = configured["proxycommand"]?.first, command != "none" {
            throw .invalidConfig("agent \(agent.name): \(name) has `ProxyCommand \(command)` in \(configName); Fanout "
                + "connects through bastions with ProxyJump only: write `ProxyJump BASTION` for that host instead")
        }
        if yml, let jump = agent.proxyJump { sources.append(("proxy_jump", jump, .fanoutYML)) }

        let hop = SSHHop(name: written, endpoint: SSHEndpoint(host: host, port: port, user: user),
                         authentication: authentication, knownHosts: knownHosts, connectTimeout: connectTimeout,
                         keepaliveInterval: keepalive, sources: sources, notes: notes)
        return (hop, proxyJump)
    }

    private func authentication(
        agent: SSHAgentSpec, yml: Bool, fallbackIdentity: String?, configured: [String: [String]],
        source: (String) -> RouteSource, host: String, user: String, port: Int,
        sources: inout [(key: String, value: String, source: RouteSource)], notes: inout [String]
    ) throws(AgentError) -> HopAuthentication {
        // OpenSSH's tokens for IdentityFile and CertificateFile (`%l`, the local host name, only when used).
        func expand(_ path: String) -> String {
            var tokens = ["%d": home, "%u": localUser, "%h": host, "%r": user, "%p": String(port), "%n": host]
            if path.contains("%l") { tokens["%l"] = ProcessInfo.processInfo.hostName }
            var out = ""
            var rest = Substring(Self.expandTilde(path, home: home))
            while let i = rest.firstIndex(of: "%") {
                out += rest[..<i]
                let token = String(rest[i...].prefix(2))
                out += token == "%%" ? "%" : tokens[token] ?? token
                rest = rest[rest.index(i, offsetBy: token.count)...]
            }
            return out + rest
        }
        var certificate: String?
        if let cert = configured["certificatefile"]?.first {
            certificate = expand(cert)
            sources.append(("certificate", certificate!, .sshConfig(configName)))
        }
        var key: String?
        if yml, let identity = agent.identity {
            key = expand(identity)
            sources.append(("identity", key!, .fanoutYML))
        } else if source("identityfile") != .openSSHDefault, source("identityfile") != .fanoutDefault,
                  let files = configured["identityfile"] {
            let candidates = files.map(expand)
            guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
                throw .invalidConfig("agent \(agent.name): none of the IdentityFile keys \(configName) gives for "
                    + "\(host) exists (\(candidates.joined(separator: ", ")))")
            }
            key = found
            sources.append(("identity", found, .sshConfig(configName)))
        } else if let fallback = fallbackIdentity {
            key = expand(fallback)
            sources.append(("identity", key!, .fanoutYML))
        }
        if let key {
            if certificate == nil, FileManager.default.fileExists(atPath: key + "-cert.pub") {
                // Found beside the key (OpenSSH offers it first): used where libssh2 can sign with certificates,
                // else the key alone, as OpenSSH falls back to it.
                if LibSSH2Version.supportsCertificates {
                    certificate = key + "-cert.pub"
                    sources.append(("certificate", key + "-cert.pub", .openSSHDefault))
                } else {
                    notes.append("\(host): \(key)-cert.pub is not offered: libssh2 \(LibSSH2Version.text) cannot sign "
                        + "with certificates (1.11 can); the key alone is")
                }
            }
            return .keyFile(path: key, certificate: certificate, passphraseEnvironment: agent.passphraseEnvironment)
        }
        let agentSocket = configured["identityagent"]?.first.map(expand)
        if let agentSocket, agentSocket != "none" {
            sources.append(("identity", "ssh-agent at \(agentSocket)", .sshConfig(configName)))
            return .agent(socket: agentSocket == "SSH_AUTH_SOCK" ? nil : agentSocket)
        }
        sources.append(("identity", "ssh-agent (SSH_AUTH_SOCK)", .fanoutDefault))
        return .agent(socket: nil)
    }

    /// `ssh -G` for one name: each option (lower-case) with its values, multi-valued ones (IdentityFile) in order.
    /// Empty without an OpenSSH client. Spawned like every local process of Fanout's (`LocalProcess`: close-on-exec
    /// pipes under one lock, its own process group), never with Foundation's Process, whose pipes a unit started at
    /// the same moment could inherit.
    func query(_ name: String, agent: String, config: String?) async throws(AgentError) -> [String: [String]] {
        guard let ssh else { return [:] }
        let arguments = (config.map { ["-F", $0] } ?? []) + ["-G", "--", name]
        let (ending, out, err) = await LocalTransport(slots: 1).capture(
            Command(executable: ssh, arguments: arguments), timeout: 30)
        guard case .exited(0) = ending else {
            let why = String(decoding: err, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw .invalidConfig("agent \(agent): OpenSSH cannot resolve \(name) with \(config ?? configName): "
                + (why.isEmpty ? "\(ending)" : why))
        }
        var options: [String: [String]] = [:]
        for line in String(decoding: out, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let key = parts[0].lowercased()
            let values = key == "userknownhostsfile" || key == "globalknownhostsfile"
                ? parts[1].split(separator: " ").map(String.init) : [String(parts[1])]
            options[key, default: []] += values
        }
        return options
    }
}
