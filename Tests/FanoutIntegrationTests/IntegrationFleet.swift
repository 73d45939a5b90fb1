import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Set once, before the exit handler that reads it is registered (a C handler cannot capture).
nonisolated(unsafe) private var fleetStopCommand = ""

/// Four real sshd agents on 127.0.1.1-4:2622 (Agents/local-fleet), started once per test process and stopped when
/// it exits. The agents cannot see the demo suite's build folder (--hide), so deployment is really exercised.
actor IntegrationFleet {
    static let shared = IntegrationFleet()
    static let directory = "/tmp/fanout-integration-fleet"
    static let port = 2622
    private var config: Result<String, TestFailure>?

    func settings() async throws -> RunSettings {
        let path = try await start()
        var s = RunSettings()
        try ConfigFile.load(path, into: &s)
        return s
    }

    /// The fleet's settings for a run of the demo suite that keeps its history and reports in `dir`.
    func runSettings(_ dir: TempDir, filters: [String] = [], env: [String: String] = [:]) async throws -> RunSettings {
        var s = try await settings()
        let local = demoSettings(bundle: try await DemoSuite.shared.bundle(), dir: dir, filters: filters, env: env)
        s.bundlePath = local.bundlePath
        s.filters = filters
        s.historyPath = local.historyPath
        s.reportDirectory = local.reportDirectory
        s.destination = local.destination
        return s
    }

    private func start() async throws -> String {
        if let config { return try config.get() }
        let scripts = repositoryRoot.appendingPathComponent("Agents/local-fleet").path
        let demoBuild = repositoryRoot.appendingPathComponent("Tests/Fixtures/DemoSuite/.build").path
        await shell("bash \(scripts)/down.sh --dir \(Self.directory) --clean")
        let (code, out, err) = await shell("bash \(scripts)/up.sh 4 --dir \(Self.directory) --port \(Self.port) --slots 2 --no-check --hide \(ShellQuote.quote(demoBuild))")
        guard code == 0, let path = out.split(separator: "\n").last.map(String.init), path.hasSuffix("fleet.yml") else {
            await shell("bash \(scripts)/down.sh --dir \(Self.directory)")
            config = .failure(TestFailure("the fleet did not start (exit \(code)): \(out)\(err)"))
            return try config!.get()
        }
        fleetStopCommand = "bash \(ShellQuote.quote(scripts + "/down.sh")) --dir \(Self.directory) >/dev/null 2>&1"
        atexit { fleetStopCommand.withCString { _ = system($0) } }
        config = .success(path)
        return path
    }

    /// Exit code, standard output, standard error (the fleet's config path is the last line of standard output).
    @discardableResult
    private func shell(_ line: String) async -> (Int32, String, String) {
        let (e, out, err) = await LocalTransport(slots: 1).capture(Command(executable: "/bin/sh", arguments: ["-c", line]), timeout: 120)
        let code: Int32 = if case .exited(let c) = e { c } else { -1 }
        return (code, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    /// Processes of the agent user that belong to this fleet, as seen ON the agent (over SSH).
    static func processesOnAgent(_ spec: SSHAgentSpec, settings: SSHSettings) async throws -> [String] {
        let transport = SSHTransport(spec: spec, settings: settings, archives: nil)
        let c = try await transport.connection()
        defer { Task { await c.close() } }
        // Our own ps and grep would match themselves: filter them out by their pid's parent (this shell).
        let r = try await c.run("ps -u \(spec.user) -o pid=,ppid=,args= | awk -v me=$$ '$2 != me && $1 != me' | grep -F -- \(ShellQuote.quote(spec.workdir)) || true", timeout: 30)
        return r.stdoutText.split(separator: "\n").map(String.init)
    }
}
