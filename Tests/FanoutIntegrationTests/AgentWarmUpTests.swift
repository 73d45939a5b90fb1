import FanoutAgents
@testable import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// SSH agents get ready while the coordinator builds (issue 43: the connection, the run's folder and lease), and get
/// the product while it lists and plans: off the path to the first unit. A run that ends before it dispatches
/// anything must undo that too.
extension SSHRunTests {
    @Test func aRunThatFailsWhileTheAgentsGetReadyLeavesNothingOnThem() async throws {
        let dir = try TempDir()
        let settings = try await fleetSettings(dir, filters: ["^DemoKitTests\\.GCDTests$"])
        let agents = settings.agents
        let ready: @Sendable () -> Bool = {
            agents.allSatisfy { spec in
                let runs = (try? FileManager.default.contentsOfDirectory(atPath: spec.workdir + "/runs")) ?? []
                return runs.contains { run in
                    let folder = spec.workdir + "/runs/" + run
                    let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
                    // The lease is taken, and the product found in (or put into) the agent's cache for this run.
                    return files.contains("lease") && files.contains { $0.hasPrefix("uses-") }
                }
            }
        }
        // Listing the tests waits until every agent has the run's folder, its lease and the product (the warm-up's and
        // the deployment ahead's doing, since nothing was dispatched yet), then fails, as a product without tests would.
        let sawThemReady = Flag()
        let coordinator = Coordinator(settings: settings, transports: nil, discover: { _, _ throws(FanoutError) in
            let deadline = Date().addingTimeInterval(30)
            while !ready(), Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            if ready() { sawThemReady.set() }
            throw FanoutError("the listing failed on purpose", hint: "none")
        }, progress: { _ in })
        await #expect(throws: FanoutError.self) { try await coordinator.run() }
        #expect(sawThemReady.isSet, "every agent got the run's folder, lease and product while the tests were listed")
        for spec in agents {
            let runs = try FileManager.default.contentsOfDirectory(atPath: spec.workdir + "/runs")
            #expect(runs.isEmpty, "\(spec.name) keeps the run's folder: \(runs)")
            let left = try await IntegrationFleet.processesOnAgent(spec, settings: settings.ssh)
            #expect(left.isEmpty, "\(spec.name) still runs: \(left)")
        }
    }
}
