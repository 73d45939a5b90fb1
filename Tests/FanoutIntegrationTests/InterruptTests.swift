import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Synchronization
import Testing

/// The `fanout` process itself, interrupted with real signals mid-run.
@Suite(.serialized, .timeLimit(.minutes(10))) struct InterruptTests {
    /// Starts `fanout run …`, waits until a unit has started, sends `signals` (one every 0.3 s), and returns the
    /// exit code and everything printed.
    func interrupt(_ args: [String], with signals: [Int32], cwd: String) async throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try fanoutExecutable())
        p.arguments = ["run"] + args
        p.currentDirectoryURL = URL(fileURLWithPath: cwd)
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        let output = OutputBox()
        pipe.fileHandleForReading.readabilityHandler = { output.append($0.availableData) }
        try p.run()
        let deadline = Date().addingTimeInterval(120)
        while !output.text.contains("started on"), p.isRunning, Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(800))
        for s in signals {
            kill(p.processIdentifier, s)
            try await Task.sleep(for: .milliseconds(300))
        }
        await withCheckedContinuation { c in DispatchQueue.global().async { p.waitUntilExit(); c.resume() } }
        pipe.fileHandleForReading.readabilityHandler = nil
        output.append(pipe.fileHandleForReading.readDataToEndOfFile())
        return (p.terminationStatus, output.text)
    }

    func hangingConfig(_ dir: TempDir, fleet: String? = nil) throws -> String {
        var text = fleet.map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" } ?? ""
        text += "\ndestination:\n  name: local\n  environment: { DEMO_HANG: \"1\" }\n"
        let path = dir.file("fanout.yml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func report(_ dir: TempDir) throws -> RunReport {
        let data = try Data(contentsOf: URL(fileURLWithPath: dir.file("r/report.json")))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { d in
            let s = try d.singleValueContainer().decode(String.self)
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return f.date(from: s) ?? Date()
        }
        return try decoder.decode(RunReport.self, from: data)
    }

    @Test func sigintWritesAPartialReportAndExits130() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let config = try hangingConfig(dir)
        let (code, out) = try await interrupt(["--config", config, "--bundle", bundle, "--filter", "SessionTimeoutTests|GCDTests",
                                               "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite"), "--slots", "1"],
                                              with: [SIGINT], cwd: dir.path)
        #expect(code == 130, "\(out)")
        #expect(out.contains("interrupted"))
        let r = try report(dir)
        #expect(r.interrupted)
        #expect(r.exitCode == 130)
        #expect(r.results.contains { $0.outcome == .notRun })
        #expect(Set(r.results.map(\.id)).count == r.results.count, "every test once, even when interrupted")
    }

    @Test func sigtermExits143() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let config = try hangingConfig(dir)
        let (code, _) = try await interrupt(["--config", config, "--bundle", bundle, "--filter", "SessionTimeoutTests",
                                             "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite")],
                                            with: [SIGTERM], cwd: dir.path)
        #expect(code == 143)
        #expect(try report(dir).interrupted)
        #expect(try report(dir).exitCode == 143)
    }

    /// Interrupts a run on the fleet with `signals` and checks, on every agent, that nothing of ours is left.
    func interruptOnTheFleet(with signals: [Int32]) async throws -> TempDir {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let fleet = try await IntegrationFleet.interrupt.settings()
        let config = try hangingConfig(dir, fleet: IntegrationFleet.interrupt.directory + "/fleet.yml")
        let (code, out) = try await interrupt(["--config", config, "--bundle", bundle, "--filter", "SessionTimeoutTests|DatabaseMigration",
                                               "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite")],
                                              with: signals, cwd: dir.path)
        #expect(code == 130, "\(out)")
        for spec in fleet.agents {
            let left = try await IntegrationFleet.processesOnAgent(spec, settings: fleet.ssh)
            #expect(left.isEmpty, "\(spec.name): \(left)")
        }
        return dir
    }

    @Test func sigintOnTheFleetLeavesNoProcessOnAnyAgent() async throws {
        let dir = try await interruptOnTheFleet(with: [SIGINT])
        #expect(try report(dir).interrupted)
    }

    @Test func aSecondSigintQuitsAtOnceButStillKillsWhatWasStarted() async throws {
        _ = try await interruptOnTheFleet(with: [SIGINT, SIGINT])
    }
}

final class OutputBox: Sendable {
    private let data = Mutex(Data())
    func append(_ d: Data) { data.withLock { $0.append(d) } }
    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
}
