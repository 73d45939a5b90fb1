import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// A verdict is the test framework's own. These tests run the same binary twice: serially, the way the framework
/// runs it by itself, read by a small reader written here (not Fanout's parsers), and through Fanout on several
/// slots. Every test's outcome must be the same in both, and every test the framework ran must be in Fanout's report.
@Suite(.serialized, .timeLimit(.minutes(5))) struct DifferentialTests {
    /// Failures of every kind the demo suite can produce without killing its process (assertion, thrown error,
    /// expectation time-out, Swift Testing #expect), skips, a trap that a test survives, and odd stderr lines.
    static let mixedOutcomes = ["DEMO_FAIL": "1", "DEMO_THROW": "1", "DEMO_EXPECTATION_TIMEOUT": "1",
                                "DEMO_ST_FAIL": "1", "DEMO_LATENCY_SCALE": "0.05"]

    @Test func demoSuiteOutcomesEqualTheFrameworksOwn() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let reference = try await FrameworkVerdicts.serial(bundle: bundle, environment: Self.mixedOutcomes)
        // The mix really is mixed: a check that passes on an all-green run would prove little.
        let tally = Dictionary(grouping: reference.values, by: { $0 }).mapValues(\.count)
        #expect(reference.count >= 208, "every XCTest method and Swift Testing test of the demo suite: \(reference.count)")
        #expect(tally["failed", default: 0] >= 4 && tally["skipped", default: 0] >= 3 && tally["passed", default: 0] >= 190,
                "\(tally)")
        #expect(reference["DemoKitTests.PreconditionRecoveryTests/testZeroCapacityCacheTrapsAndIsCaught"] == "passed")

        let dir = try TempDir()
        let outcome = try await Coordinator(settings: demoSettings(bundle: bundle, dir: dir, env: Self.mixedOutcomes,
                                                                   slots: 4)).run()
        let fanout = Dictionary(outcome.report.results.map { ($0.id.description, Self.verdict($0.outcome)) },
                                uniquingKeysWith: { a, _ in a })
        #expect(outcome.report.results.count == fanout.count, "every test once")
        FrameworkVerdicts.expectEqual(fanout: fanout, framework: reference)
        #expect(outcome.exitCode == .testFailures)
    }

    /// The benchmark's generated suites (546 methods with a few long classes; 3,000 tiny tests; one dominant class),
    /// built from their seeds here, their waits scaled down: every test Fanout reports is the one XCTest ran, passed.
    @Test(arguments: ["lognormal", "many-small", "dominant"])
    func generatedSuiteOutcomesEqualTheFrameworksOwn(shape: String) async throws {
        let dir = try TempDir()
        let package = dir.file(shape)
        let bench = try siblingExecutable("fanout-bench")
        let shell = LocalTransport(slots: 1)
        let (generated, _, genErr) = await shell.capture(
            Command(executable: bench, arguments: ["generate", "--shape", shape, "--seed", "1", "--out", package]), timeout: 60)
        #expect(generated == .exited(0), "\(String(decoding: genErr, as: UTF8.self))")
        let swift = ["swift", "build", "--build-tests", "--package-path", package]
        let (built, _, buildErr) = await shell.capture(Command(executable: "/usr/bin/env", arguments: swift), timeout: 600)
        #expect(built == .exited(0), "\(String(decoding: buildErr, as: UTF8.self).suffix(2000))")
        let (_, binDir, _) = await shell.capture(Command(executable: "/usr/bin/env", arguments: swift + ["--show-bin-path"]),
                                                timeout: 120)
        let suiteJSON = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: package + "/suite.json")))
        let name = try #require((suiteJSON as? [String: Any])?["packageName"] as? String)
        let bundle = String(decoding: binDir, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            + "/\(name)PackageTests.xctest"

        let env = ["BENCH_TIME_SCALE": "0.01"]
        let reference = try await FrameworkVerdicts.serial(bundle: bundle, environment: env, swiftTesting: false)
        #expect(reference.count >= 300 && reference.values.allSatisfy { $0 == "passed" }, "\(reference.count) tests")
        let outcome = try await Coordinator(settings: demoSettings(bundle: bundle, dir: dir, env: env, slots: 8)).run()
        let fanout = Dictionary(outcome.report.results.map { ($0.id.description, Self.verdict($0.outcome)) },
                                uniquingKeysWith: { a, _ in a })
        #expect(outcome.report.results.count == fanout.count, "every test once")
        FrameworkVerdicts.expectEqual(fanout: fanout, framework: reference)
        #expect(outcome.exitCode == .success)
    }

    /// Fanout's outcome in the framework's words (a retried test's final outcome; no retries are asked for here).
    static func verdict(_ outcome: Outcome) -> String {
        switch outcome {
        case .passed, .flaky: "passed"
        case .failed: "failed"
        case .skipped: "skipped"
        case .crashed: "crashed"
        case .timedOut: "timed out"
        case .notRun: "not run"
        }
    }
}

/// What the frameworks themselves say about every test of a binary, run serially and read without Fanout's code.
enum FrameworkVerdicts {
    /// `Module.Class/method` (XCTest) and `Module.Suite/test()` (Swift Testing) → passed, failed or skipped.
    static func serial(bundle: String, environment: [String: String], swiftTesting: Bool = true) async throws
        -> [String: String] {
        let shell = LocalTransport(slots: 1)
        var verdicts: [String: String] = [:]

        // XCTest: one process per class (a bare binary runs both same-named classes, and its console lines carry no
        // module), each class run whole and in order by XCTest itself.
        let (listed, listing, _) = await shell.capture(Command(executable: bundle, arguments: ["--list-tests"]), timeout: 120)
        guard case .exited(0) = listed else { throw TestFailure("--list-tests ended \(listed)") }
        let classes = Set(String(decoding: listing, as: UTF8.self).split(separator: "\n").compactMap { line -> String? in
            guard let slash = line.firstIndex(of: "/"), line.contains(".") else { return nil }
            return String(line[..<slash])
        })
        #expect(!classes.isEmpty)
        for qualified in classes.sorted() {
            let module = qualified.split(separator: ".", maxSplits: 1)[0]
            let (ending, out, _) = await shell.capture(
                Command(executable: bundle, arguments: [qualified], environment: environment), timeout: 120)
            guard case .exited(let code) = ending, code == 0 || code == 1 else {
                throw TestFailure("\(qualified) ended \(ending) when run by itself")
            }
            // `Test Case 'Class.method' passed (0.001 seconds)`, wherever it stands in its line: a test that prints
            // without a final newline has XCTest's line glued to its text.
            let text = String(decoding: out, as: UTF8.self)
            var ran = 0
            for match in text.matches(of: /Test Case '([^' ]+)\.([^' .]+)' (passed|failed|skipped) \(/) {
                verdicts["\(module).\(match.output.1)/\(match.output.2)"] = String(match.output.3)
                ran += 1
            }
            // XCTest's own count of the tests it ran must agree with what was read.
            let executed = text.matches(of: /Executed (\d+) tests?, with/).last.flatMap { Int($0.output.1) }
            #expect(executed == ran, "\(qualified): XCTest says it executed \(executed ?? -1) tests, \(ran) were read")
        }

        guard swiftTesting else { return verdicts }
        // Swift Testing: its JSON event stream. A test failed when an issue that is a failure was recorded in it.
        let stream = NSTemporaryDirectory() + "fanout-differential-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: stream) }
        let (ending, _, _) = await shell.capture(
            Command(executable: bundle, arguments: ["--testing-library", "swift-testing", "--event-stream-output-path", stream],
                    environment: environment), timeout: 120)
        guard case .exited(let code) = ending, code == 0 || code == 1 else { throw TestFailure("swift-testing ended \(ending)") }
        var functions: Set<String> = []
        var failed: Set<String> = []
        var skipped: Set<String> = []
        for line in try String(contentsOfFile: stream, encoding: .utf8).split(separator: "\n") {
            guard let record = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let payload = record["payload"] as? [String: Any] else { continue }
            if record["kind"] as? String == "test" {
                if payload["kind"] as? String == "function", let id = payload["id"] as? String { functions.insert(id) }
                continue
            }
            guard let id = payload["testID"] as? String else { continue }
            switch payload["kind"] as? String {
            case "issueRecorded":
                if (payload["issue"] as? [String: Any])?["isFailure"] as? Bool == true { failed.insert(id) }
            case "testSkipped":
                skipped.insert(id)
            default:
                break
            }
        }
        #expect(!functions.isEmpty)
        for id in functions {
            verdicts[swiftTestingName(id)] = failed.contains(id) ? "failed" : skipped.contains(id) ? "skipped" : "passed"
        }
        return verdicts
    }

    /// `DemoKitTests.StringSuite/Unicode/accents()/StringSuite.swift:40:10` → `DemoKitTests.StringSuite/Unicode/accents()`;
    /// a free function `DemoKitTests.freeStandingGCD()/File.swift:3:2` → `DemoKitTests.(top level)/freeStandingGCD()`
    /// (the suite name Fanout gives free functions).
    static func swiftTestingName(_ id: String) -> String {
        var parts = id.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if let last = parts.last, last.contains(".swift:") { parts.removeLast() }
        if parts.count == 1, let dot = parts[0].firstIndex(of: ".") {
            return "\(parts[0][..<dot]).(top level)/\(parts[0][parts[0].index(after: dot)...])"
        }
        return parts.joined(separator: "/")
    }

    /// Same tests, same outcomes; the differences are listed by name so a failure says what to look at.
    static func expectEqual(fanout: [String: String], framework: [String: String],
                            sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        let onlyFramework = Set(framework.keys).subtracting(fanout.keys).sorted()
        let onlyFanout = Set(fanout.keys).subtracting(framework.keys).sorted()
        let differ = framework.keys.filter { fanout[$0] != nil && fanout[$0] != framework[$0] }.sorted()
            .map { "\($0): framework \(framework[$0] ?? "-"), Fanout \(fanout[$0] ?? "-")" }
        #expect(onlyFramework.isEmpty, "tests the framework ran that Fanout did not report: \(onlyFramework)",
                sourceLocation: sourceLocation)
        #expect(onlyFanout.isEmpty, "tests Fanout reported that the framework did not run: \(onlyFanout)",
                sourceLocation: sourceLocation)
        #expect(differ.isEmpty, "outcomes differ: \(differ)", sourceLocation: sourceLocation)
        #expect(fanout.count == framework.count, sourceLocation: sourceLocation)
    }
}
