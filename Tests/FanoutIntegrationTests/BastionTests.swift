import FanoutAgents
import FanoutCore
import FanoutSSH
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

private let bastionLabDown = Mutex<String?>(nil)
private let registerBastionLabExit: Void = {
    atexit { if let line = bastionLabDown.withLock({ $0 }) { line.withCString { _ = system($0) } } }
}()

/// Agents reachable ONLY through bastions (Agents/local-fleet/bastion-lab.sh): each in a network namespace of its
/// own with only loopback, reached by jump1 (one hop) or jump1,jump2 (two hops). Started once per test process.
actor BastionLab {
    static let shared = BastionLab()
    let directory = "/tmp/fanout-integration-bastion-lab"
    let port = 2702
    private var starting: Task<Void, any Error>?

    var script: String { repositoryRoot.appendingPathComponent("Agents/local-fleet/bastion-lab.sh").path }

    func start() async throws {
        if let starting { return try await starting.value }
        let task = Task {
            let (code, out, err) = await sh("bash \(script) up --dir \(directory) --port \(port)")
            guard code == 0 else { throw TestFailure("the bastion lab did not start (exit \(code)): \(out)\(err)") }
            _ = registerBastionLabExit
            bastionLabDown.withLock { $0 = "bash \(ShellQuote.quote(script)) down --dir \(directory) >/dev/null 2>&1" }
        }
        starting = task
        try await task.value
    }

    func bastion(_ action: String, _ name: String) async throws {
        let (code, out, err) = await sh("bash \(script) \(action) \(name) --dir \(directory)")
        guard code == 0 else { throw TestFailure("\(action) \(name) failed: \(out)\(err)") }
    }

    /// A HOME whose ~/.ssh/config is the lab's (aliases, wildcards, ProxyJump), plus `extra` lines first.
    func home(_ dir: TempDir, extra: String = "") throws -> String {
        let home = dir.file("home")
        try FileManager.default.createDirectory(atPath: home + "/.ssh", withIntermediateDirectories: true)
        let config = try String(contentsOfFile: directory + "/ssh_config", encoding: .utf8)
        try (extra + config).write(toFile: home + "/.ssh/config", atomically: true, encoding: .utf8)
        return home
    }

    /// fanout.yml naming agents by alias only (no ssh_config: the HOME's ~/.ssh/config is used).
    func config(_ dir: TempDir, agents: [String], extra: String = "") throws -> String {
        var text = extra + "agents:\n"
        for agent in agents {
            text += "  - { host: \(agent), slots: 2, workdir: \(directory)/\(agent.hasPrefix("deep") ? "deep-1" : agent)/work }\n"
        }
        let path = dir.file("fanout.yml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// How many logins a bastion's sshd has accepted so far.
    func accepted(_ bastion: String) -> Int {
        let log = (try? String(contentsOfFile: "\(directory)/\(bastion)/sshd.log", encoding: .utf8)) ?? ""
        return log.components(separatedBy: "Accepted publickey").count - 1
    }
}

func sh(_ line: String, timeout: Double = 120) async -> (Int32, String, String) {
    let (e, out, err) = await LocalTransport(slots: 1).capture(Command(executable: "/bin/sh", arguments: ["-c", line]),
                                                              timeout: timeout)
    let code: Int32 = if case .exited(let c) = e { c } else { -1 }
    return (code, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
}

/// ProxyJump through real sshd bastions, to agents that cannot be reached any other way, named by the aliases of a
/// real ~/.ssh/config in a temporary HOME. Serialized: the bastion-loss test stops a bastion the others use.
@Suite(.serialized, .timeLimit(.minutes(10))) struct BastionTests {
    let lab = BastionLab.shared

    @Test func goingAroundTheBastionIsRefused() async throws {
        try await lab.start()
        // Nothing on this host listens on the agents' addresses: they live in namespaces of their own. The probe is
        // bash's /dev/tcp (dash, Debian's /bin/sh, has none and "fails" on any port): it must reach the bastion
        // jump1 (127.0.2.1), which does listen here, for its failure on inner-1 to mean anything.
        let probe = { (host: String) in await sh("bash -c \(ShellQuote.quote("exec 3<>/dev/tcp/\(host)/\(lab.port)"))", timeout: 10) }
        let (reached, _, reachedErr) = await probe("127.0.2.1")
        #expect(reached == 0, "the probe reaches a port that listens (jump1): \(reachedErr)")
        let (code, _, _) = await probe("127.0.1.1")
        #expect(code != 0, "a direct TCP connection to inner-1 must fail")
        let dir = try TempDir()
        let home = try await lab.home(dir, extra: "Host inner-1\n  ProxyJump none\n")
        let config = try await lab.config(dir, agents: ["inner-1"])
        let (exit, out, err) = try await runCLI(["agents", "check", "--config", config], env: ["HOME": home])
        #expect(exit == 3, "\(out)\(err)")
        #expect(out.contains("hop 1 of 1, the agent inner-1 (fanout-agent@127.0.1.1:\(lab.port))"), "\(out)")
        #expect(out.contains("connection refused"), "\(out)")
    }

    @Test func oneAndTwoHopsResolvedFromTheSSHConfigShareOneBastionConnection() async throws {
        try await lab.start()
        let dir = try TempDir()
        let home = try await lab.home(dir)
        let config = try await lab.config(dir, agents: ["inner-1", "inner-2", "deep-1"])
        let before = (await lab.accepted("jump1"), await lab.accepted("jump2"))
        let (exit, out, err) = try await runCLI(["agents", "check", "--config", config], env: ["HOME": home])
        #expect(exit == 0, "\(out)\(err)")
        let port = lab.port
        #expect(out.contains("inner-1 route: inner-1 → fanout-agent@127.0.1.1:\(port) via jump1 (fanout-agent@127.0.2.1:\(port))"), "\(out)")
        #expect(out.contains("deep-1 route: deep-1 → fanout-agent@127.0.1.3:\(port) via jump1 (fanout-agent@127.0.2.1:\(port)) → jump2 (fanout-agent@127.0.2.2:\(port))"), "\(out)")
        // Where each value came from: the HOME's ssh config, fanout.yml, a default.
        #expect(out.contains("hostname 127.0.1.1 (\(home)/.ssh/config)"), "\(out)")
        #expect(out.contains("user fanout-agent (\(home)/.ssh/config)"), "\(out)")
        #expect(out.contains("proxy_jump jump1,jump2 (\(home)/.ssh/config)"), "\(out)")
        // Three agents, one connection to each bastion.
        #expect(await lab.accepted("jump1") - before.0 == 1)
        #expect(await lab.accepted("jump2") - before.1 == 1)

        // fanout.yml wins over the ssh config: a wrong port there is used (and fails, at the agent's hop).
        let yml = dir.file("override.yml")
        try "agents:\n  - { host: inner-2, port: 2799, slots: 1, workdir: /tmp/x }\n".write(toFile: yml, atomically: true, encoding: .utf8)
        let (code2, out2, _) = try await runCLI(["agents", "check", "--config", yml], env: ["HOME": home])
        #expect(code2 == 3)
        #expect(out2.contains("port 2799 (fanout.yml)"), "\(out2)")
        #expect(out2.contains("hop 2 of 2, the agent inner-2"), "\(out2)")
    }

    @Test func wrongAliasUnreachableBastionAndChangedBastionKeyNameTheAliasAndHop() async throws {
        try await lab.start()
        let dir = try TempDir()
        // A weaker StrictHostKeyChecking in the ssh config changes nothing: Fanout stays strict.
        let home = try await lab.home(dir, extra: "Host jump1\n  StrictHostKeyChecking no\n")

        // A wrong alias: the wildcard sends it through jump1, which cannot resolve it.
        let wrong = try await lab.config(dir, agents: ["inner-9"])
        let (c1, o1, _) = try await runCLI(["agents", "check", "--config", wrong], env: ["HOME": home])
        #expect(c1 == 3)
        #expect(o1.contains("agent inner-9") && o1.contains("hop 2 of 2, the agent inner-9"), "\(o1)")
        #expect(o1.contains("the bastion fanout-agent@127.0.2.1:\(lab.port) could not open a connection to inner-9:\(lab.port)"), "\(o1)")

        // The bastion's host key changed: refused at hop 1, whatever the ssh config says.
        let knownHosts = dir.file("known_hosts")
        let lines = try String(contentsOfFile: lab.directory + "/known_hosts", encoding: .utf8).split(separator: "\n")
        let other = try String(contentsOfFile: lab.directory + "/inner-1/host_key.pub", encoding: .utf8).split(separator: " ")
        let forged = lines.map { line in
            line.hasPrefix("[127.0.2.1]") ? "[127.0.2.1]:\(lab.port) \(other[0]) \(other[1])" : String(line)
        }
        try (forged.joined(separator: "\n") + "\n").write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let mismatch = try await lab.config(dir, agents: ["inner-1"], extra: "known_hosts: \(knownHosts)\n")
        let (c2, o2, _) = try await runCLI(["agents", "check", "--config", mismatch], env: ["HOME": home])
        #expect(c2 == 3)
        #expect(o2.contains("hop 1 of 2, bastion jump1 (fanout-agent@127.0.2.1:\(lab.port))"), "\(o2)")
        #expect(o2.contains("CHANGED") || o2.contains("changed"), "\(o2)")
        #expect(o2.contains("StrictHostKeyChecking false; Fanout keeps host_key_policy strict"), "\(o2)")

        // The bastion is down: a run has no usable agent (exit 3) and says which hop.
        try await lab.bastion("stop-bastion", "jump1")
        let agents = try await lab.config(dir, agents: ["inner-1", "deep-1"])
        let bundle = try await DemoSuite.shared.bundle()
        let (c3, o3, e3) = try await runCLI(["run", "--config", agents, "--bundle", bundle, "--history", dir.file("h.sqlite"),
                                             "--report-dir", dir.file("r")], env: ["HOME": home])
        #expect(c3 == 3, "\(o3)\(e3)")
        #expect((o3 + e3).contains("hop 1 of 2, bastion jump1 (fanout-agent@127.0.2.1:\(lab.port))"), "\(o3)\(e3)")
        #expect((o3 + e3).contains("hop 1 of 3, bastion jump1"), "\(o3)\(e3)")
        #expect((o3 + e3).contains("connection refused"), "\(o3)\(e3)")
        try await lab.bastion("start-bastion", "jump1")
    }

    @Test func losingTheBastionMidRunRequeuesEverythingAndReadmitsItsAgents() async throws {
        try await lab.start()
        let dir = try TempDir()
        let home = try await lab.home(dir)
        let config = try await lab.config(dir, agents: ["inner-1", "inner-2", "deep-1"])
        let bundle = try await DemoSuite.shared.bundle()
        let out = dir.file("out.txt")
        let exe = try fanoutExecutable()
        let line = "HOME=\(ShellQuote.quote(home)) exec " + ShellQuote.join([exe, "run", "--config", config, "--bundle", bundle,
            "--history", dir.file("h.sqlite"), "--report-dir", dir.file("r")]) + " >\(ShellQuote.quote(out)) 2>&1"
        let run = Task { await sh(line, timeout: 300) }

        func waitFor(_ text: String, seconds: Double) async throws {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                if let s = try? String(contentsOfFile: out, encoding: .utf8), s.contains(text) { return }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw TestFailure("no '\(text)' within \(seconds) s in \((try? String(contentsOfFile: out, encoding: .utf8)) ?? "")")
        }
        try await waitFor("started on inner-1", seconds: 60)
        try await waitFor("started on deep-1", seconds: 60)
        try await lab.bastion("stop-bastion", "jump1")
        try await waitFor("lost hop 1 of 2, bastion jump1", seconds: 30)
        try await lab.bastion("start-bastion", "jump1")
        let (code, _, _) = await run.value
        let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        #expect(code == 0, "\(text)")
        #expect(text.contains("lost hop 1 of 3, bastion jump1"), "\(text)")
        #expect(text.contains("is back and takes work again"), "\(text)")
        // Every test once, with an outcome.
        let report = try jsonReport(dir.file("r/report.json"))
        let ids = testIDs(report)
        #expect(ids.count >= 200, "\(ids.count) results")
        #expect(Set(ids).count == ids.count, "duplicates in \(ids.count) results")
        let outcomes = Set(((report["results"] as? [[String: Any]]) ?? []).compactMap { $0["outcome"] as? String })
        #expect(outcomes.isSubset(of: ["passed", "skipped"]), "\(outcomes)")
    }

    /// Bytes both ways through two hops: an 8 MiB upload (our socket → channel, under the channel's window) and 15 MB
    /// of command output (channel → our socket), with 6 commands at once on one tunnel.
    @Test func bulkDataCrossesTwoHopsIntactAndConcurrently() async throws {
        try await lab.start()
        var settings = SSHSettings()
        settings.sshConfig = lab.directory + "/ssh_config"
        let spec = SSHAgentSpec(name: "deep-1", host: "deep-1", workdir: lab.directory + "/deep-1/work")
        let transport = SSHTransport(spec: spec, settings: settings, archives: nil)
        let c = try await transport.connection()
        // Made and hashed by other processes: this test process's own CPU stays low (ExecTests measures it idling).
        let dir = try TempDir()
        let blob = dir.file("blob")
        let (made, hash, _) = await sh("head -c 8388608 /dev/urandom >\(ShellQuote.quote(blob)) && sha256sum \(ShellQuote.quote(blob))")
        #expect(made == 0)
        let local = String(hash.prefix(64))
        let remote = lab.directory + "/deep-1/work/blob-\(UUID().uuidString.prefix(8))"
        #expect(try await c.upload(blob, to: remote) == 8 << 20)
        let sum = try await c.run("sha256sum \(ShellQuote.quote(remote)) && rm -f \(ShellQuote.quote(remote))", timeout: 60)
        #expect(local.count == 64 && sum.stdoutText.hasPrefix(local), "\(sum.stdoutText) \(sum.stderrText)")

        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<6 {
                group.addTask {
                    let r = try await c.run("head -c \(2_500_000 + i) /dev/zero | tr '\\0' x", timeout: 60)
                    let x = UInt8(ascii: "x")
                    guard r.stdout.prefix(4096).allSatisfy({ $0 == x }), r.stdout.suffix(4096).allSatisfy({ $0 == x })
                    else { return -1 }
                    return r.stdout.count
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.sorted() == (0..<6).map { 2_500_000 + $0 })
        await transport.shutdown()
    }

    /// Certificates where libssh2 can sign with them; a clear error where it cannot. A route that cannot resolve
    /// (ProxyCommand) is bad input: exit 2 before anything is built.
    @Test func certificatesAndUnresolvableRoutesAreClearErrors() async throws {
        try await lab.start()
        let dir = try TempDir()
        // A real OpenSSH user certificate of the lab's key, signed by a CA of this test (`ssh-keygen -s`).
        let keys = dir.file("keys")
        let (signed, _, signErr) = await sh("""
            set -e; mkdir -p \(keys) && cp \(lab.directory)/id_ed25519 \(lab.directory)/id_ed25519.pub \(keys)/ && chmod 600 \(keys)/id_ed25519
            ssh-keygen -q -t ed25519 -N '' -f \(keys)/ca
            ssh-keygen -q -s \(keys)/ca -I fanout-test -n fanout-agent -V +1h \(keys)/id_ed25519.pub
            ssh-keygen -L -f \(keys)/id_ed25519-cert.pub | grep -q 'Type: ssh-ed25519-cert-v01@openssh.com user certificate'
            """)
        try #require(signed == 0, "signing a certificate: \(signErr)")
        let cert = keys + "/id_ed25519-cert.pub"
        let home = try await lab.home(dir, extra: "Host inner-2\n  CertificateFile \(cert)\n"
            + "Host inner-1\n  IdentityFile \(keys)/id_ed25519\n"
            + "Host piped\n  ProxyCommand nc %h %p\n")
        let config = try await lab.config(dir, agents: ["inner-2"])
        let (code, out, _) = try await runCLI(["agents", "check", "--config", config], env: ["HOME": home])
        #expect(out.contains("certificate \(cert) (\(home)/.ssh/config)"), "\(out)")
        if !LibSSH2Version.supportsCertificates {
            // Named, it cannot be used by this libssh2: a clear error, not a silent key-only login.
            #expect(code == 3)
            #expect(out.contains("hop 2 of 2, the agent inner-2"), "\(out)")
            #expect(out.contains("cannot sign with OpenSSH certificates (libssh2 1.11 or later can)"), "\(out)")
            // Found beside the key (KEY-cert.pub), it is left out as OpenSSH would: the key alone logs in, for real.
            let beside = try await lab.config(dir, agents: ["inner-1"])
            let (c1, o1, e1) = try await runCLI(["agents", "check", "--config", beside], env: ["HOME": home])
            #expect(c1 == 0, "the key alone, through the bastion: \(o1) \(e1)")
            #expect((o1 + e1).contains("cannot sign with certificates"), "the note says why the certificate was left out: \(o1) \(e1)")
        } else {
            #expect(code == 3, "the agent does not trust this test's CA: \(out)")
        }

        let piped = try await lab.config(dir, agents: ["piped"])
        let bundle = try await DemoSuite.shared.bundle()
        let (c2, _, e2) = try await runCLI(["run", "--config", piped, "--bundle", bundle, "--history", dir.file("h.sqlite")],
                                           env: ["HOME": home])
        #expect(c2 == 2, "\(e2)")
        #expect(e2.contains("agent piped: piped has `ProxyCommand nc %h %p`"), "\(e2)")
    }
}
