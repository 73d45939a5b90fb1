import Foundation
import Testing
@testable import FanoutCore

/// A RunReport assembled from virtual values: no process, no clock, no file.
@Suite(.timeLimit(.minutes(1))) struct RunReportAssemblyTests {
    let a = item("M", "A", 4, tests: 4)
    let b = item("M", "B", 1, tests: 2)

    func id(_ cls: String, _ t: Int) -> TestID { TestID(module: "M", suite: cls, name: "t\(t)") }

    /// Class A split in two pieces (t0, t1 | t2, t3) and class B whole.
    var pieces: [WorkItem] {
        var first = a, second = a
        first.tests = ["t0", "t1"]; first.isWholeSuite = false; first.estimate = 2
        second.tests = ["t2", "t3"]; second.isWholeSuite = false; second.estimate = 2
        return [first, second, b]
    }

    /// The result of a unit whose every test passed in `seconds` each.
    func passed(_ unit: WorkUnit, seconds: Double, agent: String) -> UnitResult {
        let attempts = Dictionary(uniqueKeysWithValues: unit.testIDs.map {
            ($0, Attempt(outcome: .passed, duration: seconds, unit: unit.id, agent: agent))
        })
        var durations: [SuiteID: Double] = [:]
        for item in unit.items { durations[item.suite] = seconds * Double(item.tests.count) }
        return UnitResult(attempts: attempts, leftovers: [], missing: [], measurements: [], suiteDurations: durations,
                          completeSuites: Set(unit.items.map(\.suite)), problem: nil)
    }

    func record(_ unit: WorkUnit, agent: String, slot: Int, from start: Double, to end: Double, seconds: Double,
                superseded: Bool = false) -> UnitRecord {
        UnitRecord(unit: unit, agent: agent, slot: slot, startedAt: start, endedAt: end, ending: .exited(0),
                   superseded: superseded, command: "run \(unit.id)", log: "log \(unit.id)",
                   result: passed(unit, seconds: seconds, agent: agent))
    }

    func results(_ outcomes: [TestID: Outcome]) -> [TestResult] {
        outcomes.map { id, outcome in
            TestResult(id: id, framework: .xctest, destination: "local", outcome: outcome,
                       attempts: [Attempt(outcome: outcome, duration: 0.5, unit: 1, agent: "a")])
        }.sorted { $0.id < $1.id }
    }

    func assembly(units: [UnitRecord], outcomes: [TestID: Outcome], interruption: RunExitCode? = nil,
                  usable: Bool = true) -> RunReportAssembly {
        RunReportAssembly(
            runID: "r1", fanoutVersion: "test", startedAt: Date(timeIntervalSince1970: 100.0004),
            finishedAt: Date(timeIntervalSince1970: 110.0006), interruption: interruption,
            product: ProductInfo(package: nil, bundle: "/b.xctest"), destinations: ["local"],
            agents: [AgentInfo(name: "a", transport: "scripted", slots: 2)], anyAgentUsable: usable,
            plan: PlanReport(slots: 2, lowerBound: 2.5, predictedMakespan: 3, totalEstimate: 5),
            slotsServing: ["local": 2], items: pieces, units: units, results: results(outcomes),
            measurements: [], warnings: ["w"], wall: 10)
    }

    var allTests: [TestID] { pieces.flatMap(\.testIDs) }

    /// Two pieces of A and B: unit 2 (A's second piece and B) ran on slot 1 after unit 1 on slot 0.
    var normalRun: [UnitRecord] {
        [record(WorkUnit(id: 2, items: [pieces[1], pieces[2]]), agent: "a", slot: 1, from: 1, to: 4, seconds: 0.5),
         record(WorkUnit(id: 1, items: [pieces[0]]), agent: "b", slot: 0, from: 1.5, to: 3, seconds: 0.5)]
    }

    @Test func splitClassesAreMergedBackAndTheirTimeIsComplete() throws {
        let outcomes = Dictionary(uniqueKeysWithValues: allTests.map { ($0, Outcome.passed) })
        let report = assembly(units: normalRun, outcomes: outcomes).report
        #expect(report.classes.map(\.suite.name) == ["A", "B"])
        let classA = try #require(report.classes.first)
        #expect(classA.testCount == 4 && classA.estimate == 4)
        #expect(classA.estimateSource.hasSuffix("· split in 2"), "\(classA.estimateSource)")
        #expect(classA.actual == 2, "the sum of its pieces' times")
        #expect(classA.timingIsComplete && classA.outcome == .passed)
        #expect(classA.agent == "a", "the agent of the last piece, in unit order")
        #expect(report.exitCode == 0 && !report.interrupted)
        #expect(report.startedAt.timeIntervalSince1970 == 100, "milliseconds kept")
        #expect(report.steals == nil && report.shard == nil && report.warnings == ["w"])
    }

    @Test func unitsAreReportedInOrderWithTheirPlaceAndTime() {
        var units = normalRun
        units[0].takenFrom = 1
        units[1].handedOver = 2
        let report = assembly(units: units, outcomes: [:]).report
        #expect(report.units.map(\.id) == [1, 2])
        let first = report.units[0], second = report.units[1]
        #expect(first.agent == "b" && first.slot == 0 && first.startedAt == 1.5 && first.duration == 1.5)
        #expect(first.handedOver == 2 && first.takenFrom == nil)
        #expect(second.suites == ["M.A (2 tests)", "M.B"] && second.testCount == 4 && second.estimate == 3)
        #expect(second.handedOver == nil && second.takenFrom == 1, "nothing handed over is left out")
        #expect(second.command == "run 2" && second.log == "log 2" && second.ending == "exit 0")
    }

    @Test func timingAndTheMeasuredLowerBounds() throws {
        let outcomes = Dictionary(uniqueKeysWithValues: allTests.map { ($0, Outcome.passed) })
        let timing = assembly(units: normalRun, outcomes: outcomes).report.timing
        #expect(timing.wall == 10)
        #expect(timing.preparation == 1, "until the first unit started")
        #expect(timing.makespan == 3, "first start 1 to last end 4")
        // Six tests of 0.5 s on 2 slots: 1.5 s. Over classes as scheduled: 3 s of class time, longest piece 1 s.
        #expect(timing.lowerBound == 1.5)
        #expect(timing.classLowerBound == 1.5)
        #expect(timing.efficiency == 2)
    }

    @Test func aSupersededTwinIsReportedButNotCounted() throws {
        var units = normalRun
        // Unit 3, a backup of unit 1, lost to it: it ended last, but the makespan and the class times ignore it.
        units.append(record(WorkUnit(id: 3, items: [pieces[0]]), agent: "a", slot: 0, from: 2, to: 9, seconds: 7,
                            superseded: true))
        let outcomes = Dictionary(uniqueKeysWithValues: allTests.map { ($0, Outcome.passed) })
        let report = assembly(units: units, outcomes: outcomes).report
        #expect(report.units.count == 3)
        #expect(report.units[2].ending == "stopped: its twin (straggler backup) finished first")
        #expect(report.timing.makespan == 3)
        #expect(report.classes.first?.actual == 2)
    }

    @Test func exitCodePolicy() {
        let passed = Dictionary(uniqueKeysWithValues: allTests.map { ($0, Outcome.passed) })
        var failed = passed
        failed[id("A", 0)] = .failed
        var notRun = passed
        notRun[id("B", 1)] = .notRun
        #expect(assembly(units: normalRun, outcomes: passed).exitCode == .success)
        #expect(assembly(units: normalRun, outcomes: failed).exitCode == .testFailures)
        #expect(assembly(units: normalRun, outcomes: notRun).exitCode == .infrastructure)
        #expect(assembly(units: normalRun, outcomes: passed, usable: false).exitCode == .infrastructure)
        // Failures win over infrastructure; an interruption wins over everything, with its own code.
        var both = failed
        both[id("B", 1)] = .notRun
        #expect(assembly(units: normalRun, outcomes: both).exitCode == .testFailures)
        #expect(assembly(units: normalRun, outcomes: both, interruption: .terminated).exitCode == .terminated)
        let interrupted = assembly(units: normalRun, outcomes: passed, interruption: .interrupted).report
        #expect(interrupted.exitCode == 130 && interrupted.interrupted)
        // A unit with a problem (it selected zero tests) is an infrastructure failure, unless it was superseded.
        var units = normalRun
        units[1].result.problem = "the unit selected zero tests"
        #expect(assembly(units: units, outcomes: passed).exitCode == .infrastructure)
        units[1].superseded = true
        #expect(assembly(units: units, outcomes: passed).exitCode == .success)
    }

    @Test func aClassIsAsBadAsItsWorstTest() {
        #expect(Verdict.class([.passed, .crashed, .failed]) == .crashed)
        #expect(Verdict.class([.passed, .notRun]) == .notRun)
        #expect(Verdict.class([.skipped, .skipped]) == .skipped)
        #expect(Verdict.class([.passed, .skipped]) == .passed)
        #expect(Verdict.class([.passed, .flaky]) == .flaky)
        #expect(Verdict.class([]) == .passed)
    }

    @Test func aClassThatDidNotRunWholeDoesNotTeachTheHistory() throws {
        // Only A's first piece ran: the class is not covered, its time is not complete.
        let units = [record(WorkUnit(id: 1, items: [pieces[0]]), agent: "a", slot: 0, from: 0, to: 1, seconds: 0.5)]
        let report = assembly(units: units, outcomes: [:]).report
        let classA = try #require(report.classes.first { $0.suite.name == "A" })
        #expect(classA.actual == 1 && !classA.timingIsComplete)
        let classB = try #require(report.classes.first { $0.suite.name == "B" })
        #expect(classB.actual == nil && !classB.timingIsComplete && classB.agent == nil)
    }
}
