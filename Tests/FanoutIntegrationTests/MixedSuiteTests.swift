import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// A slow test is not a hung one, on the suite that showed it in the field: thousands of tests, partly computing, and
/// one class whose few heavy tests compute silently for about 40 s in all. On 8 local slots of a 2-core machine each
/// of those tests takes several times its serial time and the class's unit runs well past a minute; Fanout used to
/// stop that unit at 60 s on every run. The benchmark's `mixed` suite (fanout-bench, Sources/FanoutBench) is that
/// suite, at full size: three runs in a row on one history (a first run, then two planned from it) must pass every
/// test once, none stopped for time. With a retry allowed, a test stopped for time would come back as flaky.
///
/// Durations are printed, never asserted: the machine is shared.
@Suite(.serialized, .timeLimit(.minutes(30))) struct MixedSuiteTests {
    /// The class of 16 methods whose 4 heaviest compute 8-12 s each (SuiteGenerator.heavyClass).
    static let heavyClass = "ReportRenderingTests"

    /// Generates the mixed suite with the built fanout-bench, builds it, and returns its test product and every test
    /// it holds (`Module.Class/testNNN`).
    func buildMixedSuite(in dir: TempDir) async throws -> (bundle: String, tests: Set<String>) {
        let package = dir.file("mixed")
        let bench = try siblingExecutable("fanout-bench")
        let shell = LocalTransport(slots: 1)
        let (generated, _, genErr) = await shell.capture(
            Command(executable: bench, arguments: ["generate", "--kind", "mixed", "--seed", "1", "--out", package]),
            timeout: 60)
        try #require(generated == .exited(0), "\(String(decoding: genErr, as: UTF8.self))")
        let swift = ["swift", "build", "--build-tests", "--package-path", package]
        let (built, _, buildErr) = await shell.capture(Command(executable: "/usr/bin/env", arguments: swift), timeout: 1200)
        try #require(built == .exited(0), "\(String(decoding: buildErr, as: UTF8.self).suffix(2000))")
        let (shown, binDir, _) = await shell.capture(Command(executable: "/usr/bin/env", arguments: swift + ["--show-bin-path"]),
                                                    timeout: 120)
        try #require(shown == .exited(0))

        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: package + "/suite.json")))
        let suite = try #require(json as? [String: Any])
        let name = try #require(suite["packageName"] as? String)
        let module = try #require(suite["moduleName"] as? String)
        let classes = try #require(suite["classes"] as? [[String: Any]])
        var tests: Set<String> = []
        for c in classes {
            let className = try #require(c["name"] as? String)
            let methods = try #require(c["methods"] as? [Double])
            for i in methods.indices {
                tests.insert("\(module).\(className)/test" + String(repeating: "0", count: max(0, 3 - String(i).count)) + String(i))
            }
        }
        #expect(classes.contains { $0["name"] as? String == Self.heavyClass })
        let bundle = String(decoding: binDir, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            + "/\(name)PackageTests.xctest"
        return (bundle, tests)
    }

    @Test func slowComputingTestsOnEightSlotsOfTwoCoresAreNeverStoppedForTime() async throws {
        let dir = try TempDir()
        let (bundle, expected) = try await buildMixedSuite(in: dir)
        #expect(expected.count > 2000, "thousands of tests, like the suite in the field: \(expected.count)")

        for run in 1...3 {
            var settings = demoSettings(bundle: bundle, dir: dir, slots: 8) // one history file for the three runs
            settings.reportDirectory = dir.file("report-\(run)")
            settings.retries = 1
            // In the field the class was small next to the whole suite, so it ran whole in one unit on every run.
            // Here the suite is smaller (three runs must fit in minutes) and the planner would split the class by
            // methods once it has history; kept whole, its one unit runs well past a minute on every run, as there.
            settings.keepWhole = ["\\.\(Self.heavyClass)$"]
            let started = Date()
            let outcome = try await Coordinator(settings: settings).run()
            let report = outcome.report
            let place = "run \(run)"

            #expect(outcome.exitCode == .success, "\(place): \(report.counts)")
            let ids = report.results.map(\.id.description)
            #expect(ids.count == Set(ids).count, "\(place): every test once")
            let missing = expected.subtracting(ids).sorted(), unexpected = Set(ids).subtracting(expected).sorted()
            #expect(Set(ids) == expected, "\(place): missing \(missing.prefix(5)), unexpected \(unexpected.prefix(5))")
            let notPassed = report.results.filter { $0.outcome != .passed }
            #expect(notPassed.isEmpty, "\(place): \(notPassed.prefix(5).map { "\($0.id) \($0.outcome): \($0.issues.map(\.message))" })")
            let retried = report.results.filter { $0.attempts.count != 1 }
            #expect(retried.isEmpty, "\(place): retried (a time-out would show here): \(retried.prefix(5).map(\.id.description))")
            let timeouts = report.results.filter { $0.issues.contains { $0.kind == .timeout } }
            #expect(timeouts.isEmpty, "\(place): \(timeouts.prefix(5).map { "\($0.id): \($0.issues.map(\.message))" })")
            #expect(report.counts.timedOut == 0 && report.counts.flaky == 0 && report.counts.failed == 0
                    && report.counts.crashed == 0, "\(place): \(report.counts)")

            // The first run has no history; the next two plan every class from what the runs before them measured.
            let guessed = report.classes.filter { !($0.estimateSource.hasPrefix("history") || $0.estimateSource.hasPrefix("method history")) }
            if run == 1 {
                #expect(report.classes.allSatisfy { $0.estimateSource.hasPrefix("no history") }, "\(place): a first run")
            } else {
                #expect(guessed.isEmpty, "\(place): planned from a guess: \(guessed.prefix(5).map { "\($0.suite): \($0.estimateSource)" })")
            }

            let heavyUnits = report.units.filter { $0.suites.contains { $0.contains("." + Self.heavyClass) } }
            let heavyTests = report.results.filter { $0.id.suite.name == Self.heavyClass && $0.duration > 1 }
            print("MixedSuiteTests \(place): \(String(format: "%.1f", Date().timeIntervalSince(started))) s, makespan "
                  + "\(String(format: "%.1f", report.timing.makespan)) s (LB \(String(format: "%.1f", report.timing.lowerBound)) s); "
                  + "\(Self.heavyClass): unit(s) of \(heavyUnits.map { String(format: "%.1f", $0.duration) }.joined(separator: ", ")) s, "
                  + "its heavy tests \(heavyTests.map { String(format: "%.1f", $0.duration) }.joined(separator: ", ")) s")
        }
    }
}
