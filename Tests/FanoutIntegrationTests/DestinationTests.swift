import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// One suite on several destinations at once.
@Suite(.serialized, .timeLimit(.minutes(10))) struct DestinationTests {
    @Test func debugAndReleaseSideBySideEachEstimatedFromItsOwnHistory() async throws {
        let dir = try TempDir()
        var s = RunSettings()
        s.packagePath = repositoryRoot.appendingPathComponent("Tests/Fixtures/DemoSuite").path
        s.filters = ["^DemoKitTests\\.(GCD|Prime|LRUCache)Tests$"]
        s.slots = 4
        s.historyPath = dir.file("h.sqlite")
        s.reportDirectory = dir.file("r")
        s.destinations = [DestinationSpec(destination: Destination(name: "debug"), configuration: "debug"),
                          DestinationSpec(destination: Destination(name: "release"), configuration: "release")]
        let first = try await Coordinator(settings: s).run()
        #expect(first.exitCode == .success)
        #expect(first.report.destinations == ["debug", "release"])
        let bundles = first.report.product.bundle
        #expect(bundles.contains("/debug/") && bundles.contains("/release/"), "each build setting built once: \(bundles)")
        let perDestination = Dictionary(grouping: first.report.results, by: \.destination).mapValues(\.count)
        #expect(perDestination["debug"] == perDestination["release"] && (perDestination["debug"] ?? 0) > 0)
        #expect(Set(first.report.units.map(\.destination)) == ["debug", "release"])

        // Whole classes, so that each class's estimate is its own (splitting estimates pieces from method history).
        s.splitClasses = false
        let second = try await Coordinator(settings: s).run()
        for c in second.report.classes {
            #expect(c.estimateSource.hasPrefix("history"), "\(c.destination) \(c.suite): \(c.estimateSource)")
            let before = first.report.classes.first { $0.suite == c.suite && $0.destination == c.destination }
            #expect(abs(c.estimate - (before?.actual ?? -1)) < 1e-6, "estimated from its own destination's run")
        }
        let junit = try String(contentsOfFile: dir.file("r/junit.xml"), encoding: .utf8)
        #expect(junit.contains("name=\"destination\" value=\"release\""))
    }

    @Test func aClassNeverRunOnADestinationBorrowsFromAnother() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        var s = demoSettings(bundle: bundle, dir: dir, filters: ["^DemoKitTests\\.(GCD|Prime)Tests$"])
        let a = DestinationSpec(destination: Destination(name: "a")), b = DestinationSpec(destination: Destination(name: "b"))
        s.destinations = [a, b]
        _ = try await Coordinator(settings: s).run()            // both learn GCD and Prime: their speed ratio
        s.destinations = [a]
        s.filters = ["^DemoKitTests\\.(GCD|Prime|LRUCache)Tests$"]
        _ = try await Coordinator(settings: s).run()            // only a learns LRUCache
        s.destinations = [a, b]
        let plan = try await Coordinator(settings: s).prepare()
        let lru = try #require(plan.items.first { $0.destination == "b" && $0.suite.name == "LRUCacheTests" })
        guard case .borrowed(let from, let ratio) = lru.source else {
            Issue.record("LRUCacheTests on b: \(lru.source)")
            return
        }
        #expect(from == "a")
        #expect(ratio > 0.2 && ratio < 5, "same machine, same build: about 1, whatever else the machine does (\(ratio))")
    }

    @Test func anExclusiveClassHasItsAgentToItself() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        let s = demoSettings(bundle: bundle, dir: dir, filters: ["PerformanceTests", "LargeInput", "Levenshtein", "GCD", "Prime"])
        let outcome = try await Coordinator(settings: s).run()
        #expect(outcome.exitCode == .success)
        let perf = try #require(outcome.report.units.first { $0.suites.contains { $0.contains("PerformanceTests") } })
        #expect(perf.suites.count == 1, "never batched with other classes")
        for other in outcome.report.units where other.id != perf.id && other.agent == perf.agent {
            let overlap = other.startedAt < perf.startedAt + perf.duration && perf.startedAt < other.startedAt + other.duration
            #expect(!overlap, "unit \(other.id) ran beside the exclusive unit")
        }
        #expect(outcome.report.measurements.first?.hardwareClass?.contains("×") == true, "measured on a known hardware class")
    }

    @Test func aDestinationNoAgentServesIsReported() async throws {
        let dir = try TempDir()
        var s = try await IntegrationFleet.destinations.settings()
        s.bundlePath = try await DemoSuite.shared.bundle()
        s.filters = ["^DemoKitTests\\.GCDTests$"]
        s.historyPath = dir.file("h.sqlite")
        s.reportDirectory = dir.file("r")
        s.destinations = [DestinationSpec(destination: Destination(name: "linux")),
                          DestinationSpec(destination: Destination(name: "gpu"), tags: ["gpu"])]
        let outcome = try await Coordinator(settings: s).run()
        #expect(outcome.exitCode == .infrastructure)
        #expect(outcome.report.warnings.contains { $0.contains("no agent serves destination gpu") })
        let linux = outcome.report.results.filter { $0.destination == "linux" }
        let gpu = outcome.report.results.filter { $0.destination == "gpu" }
        #expect(!linux.isEmpty && linux.count == gpu.count, "each destination lists every test: \(linux.count) / \(gpu.count)")
        #expect(linux.allSatisfy { $0.outcome == .passed })
        #expect(gpu.allSatisfy { $0.outcome == .notRun })
    }
}
