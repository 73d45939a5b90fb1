import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// The xcodebuild runner against a real Mac with Xcode, when one is given (skipped otherwise; Linux has no Xcode, so
/// `AppleDestinationTests` runs the same path through the replay harness). Agents/README.md says how to provision
/// the Mac and make the product:
///
/// - `FANOUT_MAC_AGENT`: `user@host` or `user@host:port` of the Mac (its host key in `~/.ssh/known_hosts`).
/// - `FANOUT_MAC_XCTESTRUN`: the `.xctestrun` on this machine, inside the Build/Products folder copied from the Mac.
/// - `FANOUT_MAC_TESTS_LIST` (optional): its test list (`-enumerate-tests … -test-enumeration-format json`); without
///   it, this machine must be a Mac with Xcode to list the tests.
/// - `FANOUT_MAC_DEVICE` and `FANOUT_MAC_OS` (default `iPhone 16`, `18.2`), `FANOUT_MAC_IDENTITY` (a key file),
///   `FANOUT_MAC_WORKDIR` (default `/tmp/fanout-agent`), `FANOUT_MAC_SLOTS` (default 2).
@Suite(.serialized, .timeLimit(.minutes(30)),
       .enabled(if: ProcessInfo.processInfo.environment["FANOUT_MAC_AGENT"] != nil, "FANOUT_MAC_AGENT names no Mac"))
struct MacAgentTests {
    @Test func aSimulatorDestinationRunsOnARealMac() async throws {
        let env = ProcessInfo.processInfo.environment
        let agent = try #require(env["FANOUT_MAC_AGENT"])
        let xctestrun = try #require(env["FANOUT_MAC_XCTESTRUN"], "FANOUT_MAC_XCTESTRUN: the .xctestrun to test")
        guard let at = agent.firstIndex(of: "@") else { throw TestFailure("FANOUT_MAC_AGENT must be user@host[:port]") }
        let hostPort = agent[agent.index(after: at)...].split(separator: ":")
        let dir = try TempDir()
        var s = RunSettings()
        s.agents = [SSHAgentSpec(name: "mac", host: String(hostPort[0]), port: hostPort.count > 1 ? Int(hostPort[1]) ?? 22 : 22,
                                 user: String(agent[..<at]), identity: env["FANOUT_MAC_IDENTITY"],
                                 slots: Int(env["FANOUT_MAC_SLOTS"] ?? "") ?? 2,
                                 workdir: env["FANOUT_MAC_WORKDIR"] ?? "/tmp/fanout-agent")]
        let device = Device(platform: "iOS Simulator", model: env["FANOUT_MAC_DEVICE"] ?? "iPhone 16", os: env["FANOUT_MAC_OS"] ?? "18.2")
        s.destinations = [DestinationSpec(destination: Destination(name: "mac-simulator", device: device),
                                          frameworks: [.xcodebuild], bundlePath: xctestrun, testsList: env["FANOUT_MAC_TESTS_LIST"])]
        s.historyPath = dir.file("h.sqlite")
        s.reportDirectory = dir.file("r")
        let outcome = try await Coordinator(settings: s).run()
        let report = outcome.report
        #expect(!report.results.isEmpty)
        #expect(report.results.allSatisfy { $0.outcome != .notRun }, "every test ran: \(report.warnings)")
        #expect(!report.warnings.contains { $0.contains("stops:") }, "every slot had its simulator: \(report.warnings)")
        #expect(report.measurements.allSatisfy { $0.hardwareClass == device.identity })
    }
}
