import FanoutAgents
@testable import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// SSH agents get ready while the coordinator builds, lists and plans (issue 43: connecting, the run's folder and
/// lease, off the path to the first unit). A run that ends before it dispatches anything must undo that too.
extension SSHRunTests {
    @Test func aRunThatFailsWhileTheAgentsGetReadyLeavesNothingOnThem() async throws {
        let dir = try TempDir()
        let settings = try await fleetSettings(dir, filters: ["^DemoKitTests\\.GCDTests$"])
        let agents = settings.agents
        let leased: @Sendable () -> Bool = {
            agents.allSatisfy { spec in
                let runs = (try? FileManager.default.contentsOfDirectory(atPath: spec.workdir + "/runs")) ?? []
                return runs.contains { FileManager.default.fileExists(atPath: spec.workdir + "/runs/\($0)/lease") }
            }
        }
        // Listing the tests waits until every agent has the run's folder and lease (the warm-up's doing, since
        // nothing was dispatched yet), then fails, as a product without tests would.
        let sawLeases = Flag()
        let coordinator = Coordinator(settings: settings, transports: nil, discover: { _, _ throws(FanoutError) in
            let deadline = Date().addingTimeInterval(30)
            while !leased(), Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            if leased() { sawLeases.set() }
            throw FanoutError("the listing failed on purpose", hint: "none")
        }, progress: { _ in })
        await #expect(throws: FanoutError.self) { try await coordinator.run() }
        #expect(sawLeases.isSet, "every agent got the run's folder and lease while the tests were listed")
        for spec in agents {
            let runs = try FileManager.default.contentsOfDirectory(atPath: spec.workdir + "/runs")
            #expect(runs.isEmpty, "\(spec.name) keeps the run's folder: \(runs)")
            let left = try await IntegrationFleet.processesOnAgent(spec, settings: settings.ssh)
            #expect(left.isEmpty, "\(spec.name) still runs: \(left)")
        }
    }
}
