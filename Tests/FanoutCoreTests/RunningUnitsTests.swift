import Testing
@testable import FanoutCore

/// The rules over the units running, on plain values (no actor, no clock: times are handed in): which agent a
/// measuring unit holds, whether a measurement was taken alone, CPU rates and machine loads, and what work stealing
/// sees of a running unit.
@Suite struct RunningUnitsTests {
    func unit(_ id: Int, _ items: WorkItem...) -> WorkUnit { WorkUnit(id: id, items: items) }
    func test(_ suite: String, _ name: String) -> TestID { TestID(module: "M", suite: suite, name: name) }

    // MARK: - Measured alone

    @Test func aMeasuringUnitHoldsItsAgentAndAClassSaidNotToBeOneDoesNot() {
        var running = RunningUnits()
        var bench = item("M", "Bench", 1)
        bench.exclusive = true
        running.start(.init(unit: unit(1, bench), start: 0, agent: "a"))
        running.start(.init(unit: unit(2, item("M", "Plain", 1)), start: 0, agent: "b"))
        #expect(running.isHeldForMeasuring("a"), "a class known to measure holds its agent from its start")
        #expect(!running.isHeldForMeasuring("b"))
        running.measured(2, test: test("Plain", "t0"), now: 1)
        #expect(running.isHeldForMeasuring("b"), "a unit that printed a measurement holds its agent from then on")

        var shared = item("M", "Shared", 1)
        shared.shared = true
        running.start(.init(unit: unit(3, shared), start: 0, agent: "c"))
        running.measured(3, test: test("Shared", "t0"), now: 1)
        #expect(!running.isHeldForMeasuring("c"), "`not_exclusive`: its measurements hold nothing")
        _ = running.end(1, at: 2)
        #expect(!running.isHeldForMeasuring("a"), "held no longer once it ended")
    }

    @Test func aMeasurementIsAloneOnlyWhenNothingElseRanOnItsAgentSinceItsTestStarted() {
        var running = RunningUnits()
        running.start(.init(unit: unit(1, item("M", "Bench", 1)), start: 0, agent: "a"))
        // Another unit on the agent from 0.5 s to 2 s; the measured test started at 1 s: they overlapped.
        running.start(.init(unit: unit(2, item("M", "Other", 1)), start: 0.5, agent: "a"))
        _ = running.testStarted(test("Bench", "t0"), unit: 1, now: 1)
        _ = running.end(2, at: 2)
        running.measured(1, test: test("Bench", "t0"), now: 3)
        // A test that starts after the other unit ended is measured alone.
        _ = running.testStarted(test("Bench", "t1"), unit: 1, now: 4)
        running.measured(1, test: test("Bench", "t1"), now: 5)
        // A unit on another agent does not count.
        running.start(.init(unit: unit(3, item("M", "Elsewhere", 1)), start: 5, agent: "b"))
        _ = running.testStarted(test("Bench", "t2"), unit: 1, now: 5.5)
        running.measured(1, test: test("Bench", "t2"), now: 6)
        // One running beside it at the measurement does.
        running.start(.init(unit: unit(4, item("M", "Beside", 1)), start: 6.5, agent: "a"))
        running.measured(1, test: test("Bench", "t2"), now: 7)
        let (_, _, alone) = running.end(1, at: 8)
        #expect(alone == [test("Bench", "t0"): false, test("Bench", "t1"): true, test("Bench", "t2"): false])
    }

    @Test func aSpanThatEndedBeforeEveryRunningUnitStartedIsForgotten() {
        var running = RunningUnits()
        running.start(.init(unit: unit(1, item("M", "Early", 1)), start: 0, agent: "a"))
        _ = running.end(1, at: 1)
        running.start(.init(unit: unit(2, item("M", "Bench", 1)), start: 2, agent: "a"))
        // The test's start is unknown (no line yet): the unit's start counts, after the early unit ended.
        running.measured(2, test: test("Bench", "t0"), now: 3)
        let ended = running.end(2, at: 4)
        #expect(ended.measuredAlone == [test("Bench", "t0"): true])
    }

    // MARK: - Capacity

    @Test func cpuRatesComeFromSamplesHalfASecondApartAndAUnitThatStopsComputingFreesACore() {
        var running = RunningUnits()
        running.start(.init(unit: unit(1, item("M", "Busy", 1)), start: 0, agent: "a"))
        let first = running.usage(1, ResourceUsage(cpuSeconds: 0, peakMemoryBytes: 100), at: 0)
        let close = running.usage(1, ResourceUsage(cpuSeconds: 0.1, peakMemoryBytes: 300), at: 0.2)
        #expect(!first && !close)
        #expect(running[1]?.cpuRate == nil && running[1]?.peakMemory == 300, "too close: no rate")
        let busy = running.usage(1, ResourceUsage(cpuSeconds: 1, peakMemoryBytes: 200), at: 1)
        #expect(!busy)
        #expect(running[1]?.cpuRate == 1 && running[1]?.peakMemory == 300, "1 s of CPU in 1 s; the peak is kept")
        let idle = running.usage(1, ResourceUsage(cpuSeconds: 1.05), at: 2)
        #expect(idle, "it stopped computing: a core is free")
        #expect(abs((running[1]?.cpuRate ?? 0) - 0.05) < 1e-9)
    }

    @Test func agentsOnOneMachineShareItsLoadAndUnmeasuredUnitsCountAsTheirHistorySays() throws {
        var running = RunningUnits()
        running.resources["a"] = AgentResources(cores: 2, memoryBytes: 1000, machine: "host-1")
        running.resources["b"] = AgentResources(cores: 2, memoryBytes: 1000, machine: "host-1")
        var known = item("M", "Known", 1)
        known.cpuShare = 0.75
        known.peakMemory = 400
        running.start(.init(unit: unit(1, known), start: 0, agent: "a"))
        running.start(.init(unit: unit(2, item("M", "Sampled", 1)), start: 0, agent: "b"))
        _ = running.usage(2, ResourceUsage(cpuSeconds: 0, peakMemoryBytes: 100), at: 0)
        _ = running.usage(2, ResourceUsage(cpuSeconds: 0.5, peakMemoryBytes: 100), at: 1)
        let machine = try #require(running.machineState(of: "b"))
        #expect(machine.cores == 2 && machine.runningUnits == 2)
        #expect(abs(machine.load - 1.25) < 1e-9, "0.75 expected from history + 0.5 measured")
        #expect(machine.memoryInUse == 500)
        #expect(running.machineState(of: "c") == nil, "an agent that did not report its cores holds nothing back")
        #expect(running.machine(of: "c") == "agent:c")
        #expect(RunningUnits.isComputing(running[1]!) && RunningUnits.isComputing(running[2]!))
    }

    // MARK: - A first run's pace

    @Test func aFirstRunsPaceIsTheMeanTestTimeOnceTwoClassesHaveATimeAndRunningTestsCount() {
        var running = RunningUnits()
        func ended(_ suite: String, _ name: String, _ seconds: Double, on destination: String = "local") {
            running.testEnded(test(suite, name), Attempt(outcome: .passed, duration: seconds, unit: 1, agent: "a"),
                              destination: destination, unit: 1)
        }
        ended("A", "t0", 0.01)
        ended("A", "t1", 0.03)
        #expect(running.paces(now: 1).isEmpty, "one class says nothing of the others")
        ended("B", "t0", 0.05)
        #expect(running.paces(now: 1)["local"].map { abs($0 - 0.03) < 1e-12 } == true, "0.09 s over 3 tests")
        running.testEnded(test("D", "t0"), Attempt(outcome: .skipped, duration: 9, unit: 1, agent: "a"),
                          destination: "local", unit: 1)
        #expect(running.paces(now: 1)["local"].map { abs($0 - 0.03) < 1e-12 } == true, "a skipped test is no time")
        // A test still running weighs in with the time it has run: 0.09 + 0.91 s over 4 tests.
        running.start(.init(unit: unit(2, item("M", "Long", 1, tests: 2)), start: 0, agent: "a"))
        _ = running.testStarted(test("Long", "t0"), unit: 2, now: 0.09)
        #expect(running.paces(now: 1)["local"].map { abs($0 - 0.25) < 1e-12 } == true)
        ended("E", "t0", 0.001, on: "gpu")
        #expect(running.paces(now: 1)["gpu"] == nil, "each destination has its own pace")
    }

    // MARK: - Work stealing

    @Test func aStealCandidateIsItsUnstartedTestsInRunOrderWithThisRunsTimes() {
        var running = RunningUnits()
        let b = item("M", "B", 3, tests: 3), a = item("M", "A", 2, tests: 2)
        running.start(.init(unit: unit(1, b, a), start: 0, agent: "a"))
        _ = running.testStarted(test("A", "t0"), unit: 1, now: 0)
        // A's tests took 0.5 s each in this run (observed); B's estimate is shared evenly: 1 s each.
        running.testEnded(test("A", "t0"), Attempt(outcome: .passed, duration: 0.5, unit: 1, agent: "a"),
                          destination: "local", unit: 1)
        _ = running.testStarted(test("A", "t1"), unit: 1, now: 0.5)
        let candidate = running.stealCandidate(running[1]!, now: 0.7)
        #expect(candidate.unstarted.map(\.test) == [test("B", "t0"), test("B", "t1"), test("B", "t2")],
                "class order (XCTest runs A before B), started tests left out")
        #expect(candidate.unstarted.map(\.seconds) == [1, 1, 1])
        #expect(abs(candidate.currentRemaining - 0.3) < 1e-9, "A/t1 is expected to take 0.5 s, 0.2 s have passed")
        #expect(candidate.stealable)

        running.start(.init(unit: unit(2, a), start: 0, agent: "b", twin: 1))
        #expect(!running.stealCandidate(running[2]!, now: 1).stealable, "a straggler's twin is not cut")
        running.measured(1, test: test("A", "t1"), now: 1)
        #expect(!running.stealCandidate(running[1]!, now: 1).stealable, "a unit that measures keeps its tests")
    }

    @Test func handedOverTestsLeaveTheUnitAndStopItsProcessAsItStartsOne() {
        var running = RunningUnits()
        running.start(.init(unit: unit(1, item("M", "A", 4, tests: 4)), start: 0, agent: "a"))
        let taken: Set = [test("A", "t2"), test("A", "t3")]
        running.handOver(taken, from: 1)
        #expect(running[1]?.unit.testIDs == [test("A", "t0"), test("A", "t1")])
        let own = running.testStarted(test("A", "t1"), unit: 1, now: 1)
        let theirs = running.testStarted(test("A", "t2"), unit: 1, now: 2)
        #expect(!own && theirs, "a handed-over test stops the process")
        #expect(running.handedOver(by: 1) == taken)
        let ended = running.end(1, at: 3)
        #expect(ended.handedOver == taken)
        #expect(running.handedOver(by: 1).isEmpty, "forgotten once the unit ended")
    }

    @Test func aPartKeepsItsClassesInOrderEstimatedTestByTest() {
        let source = unit(1, item("M", "A", 2, tests: 2), item("M", "B", 3, tests: 3))
        let part = RunningUnits.items(of: source, taking: [test("B", "t1"), test("A", "t1"), test("B", "t2")],
                                      estimate: { $0.suite.name == "A" ? 0.25 : 1 })
        #expect(part.map(\.suite.name) == ["A", "B"])
        #expect(part.map(\.tests) == [["t1"], ["t1", "t2"]])
        #expect(part.map(\.estimate) == [0.25, 2])
        #expect(part.allSatisfy { !$0.isWholeSuite })
    }
}
