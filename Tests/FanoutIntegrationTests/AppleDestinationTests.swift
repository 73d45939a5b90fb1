import FanoutAgents
import FanoutCoordinator
import FanoutCore
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Apple platforms end to end, through the replay harness (Tests/Fixtures/Xcodebuild/Replay: stand-in `xcodebuild`
/// and `xcrun` that replay a recorded Xcode 26 run, since Linux has no Xcode) over the real SSH fleet: a config with
/// two simulator destinations is read, listed, planned, deployed, dispatched with one simulator per slot, parsed
/// (console, then result bundle) and reported per device. The harness prints only lines of real captures, or says
/// where it does not (Tests/Fixtures/Xcodebuild/SOURCES.md).
///
/// On a real Mac, the same run goes through `MacAgentTests` (`FANOUT_MAC_AGENT`, see Agents/README.md).
@Suite(.serialized, .timeLimit(.minutes(10))) struct AppleDestinationTests {
    static let fleet = IntegrationFleet(name: "apple", port: 2629)
    static let replay = repositoryRoot.appendingPathComponent("Tests/Fixtures/Xcodebuild/Replay").path
    static let xctestrun = replay + "/Products/RandomStuff_RandomStuff_iphonesimulator26.2-arm64.xctestrun"

    /// The recorded run's verdicts, as Xcode gave them.
    static let recorded: [String: Outcome] = [
        "RandomStuffTests.RandomStuffTests/testExample": .passed,
        "RandomStuffTests.RandomStuffTests/testExample2": .passed,
        "RandomStuffTests.RandomStuffTests/testExpectedFailure": .passed,
        "RandomStuffTests.RandomStuffTests/testExpectedFailure2": .failed,
        "RandomStuffTests.RandomStuffTests/testFoo": .failed,
        "RandomStuffTests.RandomStuffTests/testPerformanceExample": .passed,
        "RandomStuffTests.RandomStuffTests/testSkippedTest": .skipped,
        "RandomStuffUITests.RandomStuffUITestsLaunchTests/testLaunch": .passed,
        "RandomStuffUITests.RandomStuffUITests/testExample": .passed,
        "RandomStuffUITests.RandomStuffUITests/testLaunchPerformance": .passed,
    ]

    func config(state: String, testsList: String) -> String {
        let tools = "xcodebuild: \(Self.replay)/bin/xcodebuild, xcrun: \(Self.replay)/bin/xcrun"
        return """
            destinations:
              - name: iphone-17-pro
                runner: xcodebuild
                bundle: \(Self.xctestrun)
                device: {platform: iOS Simulator, model: iPhone 17 Pro, os: "26.2", \(tools)}
                environment: {FANOUT_REPLAY_STATE: \(state), FANOUT_REPLAY_TIME_SCALE: "0.02"}
              - name: ipad-air
                runner: xcodebuild
                bundle: \(Self.xctestrun)
                tests_list: \(testsList)
                device: {platform: iOS Simulator, model: iPad Air 11-inch (M3), os: "26.2", erase_between_units: true, \(tools)}
                environment: {FANOUT_REPLAY_STATE: \(state), FANOUT_REPLAY_TIME_SCALE: "0.02"}
            """
    }

    @Test func twoSimulatorDestinationsRunOverTheFleetAndReportPerDevice() async throws {
        let dir = try TempDir()
        let state = try Self.sharedState(dir)
        // The list a Mac would make beside the build, for the destination that does not list by itself.
        let list = dir.file("tests.json")
        let (listed, _, listErr) = await LocalTransport(slots: 1).capture(Command(
            executable: Self.replay + "/bin/xcodebuild",
            arguments: ["test-without-building", "-xctestrun", Self.xctestrun, "-destination", "platform=iOS Simulator,name=iPhone 17 Pro",
                        "-enumerate-tests", "-test-enumeration-style", "flat", "-test-enumeration-format", "json",
                        "-test-enumeration-output-path", list],
            environment: ["FANOUT_REPLAY_STATE": state]), timeout: 60)
        #expect(listed == .exited(0), "\(String(decoding: listErr, as: UTF8.self))")

        var s = try await Self.fleet.settings()
        try ConfigFile.parse(config(state: state, testsList: list), file: "fanout.yml", into: &s)
        s.historyPath = dir.file("h.sqlite")
        s.reportDirectory = dir.file("r")
        s.splitClasses = false
        // Two agents of one slot each: each destination's three classes are more units than there are slots, so
        // some slot runs a destination twice and must reuse (and, for the iPad, erase) its simulator.
        s.agents = s.agents.prefix(2).map { var a = $0; a.slots = 1; return a }
        let slots = s.agents.map(\.slots).reduce(0, +)
        let outcome = try await Coordinator(settings: s).run()
        let report = outcome.report
        for destination in ["iphone-17-pro", "ipad-air"] {
            let units = report.units.filter { $0.destination == destination }.count
            #expect(units > slots, "\(destination): \(units) units on \(slots) slots reuse no simulator")
        }

        // Every recorded test on each device, with Xcode's own verdict.
        #expect(report.destinations == ["iphone-17-pro", "ipad-air"])
        #expect(report.warnings.isEmpty, "\(report.warnings)")
        for destination in report.destinations {
            let mine = report.results.filter { $0.destination == destination }
            let got = Dictionary(uniqueKeysWithValues: mine.map { ($0.id.description, $0.outcome) })
            #expect(got == Self.recorded, "\(destination): \(got)")
            #expect(mine.allSatisfy { $0.framework == .xcodebuild })
            let foo = try #require(mine.first { $0.id.name == "testFoo" })
            #expect(foo.issues.first?.location == SourceLocation(file: "RandomStuffTests.swift", line: 38))
            #expect(foo.issues.first?.message.contains("XCTAssertEqual failed") == true)
            let skipped = try #require(mine.first { $0.id.name == "testSkippedTest" })
            #expect(skipped.attempts.last?.skipReason == "Required API is not available for this test.")
        }
        #expect(outcome.exitCode == .testFailures, "two recorded failures fail the run: \(outcome.exitCode)")

        // Measurements and their baselines are kept per device (model and OS), as Xcode keys them.
        let classes = Set(report.measurements.map { "\($0.destination)=\($0.hardwareClass ?? "?")" })
        #expect(classes == ["iphone-17-pro=iPhone 17 Pro, iOS Simulator 26.2",
                            "ipad-air=iPad Air 11-inch (M3), iOS Simulator 26.2"], "\(classes)")

        // Units ran on the fleet's agents, over SSH, from the deployed product.
        #expect(Set(report.units.map(\.agent)).isSubset(of: Set(s.agents.map(\.name))))
        #expect(report.agents.contains { ($0.deployedBytes ?? 0) > 0 }, "the .xctestrun and its folder were deployed")

        // One simulator per slot and destination: created, booted, reused by that slot's later units, deleted at the end.
        let events = try Self.invocations(state)
        let created = events.filter { $0["action"] as? String == "create" }
        let deleted = Set(events.filter { $0["action"] as? String == "delete" }.compactMap { $0["udid"] as? String })
        let createdIDs = Set(created.compactMap { $0["udid"] as? String })
        #expect(!createdIDs.isEmpty && createdIDs == deleted, "every simulator deleted: \(createdIDs.subtracting(deleted))")
        let names = created.compactMap { $0["name"] as? String }
        #expect(Set(names).count == names.count, "never two simulators for one slot and destination: \(names)")
        let tests = events.filter { $0["action"] as? String == "test" && $0["phase"] as? String == "start" }
        // One xcodebuild per unit; a straggler's twin may be stopped (its twin finished first) before it got that far.
        let unstopped = report.units.filter { !$0.ending.hasPrefix("stopped: its twin") }.count
        #expect(tests.count >= unstopped && tests.count <= report.units.count, "one xcodebuild per unit: \(tests.count) for \(report.units.count)")
        for t in tests { #expect(createdIDs.contains(t["udid"] as? String ?? ""), "ran on a simulator of the run") }
        for destination in ["iphone-17-pro", "ipad-air"] {
            let mine = Set(created.filter { ($0["name"] as? String ?? "").hasSuffix(" " + destination) }.compactMap { $0["udid"] as? String })
            let runs = tests.filter { mine.contains($0["udid"] as? String ?? "") }.count
            #expect(!mine.isEmpty && mine.count <= slots && runs > mine.count,
                    "\(destination): \(runs) xcodebuilds on \(mine.count) simulators, for \(slots) slots: reused")
        }
        let leftover = try FileManager.default.contentsOfDirectory(atPath: state + "/devices").filter { $0.hasSuffix(".json") }
        #expect(leftover.isEmpty, "no simulator outlives the run: \(leftover)")
        // The iPad destination erases its simulator between units (every two xcodebuilds on one simulator have an
        // erase between them); the iPhone one reuses it as it is.
        var erasedBetween = 0
        for udid in createdIDs {
            let steps = events.filter { $0["udid"] as? String == udid }.compactMap { e -> String? in
                switch e["action"] as? String {
                case "erase": "erase"
                case "test" where e["phase"] as? String == "start": "test"
                default: nil
                }
            }
            let iPad = created.contains { $0["udid"] as? String == udid && ($0["name"] as? String ?? "").hasSuffix(" ipad-air") }
            let line = steps.joined(separator: " ")
            if iPad {
                #expect(!line.contains("test test"), "iPad simulator \(udid) ran two units without an erase: \(line)")
                erasedBetween += steps.count(where: { $0 == "erase" })
            } else {
                #expect(!steps.contains("erase"), "iPhone simulator \(udid) was erased: \(line)")
            }
        }
        #expect(erasedBetween > 0, "some slot ran two iPad units, so something was erased")

        // What the docs tell a person to run to find a run's leftover simulators finds none after the run.
        let (listed2, listOut, _) = await LocalTransport(slots: 1).capture(Command(
            executable: Self.replay + "/bin/xcrun", arguments: ["simctl", "list", "devices"],
            environment: ["FANOUT_REPLAY_STATE": state]), timeout: 60)
        #expect(listed2 == .exited(0) && String(decoding: listOut, as: UTF8.self) == "== Devices ==\n")

        // The JUnit report names each device's destination.
        let junit = try String(contentsOfFile: dir.file("r/junit.xml"), encoding: .utf8)
        #expect(junit.contains("value=\"ipad-air\"") && junit.contains("value=\"iphone-17-pro\""))

        // A failed test's screenshot came back before the agent's clean-up, and the reports link it.
        for destination in report.destinations {
            let foo = try #require(report.results.first { $0.destination == destination && $0.id.name == "testFoo" })
            let files = foo.attempts.last?.attachments ?? []
            // The test also kept a screenshot not associated with its failure: `--only-failures` leaves it out.
            #expect(files.count == 2 && files.allSatisfy { $0.hasPrefix("attachments/\(destination)/") }, "only failures' attachments: \(files)")
            #expect(Set(files).count == 2, "two screenshots of one name are both kept: \(files)")
            #expect(!files.contains { $0.contains("Kept") }, "an attachment not associated with the failure came back: \(files)")
            for file in files {
                let png = try Data(contentsOf: URL(fileURLWithPath: dir.file("r/" + file)))
                #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG, byte for byte")
                #expect(junit.contains("[[ATTACHMENT|\(file)]]"))
            }
            let passed = try #require(report.results.first { $0.destination == destination && $0.id.name == "testExample" })
            #expect(passed.attempts.last?.attachments == nil, "only failures' attachments come back")
            let launch = try #require(report.results.first { $0.destination == destination && $0.id.name == "testLaunch" })
            #expect(launch.attempts.last?.attachments == nil, "the recorded launch screenshot belongs to a passed test")
        }
        let exports = try Self.invocations(state).filter { $0["action"] as? String == "export-attachments" }
        #expect(!exports.isEmpty && exports.allSatisfy { $0["only_failures"] as? Bool == true }, "\(exports)")
        let html = try String(contentsOfFile: dir.file("r/report.html"), encoding: .utf8)
        #expect(html.contains("<img src=\"attachments/iphone-17-pro/"))
    }

    @Test func aSimulatorThatCannotBeCreatedLosesNoTest() async throws {
        let dir = try TempDir()
        var s = try await Self.fleet.settings()
        // A runtime the harness's simctl refuses (as a Mac refuses a runtime it does not have).
        try ConfigFile.parse("""
            destinations:
              - name: iphone
                runner: xcodebuild
                bundle: \(Self.xctestrun)
                tests_list: \(repositoryRoot.appendingPathComponent("Tests/Fixtures/Xcodebuild/Replay").path)/../enumerate-tests-flat-json-xcode16-trimmed.json
                device: {platform: iOS Simulator, model: iPhone 17 Pro, os: "26.2", runtime: no-such-runtime, \
            xcodebuild: \(Self.replay)/bin/xcodebuild, xcrun: \(Self.replay)/bin/xcrun}
                environment: {FANOUT_REPLAY_STATE: \(try Self.sharedState(dir))}
            """, file: "fanout.yml", into: &s)
        s.historyPath = dir.file("h.sqlite")
        s.reportDirectory = dir.file("r")
        s.filters = ["Feature10Test1[0-2]Tests"]
        let outcome = try await Coordinator(settings: s).run()
        #expect(outcome.report.results.count == 30, "every test asked for is in the report")
        #expect(outcome.report.results.allSatisfy { $0.outcome == .notRun })
        #expect(outcome.report.warnings.contains { $0.contains("Invalid runtime: no-such-runtime") }, "\(outcome.report.warnings)")
        #expect(outcome.exitCode != .success)
    }

    /// Ctrl-C in the middle of a unit: the run stops, and still deletes every simulator it created (the clean-up
    /// runs outside the cancelled run, or a CI job's SIGTERM would leave booted simulators on every Mac).
    @Test func anInterruptedRunStillDeletesItsSimulators() async throws {
        let dir = try TempDir()
        let state = try Self.sharedState(dir)
        let path = dir.file("fanout.yml")
        // Real recorded durations (the UI tests take 16 to 74 s): the run is surely inside a unit when interrupted.
        try config(state: state, testsList: "unused").replacingOccurrences(of: "FANOUT_REPLAY_TIME_SCALE: \"0.02\"",
                                                                          with: "FANOUT_REPLAY_TIME_SCALE: \"1\"")
            .components(separatedBy: "\n").filter { !$0.contains("tests_list") }.joined(separator: "\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try fanoutExecutable())
        p.arguments = ["run", "--config", path, "--slots", "2", "--report-dir", dir.file("r"), "--history", dir.file("h.sqlite")]
        p.currentDirectoryURL = URL(fileURLWithPath: dir.path)
        let output = OutputBox()
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { output.append($0.availableData) }
        try p.run()
        let deadline = Date().addingTimeInterval(120)
        while p.isRunning, Date() < deadline,
              !((try? Self.invocations(state)) ?? []).contains(where: { $0["action"] as? String == "test" }) {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(500))
        kill(p.processIdentifier, SIGINT)
        await withCheckedContinuation { c in DispatchQueue.global().async { p.waitUntilExit(); c.resume() } }
        pipe.fileHandleForReading.readabilityHandler = nil
        #expect(p.terminationStatus == 130, "\(output.text)")
        let events = try Self.invocations(state)
        let created = Set(events.filter { $0["action"] as? String == "create" }.compactMap { $0["udid"] as? String })
        let deleted = Set(events.filter { $0["action"] as? String == "delete" }.compactMap { $0["udid"] as? String })
        #expect(!created.isEmpty && created == deleted, "left behind: \(created.subtracting(deleted))")
    }

    /// The harness's simulator state, shared by the fleet's agents, which are users of their own.
    static func sharedState(_ dir: TempDir) throws -> String {
        let state = dir.file("simulators")
        let fm = FileManager.default
        for folder in [state, state + "/devices"] {
            try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try fm.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: folder)
        }
        _ = fm.createFile(atPath: state + "/invocations.jsonl", contents: nil, attributes: [.posixPermissions: 0o666])
        try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
        return state
    }

    static func invocations(_ state: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: state + "/invocations.jsonl", encoding: .utf8)
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}
