@testable import FanoutAgents
import FanoutSSH
import Foundation
import Testing

/// Agents named as OpenSSH users name them, resolved by the installed OpenSSH client (`ssh -G`) from a real config
/// file: Host aliases, wildcards, first value wins, ProxyJump chains; fanout.yml wins over the config.
@Suite struct OpenSSHResolverTests {
    let dir: String
    let home: String

    init() throws {
        dir = NSTemporaryDirectory() + "fanout-resolver-\(UUID().uuidString)"
        home = dir + "/home"
        try FileManager.default.createDirectory(atPath: home + "/.ssh", withIntermediateDirectories: true)
        for key in ["id_build", "id_yml", "id_bastion", "k_alice", "k_%alice"] {
            _ = FileManager.default.createFile(atPath: home + "/.ssh/" + key, contents: Data("key".utf8))
        }
    }

    func resolver(_ config: String, settings: inout SSHSettings, path: String = "/usr/bin:/bin") throws -> OpenSSHResolver {
        let file = dir + "/ssh_config"
        try config.write(toFile: file, atomically: true, encoding: .utf8)
        settings.sshConfig = file
        return OpenSSHResolver(settings: settings, environment: ["HOME": home, "PATH": path, "USER": "tester"])
    }

    func agent(_ host: String, port: Int? = nil, user: String? = nil, proxyJump: String? = nil,
               identity: String? = nil) -> SSHAgentSpec {
        SSHAgentSpec(name: host, host: host, port: port, user: user, proxyJump: proxyJump, identity: identity,
                     workdir: "/tmp/w")
    }

    static let config = """
        Host bastion
          HostName 10.0.0.1
          User jumper
          IdentityFile ~/.ssh/id_bastion
        Host build-1
          HostName 192.168.1.11
        Host build-*
          User builder
          Port 2201
          IdentityFile ~/.ssh/id_build
          ProxyJump bastion
          ConnectTimeout 7
          ServerAliveInterval 4
          StrictHostKeyChecking no
        Host *
          User nobody-default
          Port 2999

        """

    func source(_ hop: SSHHop, _ key: String) -> RouteSource? { hop.sources.first { $0.key == key }?.source }

    @Test func anAliasResolvesThroughWildcardsAndTheFirstValueWins() async throws {
        var settings = SSHSettings()
        let r = try resolver(Self.config, settings: &settings)
        let route = try await r.resolve(agent("build-1"), settings: settings)
        #expect(route.target.endpoint == SSHEndpoint(host: "192.168.1.11", port: 2201, user: "builder"))
        #expect(route.target.authentication == .keyFile(path: home + "/.ssh/id_build", certificate: nil, passphraseEnvironment: nil))
        #expect(route.target.connectTimeout == 7)
        #expect(route.target.keepaliveInterval == 4)
        #expect(source(route.target, "hostname") == .sshConfig(dir + "/ssh_config"))
        #expect(route.jumps.map(\.endpoint) == [SSHEndpoint(host: "10.0.0.1", port: 2999, user: "jumper")])
        #expect(route.jumps[0].authentication == .keyFile(path: home + "/.ssh/id_bastion", certificate: nil, passphraseEnvironment: nil))
        #expect(route.description == "build-1 → builder@192.168.1.11:2201 via bastion (jumper@10.0.0.1:2999)")
        // A weaker StrictHostKeyChecking is noted, never followed (the hop has no policy of its own to weaken).
        #expect(route.target.notes.contains { $0.contains("StrictHostKeyChecking false; Fanout keeps host_key_policy strict") })
    }

    @Test func fanoutYMLWinsOverTheSSHConfig() async throws {
        var settings = SSHSettings(knownHosts: "/etc/fanout/known_hosts", connectTimeout: 3)
        settings.explicit = ["known_hosts", "connect_timeout"]
        let r = try resolver(Self.config + "Host build-2\n  UserKnownHostsFile /config/known_hosts\n", settings: &settings)
        let route = try await r.resolve(agent("build-2", port: 22, user: "me", proxyJump: "none", identity: "~/.ssh/id_yml"),
                                  settings: settings)
        #expect(route.target.endpoint == SSHEndpoint(host: "build-2", port: 22, user: "me"))
        #expect(route.jumps.isEmpty, "proxy_jump: none in fanout.yml goes direct")
        #expect(route.target.authentication == .keyFile(path: home + "/.ssh/id_yml", certificate: nil, passphraseEnvironment: nil))
        #expect(route.target.knownHosts == "/etc/fanout/known_hosts")
        #expect(route.target.connectTimeout == 3)
        for key in ["user", "port", "identity", "known_hosts"] { #expect(source(route.target, key) == .fanoutYML, "\(key)") }

        // Not set in fanout.yml: the config's UserKnownHostsFile (its first file).
        var plain = SSHSettings()
        let r2 = try resolver(Self.config + "Host build-2\n  UserKnownHostsFile /config/known_hosts /config/two\n", settings: &plain)
        #expect(try await r2.resolve(agent("build-2"), settings: plain).target.knownHosts == "/config/known_hosts")
    }

    @Test func proxyJumpChainsFollowOpenSSH() async throws {
        var settings = SSHSettings()
        let config = """
            Host a
              HostName 10.0.0.1
            Host b
              HostName 10.0.0.2
              ProxyJump a
            Host c
              HostName 10.0.0.3
              ProxyJump x
            Host t1
              ProxyJump b
            Host t2
              ProxyJump a,c
            Host t3
              ProxyJump alice@a:2200
            Host loop1
              ProxyJump loop2
            Host loop2
              ProxyJump loop1

            """
        let r = try resolver(config, settings: &settings)
        // A hop's own ProxyJump is followed for the first hop: t1 → a → b.
        #expect(try await r.resolve(agent("t1"), settings: settings).jumps.map(\.name) == ["a", "b"])
        // In a chain a,c the later hop's own ProxyJump is overridden by the chain (as `ssh -J a,c` does).
        #expect(try await r.resolve(agent("t2"), settings: settings).jumps.map(\.name) == ["a", "c"])
        let t3 = try await r.resolve(agent("t3"), settings: settings).jumps
        #expect(t3.map(\.endpoint) == [SSHEndpoint(host: "10.0.0.1", port: 2200, user: "alice")])
        do {
            _ = try await r.resolve(agent("loop1"), settings: settings)
            Issue.record("a ProxyJump loop must be refused")
        } catch {
            #expect("\(error)".contains("ProxyJump loops back to loop1") || "\(error)".contains("ProxyJump loops back to loop2"),
                    "the loop, named: \(error)")
        }
        // fanout.yml's proxy_jump wins over the config's (c, itself reached through its own ProxyJump x).
        #expect(try await r.resolve(agent("t1", proxyJump: "c"), settings: settings).jumps.map(\.name) == ["x", "c"])
    }

    /// A fleet's routes resolve together (up to 16 `ssh -G` at a time), in the agents' order; the error said is the
    /// first agent's in that order that does not resolve, whichever finished first.
    @Test func aFleetsRoutesResolveTogetherInTheAgentsOrder() async throws {
        var settings = SSHSettings()
        let numbers = Array(1...20)
        let config = numbers.map { "Host node-\($0)\n  HostName 10.1.0.\($0)\n  User u\n  Port 22\n" }.joined()
            + "Host piped-a\n  ProxyCommand nc first %h %p\nHost piped-b\n  ProxyCommand nc second %h %p\n"
        _ = try resolver(config, settings: &settings)
        let key = home + "/.ssh/id_build"
        var agents = numbers.map { agent("node-\($0)", identity: key) }
        let routes = try await AgentFleet.resolveRoutes(of: agents, ssh: settings)
        #expect(routes.routes.map(\.target.endpoint.host) == numbers.map { "10.1.0.\($0)" })
        agents[7] = agent("piped-a", identity: key)
        agents[17] = agent("piped-b", identity: key)
        do {
            _ = try await AgentFleet.resolveRoutes(of: agents, ssh: settings)
            Issue.record("a ProxyCommand must be refused")
        } catch {
            #expect("\(error)".contains("nc first") && !"\(error)".contains("nc second"), "\(error)")
        }
    }

    @Test func mistakesInTheConfigAreClearErrors() async throws {
        var settings = SSHSettings()
        let r = try resolver("""
            Host piped
              ProxyCommand nc %h %p
            Host nokey
              IdentityFile ~/.ssh/missing_one
              IdentityFile ~/.ssh/missing_two

            """, settings: &settings)
        do {
            _ = try await r.resolve(agent("piped"), settings: settings)
            Issue.record("ProxyCommand must be refused")
        } catch {
            #expect("\(error)".contains("ProxyCommand nc %h %p") && "\(error)".contains("ProxyJump"), "\(error)")
        }
        do {
            _ = try await r.resolve(agent("nokey"), settings: settings)
            Issue.record("missing IdentityFile keys must be refused")
        } catch {
            #expect("\(error)".contains(home + "/.ssh/missing_one, " + home + "/.ssh/missing_two"), "\(error)")
        }
        // A config file that does not exist: OpenSSH's own message.
        settings.sshConfig = dir + "/nope"
        let r2 = OpenSSHResolver(settings: settings, environment: ["HOME": home, "PATH": "/usr/bin:/bin"])
        do {
            _ = try await r2.resolve(agent("x"), settings: settings)
            Issue.record("a config file that does not exist must be refused")
        } catch {
            #expect("\(error)".contains("OpenSSH cannot resolve x with \(dir)/nope"), "OpenSSH's own message, and the file: \(error)")
        }
    }

    @Test func tokensAndTildesInKeyPathsAreExpandedWithHOME() async throws {
        var settings = SSHSettings()
        let r = try resolver("Host t\n  User alice\n  IdentityFile %d/.ssh/k_%r\nHost p\n  User alice\n  IdentityFile ~/.ssh/k_%%%r\n",
                             settings: &settings)
        #expect(try await r.resolve(agent("t"), settings: settings).target.authentication
            == .keyFile(path: home + "/.ssh/k_alice", certificate: nil, passphraseEnvironment: nil))
        // `%%` is a literal %, read once: what a token expands to is never expanded again.
        #expect(try await r.resolve(agent("p"), settings: settings).target.authentication
            == .keyFile(path: home + "/.ssh/k_%alice", certificate: nil, passphraseEnvironment: nil))
    }

    @Test func certificatesFollowWhatTheInstalledLibSSH2CanDo() async throws {
        var settings = SSHSettings()
        _ = FileManager.default.createFile(atPath: home + "/.ssh/id_build-cert.pub", contents: Data("cert".utf8))
        let r = try resolver("Host t\n  IdentityFile ~/.ssh/id_build\nHost u\n  IdentityFile ~/.ssh/id_yml\n  CertificateFile ~/.ssh/c.pub\n",
                             settings: &settings)
        let beside = try await r.resolve(agent("t"), settings: settings).target
        if LibSSH2Version.supportsCertificates {
            #expect(beside.authentication == .keyFile(path: home + "/.ssh/id_build", certificate: home + "/.ssh/id_build-cert.pub",
                                                      passphraseEnvironment: nil))
        } else {
            // Found beside the key but unusable: the key alone, and a note saying why.
            #expect(beside.authentication == .keyFile(path: home + "/.ssh/id_build", certificate: nil, passphraseEnvironment: nil))
            #expect(beside.notes.contains { $0.contains("cannot sign with certificates") })
        }
        // Asked for by name: always offered (FanoutSSH then says clearly when libssh2 cannot sign with it).
        #expect(try await r.resolve(agent("u"), settings: settings).target.authentication
            == .keyFile(path: home + "/.ssh/id_yml", certificate: home + "/.ssh/c.pub", passphraseEnvironment: nil))
    }

    @Test func withoutAnOpenSSHClientTheHostIsTakenAsWritten() async throws {
        var settings = SSHSettings()
        let none = OpenSSHResolver(settings: settings, environment: ["HOME": home, "PATH": dir, "USER": "tester"])
        #expect(none.ssh == nil)
        let route = try await none.resolve(agent("10.1.1.1", proxyJump: "ops@10.0.0.9:2222"), settings: settings)
        #expect(route.target.endpoint == SSHEndpoint(host: "10.1.1.1", port: 22, user: "tester"))
        #expect(route.jumps.map(\.endpoint) == [SSHEndpoint(host: "10.0.0.9", port: 2222, user: "ops")])
        // An ssh config cannot be read without the client: said, not ignored.
        settings.sshConfig = "~/.ssh/config"
        let withConfig = OpenSSHResolver(settings: settings, environment: ["HOME": home, "PATH": dir])
        do {
            _ = try await withConfig.resolve(agent("a"), settings: settings)
            Issue.record("ssh_config without ssh must be refused")
        } catch {
            #expect("\(error)".contains("needs OpenSSH's client (ssh)"), "\(error)")
        }
    }

    @Test func aHOMEOtherThanTheAccountsIsWhereTheUserConfigIsRead() async throws {
        try "Host h\n  HostName 10.9.9.9\n".write(toFile: home + "/.ssh/config", atomically: true, encoding: .utf8)
        let settings = SSHSettings()
        let r = OpenSSHResolver(settings: settings, environment: ["HOME": home, "PATH": "/usr/bin:/bin"])
        #expect(r.configFile == home + "/.ssh/config")
        #expect(try await r.resolve(agent("h"), settings: settings).target.endpoint.host == "10.9.9.9")
    }

    /// `Include` and `Match` are OpenSSH's to evaluate: a Host block in an included file, and a Match on the
    /// original host name, resolve as `ssh` would resolve them.
    @Test func includeAndMatchAreOpenSSHsOwn() async throws {
        let included = dir + "/included_config"
        try "Host from-include\n  HostName 10.7.7.7\n  Port 2207\n".write(toFile: included, atomically: true, encoding: .utf8)
        var settings = SSHSettings()
        let r = try resolver("Include \(included)\nMatch originalhost matched-*\n  User matcher\n", settings: &settings)
        let fromInclude = try await r.resolve(agent("from-include"), settings: settings).target.endpoint
        #expect(fromInclude.host == "10.7.7.7" && fromInclude.port == 2207)
        #expect(try await r.resolve(agent("matched-1"), settings: settings).target.endpoint.user == "matcher")
    }
}
