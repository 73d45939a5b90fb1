import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The down.sh lines of every fleet this test process started, run by one exit handler (a C handler cannot capture).
private let fleetStopCommands = Mutex<[String]>([])
private let registerExitHandler: Void = {
    atexit { for line in fleetStopCommands.withLock({ $0 }) { line.withCString { _ = system($0) } } }
}()

/// Four real sshd agents on 127.0.1.1-4 (Agents/local-fleet), started once per test process and stopped when it
/// exits. The agents cannot see the demo suite's build folder (--hide), so deployment is really exercised.
/// Suites run in parallel: each suite that uses agents has a fleet of its own (own folder and port), so one suite's
/// faults and process checks never meet another's runs.
actor IntegrationFleet {
    static let ssh = IntegrationFleet(name: "ssh", port: 2622)
    static let resilience = IntegrationFleet(name: "resilience", port: 2623)
    static let interrupt = IntegrationFleet(name: "interrupt", port: 2624)
    static let badInput = IntegrationFleet(name: "bad-input", port: 2625)
    static let destinations = IntegrationFleet(name: "destinations", port: 2626)
    static let progress = IntegrationFleet(name: "progress", port: 2631)
    static let hooks = IntegrationFleet(name: "hooks", port: 2632)

    let directory: String
    let port: Int
    /// Started once: concurrent callers await the same start (an actor is re-entered at every await).
    private var starting: Task<String, any Error>?

    init(name: String, port: Int) {
        directory = "/tmp/fanout-integration-fleet-" + name
        self.port = port
    }

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
        if let starting { return try await starting.value }
        let task = Task { try await launch() }
        starting = task
        return try await task.value
    }

    private func launch() async throws -> String {
        let scripts = repositoryRoot.appendingPathComponent("Agents/local-fleet").path
        let demoBuild = repositoryRoot.appendingPathComponent("Tests/Fixtures/DemoSuite/.build").path
        await shell("bash \(scripts)/down.sh --dir \(directory) --clean")
        let (code, out, err) = await shell("bash \(scripts)/up.sh 4 --dir \(directory) --port \(port) --slots 2 --no-check --hide \(ShellQuote.quote(demoBuild))")
        guard code == 0, let path = out.split(separator: "\n").last.map(String.init), path.hasSuffix("fleet.yml") else {
            await shell("bash \(scripts)/down.sh --dir \(directory)")
            throw TestFailure("the fleet did not start (exit \(code)): \(out)\(err)")
        }
        _ = registerExitHandler
        fleetStopCommands.withLock { $0.append("bash \(ShellQuote.quote(scripts + "/down.sh")) --dir \(directory) >/dev/null 2>&1") }
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
        // Our own ps and grep would match themselves: filter them out by their pid's parent (this shell).
        let out = try await shell(on: spec, settings: settings, "ps -u \(spec.user ?? "") -o pid=,ppid=,args= | awk -v me=$$ '$2 != me && $1 != me' | grep -F -- \(ShellQuote.quote(spec.workdir)) || true")
        return out.split(separator: "\n").map(String.init)
    }

    /// The standard output of a shell line run ON the agent (over SSH).
    static func shell(on spec: SSHAgentSpec, settings: SSHSettings, _ line: String) async throws -> String {
        let transport = SSHTransport(spec: spec, settings: settings, archives: nil)
        let c = try await transport.connection()
        defer { Task { await c.close() } }
        return try await c.run(line, timeout: 30).stdoutText
    }
}
