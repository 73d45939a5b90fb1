import FanoutAgents
import FanoutCoordinator
import FanoutCore
import FanoutTestSupport
import Foundation
import Testing

/// The repository root and temporary folders, shared with the other test targets (FanoutTestSupport).
let repositoryRoot = FanoutTestSupport.repositoryRoot
typealias TempDir = FanoutTestSupport.TempDir

/// A fixture package's built test product: from its environment variable when set (scripts/test.sh builds the demo
/// suite first), else built once here.
actor FixturePackage {
    private let folder: String
    private let variable: String?
    private var built: String?
    /// Built once: concurrent callers await the same build (an actor is re-entered at every await).
    private var building: Task<String, any Error>?

    init(folder: String, variable: String?) {
        self.folder = folder
        self.variable = variable
    }

    func bundle() async throws -> String {
        if let building { return try await building.value }
        let task = Task { try await locate() }
        building = task
        return try await task.value
    }

    private func locate() async throws -> String {
        if let built { return built }
        if let variable, let path = ProcessInfo.processInfo.environment[variable],
           FileManager.default.isExecutableFile(atPath: path) {
            built = path
            return path
        }
        let package = repositoryRoot.appendingPathComponent("Tests/Fixtures/" + folder).path
        let shell = LocalTransport(slots: 1)
        let swift = "/usr/bin/env"
        let (ending, _, err) = await shell.capture(Command(executable: swift, arguments: ["swift", "build", "--build-tests", "--package-path", package]))
        guard case .exited(0) = ending else {
            throw TestFailure("building \(folder) failed: \(String(decoding: err, as: UTF8.self))")
        }
        let (_, out, _) = await shell.capture(Command(executable: swift, arguments: ["swift", "build", "--build-tests", "--package-path", package, "--show-bin-path"]))
        let path = String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) + "/\(folder)PackageTests.xctest"
        built = path
        return path
    }
}

/// The demo suite (Tests/Fixtures/DemoSuite): FANOUT_DEMO_BUNDLE, else built here.
enum DemoSuite {
    static let shared = FixturePackage(folder: "DemoSuite", variable: "FANOUT_DEMO_BUNDLE")
}

/// Tests that run long or hang on purpose (Tests/Fixtures/LongSuite).
enum LongSuite {
    static let shared = FixturePackage(folder: "LongSuite", variable: nil)
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// Settings for a run of the demo suite that keeps its history and reports in `dir`.
func demoSettings(bundle: String, dir: TempDir, filters: [String] = [], env: [String: String] = [:],
                  slots: Int = 4) -> RunSettings {
    var s = RunSettings()
    s.bundlePath = bundle
    s.filters = filters
    s.slots = slots
    s.historyPath = dir.file("history.sqlite")
    s.reportDirectory = dir.file("report")
    s.destination = Destination(name: "local", environment: env)
    return s
}

extension RunReport {
    func result(_ id: String) -> TestResult? { results.first { $0.id.description == id } }
}

/// The `fanout` executable built next to this test bundle.
func fanoutExecutable() throws -> String { try siblingExecutable("fanout") }

/// An executable of this package (`fanout`, `fanout-bench`) built next to this test bundle.
func siblingExecutable(_ name: String) throws -> String {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    let fallback = repositoryRoot.appendingPathComponent(".build/debug/\(name)").path
    guard FileManager.default.isExecutableFile(atPath: fallback) else {
        throw TestFailure("the \(name) executable is not built (swift build --build-tests builds it)")
    }
    return fallback
}

/// A report.json as JSON objects.
func jsonReport(_ path: String) throws -> [String: Any] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
}

/// Every result of a report.json as `destination Module.Class/test`.
func testIDs(_ report: [String: Any]) -> [String] {
    ((report["results"] as? [[String: Any]]) ?? []).compactMap { r in
        guard let id = r["id"] as? [String: Any], let suite = id["suite"] as? [String: Any],
              let module = suite["module"] as? String, let name = suite["name"] as? String,
              let test = id["name"] as? String, let destination = r["destination"] as? String else { return nil }
        return "\(destination) \(module).\(name)/\(test)"
    }
}

/// Runs the CLI (with `env` added to this process's environment) and returns its exit code and output.
func runCLI(_ args: [String], cwd: String? = nil, env: [String: String] = [:]) async throws -> (Int32, String, String) {
    let exe = try fanoutExecutable()
    var command = Command(executable: exe, arguments: args, environment: env)
    if let cwd {
        command = Command(executable: "/bin/sh", arguments: ["-c", "cd \(ShellQuote.quote(cwd)) && exec \(ShellQuote.join([exe] + args))"],
                          environment: env)
    }
    let (ending, out, err) = await LocalTransport(slots: 1).capture(command, timeout: 300)
    let code: Int32 = if case .exited(let c) = ending { c } else { -1 }
    return (code, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
}

/// This machine's processes, read from /proc.
enum ProcessTable {
    /// Children of `parent` whose command line holds every one of `parts` (read from /proc).
    static func children(of parent: pid_t, with parts: [String]) -> [pid_t] {
        let entries: [String] = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        var found: [pid_t] = []
        for name in entries {
            guard let pid = pid_t(name), Self.parent(of: name) == parent,
                  let data = FileManager.default.contents(atPath: "/proc/" + name + "/cmdline") else { continue }
            let bytes: [UInt8] = data.map { (b: UInt8) -> UInt8 in b == 0 ? 32 : b }
            let line = String(decoding: bytes, as: UTF8.self)
            if parts.allSatisfy({ (part: String) -> Bool in line.contains(part) }) { found.append(pid) }
        }
        return found
    }

    /// The parent's pid from /proc/PID/stat: `pid (comm) state ppid …` (comm may hold spaces and parentheses).
    static func parent(of name: String) -> pid_t? {
        guard let stat = try? String(contentsOfFile: "/proc/" + name + "/stat", encoding: .utf8),
              let paren = stat.lastIndex(of: ")") else { return nil }
        let fields: [Substring] = stat[stat.index(after: paren)...].split(separator: " ")
        guard fields.count > 1 else { return nil }
        return pid_t(String(fields[1]))
    }
}

/// The seeded coin of the fixtures' flaky tests (LongSuite's SeededCoin, OrderSuite's FlakyTests), copied here, not
/// asked of Fanout: a number in [0, 1) from SplitMix64 of FANOUT_SEED mixed with the FNV-1a hash of the test's name.
func seededDraw(seed: Int, name: String) -> Double {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in name.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
    }
    var z = (UInt64(seed) ^ hash) &+ 0x9E37_79B9_7F4A_7C15
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    z ^= z >> 31
    return Double(z >> 11) / Double(UInt64(1) << 53)
}
