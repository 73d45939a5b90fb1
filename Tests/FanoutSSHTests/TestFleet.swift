import FanoutSSH
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real sshd agents these tests run against: one fleet of 2 agents on 127.0.1.1-2, port 2422, in its own dir,
/// started once (lazily) per test process with Agents/local-fleet/up.sh and stopped with down.sh when the process
/// exits (atexit, so it also happens when only some tests were selected).
actor TestFleet {
    static let shared = TestFleet()

    static let repository: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() } // Tests/FanoutSSHTests/TestFleet.swift
        return url.path
    }()
    static let directory = "/tmp/fanout-ssh-tests"
    static let port = 2422
    static let user = "fanout-agent"
    static var knownHosts: String { "\(directory)/known_hosts" }
    static var identity: String { "\(directory)/id_ed25519" }

    private var started: Result<Void, FleetError>?

    struct FleetError: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts the fleet if it is not running yet. Fails (with the script's output) if it cannot.
    func ensureStarted() async throws {
        if let started { return try started.get() }
        let up = "\(Self.repository)/Agents/local-fleet/up.sh"
        let down = "\(Self.repository)/Agents/local-fleet/down.sh"
        guard FileManager.default.fileExists(atPath: up) else {
            started = .failure(FleetError(description: "\(up) is missing"))
            return try started!.get()
        }
        // A crashed earlier run may have left this fleet running.
        _ = await Shell.run("bash \(down) --dir \(Self.directory) --clean")
        let result = await Shell.run("bash \(up) 2 --dir \(Self.directory) --port \(Self.port) --no-check")
        if result.status == 0 {
            registerStopAtExit()
            started = .success(())
        } else {
            _ = await Shell.run("bash \(down) --dir \(Self.directory)")
            started = .failure(FleetError(description: "up.sh failed (\(result.status)): \(result.output)"))
        }
        try started!.get()
    }

    static func endpoint(_ agent: Int) -> SSHEndpoint {
        SSHEndpoint(host: address(agent), port: port, user: user)
    }

    static func address(_ agent: Int) -> String { "127.0.1.\(agent)" }

    static func options(
        knownHosts: String = TestFleet.knownHosts, policy: HostKeyPolicy = .strict, deadPeerTimeout: Double = 8
    ) -> SSHOptions {
        SSHOptions(knownHostsPath: knownHosts, hostKeyPolicy: policy, connectTimeout: 5, keepaliveInterval: 1,
                   deadPeerTimeout: deadPeerTimeout)
    }

    static func connect(
        _ agent: Int = 1, authentication: SSHAuthentication = .keyFile(path: TestFleet.identity, passphrase: nil),
        options: SSHOptions = TestFleet.options()
    ) async throws -> SSHConnection {
        try await shared.ensureStarted()
        return try await SSHConnection.connect(to: endpoint(agent), authentication: authentication, options: options)
    }

    /// The agent's host public key line ("ssh-ed25519 AAAA... comment").
    static func hostPublicKey(_ agent: Int) throws -> String {
        try String(contentsOfFile: "\(directory)/agents/agent-\(agent)/ssh_host_ed25519_key.pub", encoding: .utf8)
    }

    static func masterPID(_ agent: Int) throws -> pid_t {
        let text = try String(contentsOfFile: "\(directory)/agents/agent-\(agent)/sshd.pid", encoding: .utf8)
        guard let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw FleetError(description: "bad sshd.pid of agent-\(agent): \(text)")
        }
        return pid
    }
}

private let stopCommand = "bash \(TestFleet.repository)/Agents/local-fleet/down.sh --dir \(TestFleet.directory) --clean >/dev/null 2>&1"

private func registerStopAtExit() {
    atexit {
        _ = system(stopCommand)
    }
}

/// Runs shell commands for tests without blocking a thread of the cooperative pool (waits via terminationHandler).
enum Shell {
    struct Result {
        var status: Int32
        var output: String
    }

    static func run(_ command: String, environment: [String: String]? = nil) async -> Result {
        let outputPath = NSTemporaryDirectory() + "fanout-ssh-test-\(UUID().uuidString).out"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        guard let handle = FileHandle(forWritingAtPath: outputPath) else { return Result(status: -1, output: "") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", command]
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let status: Int32 = await withCheckedContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(returning: -1)
            }
        }
        try? handle.close()
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return Result(status: status, output: output)
    }

    /// Runs and requires exit status 0.
    @discardableResult
    static func check(_ command: String, environment: [String: String]? = nil) async throws -> String {
        let result = await run(command, environment: environment)
        guard result.status == 0 else {
            throw TestFleet.FleetError(description: "`\(command)` failed (\(result.status)): \(result.output)")
        }
        return result.output
    }
}

/// A scratch directory for one test.
struct TemporaryDirectory: ~Copyable {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "fanout-ssh-test-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Processes of the local fleet, found through /proc (never by name).
enum ProcessTree {
    static func parent(of pid: pid_t) -> pid_t? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) : nil
    }

    static func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { self.parent(of: $0) == parent }.sorted()
    }

    static func descendants(of root: pid_t) -> [pid_t] {
        var result: [pid_t] = []
        var queue = [root]
        while let next = queue.popLast() {
            let kids = children(of: next)
            result += kids
            queue += kids
        }
        return result
    }

    static func command(of pid: pid_t) -> String {
        let raw = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
        return String(decoding: raw.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
    }
}

/// Median and 99th percentile of durations.
func percentiles(_ values: [Double]) -> (median: Double, p99: Double) {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return (0, 0) }
    let median = sorted[sorted.count / 2]
    let p99 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
    return (median, p99)
}

func milliseconds(_ seconds: Double) -> String {
    String(format: "%.2f ms", seconds * 1000)
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func processCPUTime() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
