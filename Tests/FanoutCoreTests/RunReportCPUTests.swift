import Foundation
import Testing
@testable import FanoutCore

/// CPU in the assembled report: per unit, class and agent, and the CPU term of the lower bound. Virtual values only.
@Suite(.timeLimit(.minutes(1))) struct RunReportCPUTests {
    /// Class `name` of `tests` tests.
    func cls(_ name: String, tests: Int) -> WorkItem { item("M", name, Double(tests), tests: tests) }

    func agent(_ name: String, slots: Int = 2, cores: Int? = 2, machine: String? = "m-1") -> AgentInfo {
        var a = AgentInfo(name: name, transport: "ssh", slots: slots)
        a.cores = cores
        a.machine = machine
        return a
    }

    /// A unit of these classes whose every test passed in `seconds`, on `agent`, with its CPU (nil: not measured).
    func unit(_ id: Int, _ items: [WorkItem], agent: String, from start: Double, seconds: Double, cpu: Double?,
              memory: Int64? = nil, superseded: Bool = false) -> UnitRecord {
        let unit = WorkUnit(id: id, items: items)
        let attempts = Dictionary(uniqueKeysWithValues: unit.testIDs.map {
            ($0, Attempt(outcome: .passed, duration: seconds, unit: id, agent: agent))
        })
        var durations: [SuiteID: Double] = [:]
        for item in items { durations[item.suite] = seconds * Double(item.tests.count) }
        let result = UnitResult(attempts: attempts, leftovers: [], missing: [], measurements: [],
                                suiteDurations: durations, completeSuites: Set(items.map(\.suite)), problem: nil)
        let end = start + seconds * Double(unit.testCount)
        return UnitRecord(unit: unit, agent: agent, slot: 0, startedAt: start, endedAt: end, ending: .exited(0),
                          superseded: superseded, result: result,
                          usage: cpu.map { ResourceUsage(cpuSeconds: $0, peakMemoryBytes: memory) })
    }

    /// Every test of the counted units, passed, with its attempt (and the attempt's CPU when given).
    func results(_ units: [UnitRecord], attemptCPU: Double? = nil) -> [TestResult] {
        units.filter { !$0.superseded }.flatMap { u in
            u.result.attempts.map { id, attempt -> TestResult in
                var attempt = attempt
                attempt.cpuSeconds = attemptCPU
                return TestResult(id: id, framework: .xctest, destination: "local", outcome: .passed, attempts: [attempt])
            }
        }.sorted { $0.id < $1.id }
    }

    func assembly(_ agents: [AgentInfo], _ units: [UnitRecord], items: [WorkItem], results: [TestResult]? = nil,
                  wall: Double = 90) -> RunReportAssembly {
        let slots = agents.reduce(0) { $0 + $1.slots }
        return RunReportAssembly(
            runID: "r", fanoutVersion: "test", startedAt: Date(timeIntervalSince1970: 0),
            finishedAt: Date(timeIntervalSince1970: wall), interruption: nil,
            product: ProductInfo(package: nil, bundle: "/b.xctest"), destinations: ["local"], agents: agents,
            anyAgentUsable: true, plan: PlanReport(slots: slots, lowerBound: 1, predictedMakespan: 1, totalEstimate: 1),
            slotsServing: ["local": slots], items: items, units: units, results: results ?? self.results(units),
            measurements: [], warnings: [], wall: wall)
    }

    /// The case from the field: 4 sshd agents × 2 slots on one 2-core machine, 4 units of 4 tests of 20 s, each
    /// unit 40 s of CPU, makespan 85 s. Test time / slots is 40 s; the cores bound the run at 160 s / 2 = 80 s.
    var cpuBoundRun: (agents: [AgentInfo], units: [UnitRecord], items: [WorkItem]) {
        let items = (0..<4).map { cls("C\($0)", tests: 4) }
        let agents = (1...4).map { agent("a\($0)") }
        var units = (0..<4).map { i in
            unit(i + 1, [items[i]], agent: "a\(i + 1)", from: 1, seconds: 20, cpu: 40, memory: 50_000_000)
        }
        units[3].endedAt = 86
        return (agents, units, items)
    }

    @Test func aCPUBoundRunIsBoundByItsCores() throws {
        let run = cpuBoundRun
        let timing = assembly(run.agents, run.units, items: run.items).report.timing
        #expect(timing.makespan == 85)
        #expect(timing.lowerBound == 80 && timing.boundBy == "cpu")
        #expect(timing.cpuSeconds == 160 && timing.cores == 2 && timing.cpuLowerBound == 80)
        #expect(abs(timing.efficiency - 85.0 / 80) < 1e-12, "the schedule is not blamed for what the cores decided")
        #expect(abs((timing.cpuBusy ?? 0) - 160.0 / 170) < 1e-12)
        #expect(timing.classLowerBound == 80, "never below the bound")
    }

    @Test func unitsAndAgentsCarryTheirCPU() throws {
        let run = cpuBoundRun
        let report = assembly(run.agents, run.units, items: run.items).report
        #expect(report.units.map(\.cpuSeconds) == [40, 40, 40, 40])
        #expect(report.units.map(\.peakMemoryBytes) == Array(repeating: 50_000_000, count: 4))
        for a in report.agents {
            #expect(a.cpuSeconds == 40)
            // Four agents share the machine's 2 cores: each is a quarter of its busy share.
            #expect(abs((a.cpuBusy ?? 0) - 40.0 / (2 * 85)) < 1e-12)
        }
        let busy = report.agents.compactMap(\.cpuBusy).reduce(0, +)
        #expect(abs(busy - (report.timing.cpuBusy ?? 0)) < 1e-12, "agents of one machine add up to the machine")
    }

    /// Agents without a machine identity each count their cores: 4 × 2 cores, the same CPU binds at 20 s.
    @Test func agentsWithoutAMachineEachCountTheirCores() {
        var run = cpuBoundRun
        run.agents = (1...4).map { agent("a\($0)", machine: nil) }
        let timing = assembly(run.agents, run.units, items: run.items).report.timing
        #expect(timing.cores == 8 && timing.cpuLowerBound == 20)
        #expect(timing.lowerBound == 40 && timing.boundBy == "slots")
    }

    /// Nothing measured: no CPU anywhere in the report, and the bound as before.
    @Test func noUsageNoCPUTerm() {
        var run = cpuBoundRun
        for i in run.units.indices { run.units[i].usage = nil }
        let report = assembly(run.agents, run.units, items: run.items).report
        let timing = report.timing
        #expect(timing.cpuSeconds == nil && timing.cores == nil && timing.cpuLowerBound == nil && timing.cpuBusy == nil)
        #expect(timing.lowerBound == 40 && timing.boundBy == "slots")
        #expect(report.units.allSatisfy { $0.cpuSeconds == nil && $0.peakMemoryBytes == nil })
        #expect(report.agents.allSatisfy { $0.cpuSeconds == nil && $0.cpuBusy == nil })
        #expect(report.classes.allSatisfy { $0.cpuSeconds == nil })
    }

    /// A superseded twin's CPU was spent: it counts in the bound and its agent's CPU, not in the classes.
    @Test func aSupersededTwinsCPUCounts() throws {
        var run = cpuBoundRun
        run.units.append(unit(5, [run.items[0]], agent: "a2", from: 30, seconds: 10, cpu: 20, superseded: true))
        let report = assembly(run.agents, run.units, items: run.items).report
        #expect(report.timing.cpuSeconds == 180 && report.timing.cpuLowerBound == 90 && report.timing.lowerBound == 90)
        #expect(report.agents.first { $0.name == "a2" }?.cpuSeconds == 60)
        #expect(report.units.first { $0.id == 5 }?.cpuSeconds == 20)
        #expect(report.classes.first { $0.suite.name == "C0" }?.cpuSeconds == 40, "the class's CPU is its counted units'")
    }

    /// A class's share of its unit's CPU is its share of the unit's time; classes of a unit add up to the unit.
    @Test func classCPUIsItsShareOfItsUnitsTime() throws {
        let x = cls("X", tests: 3), y = cls("Y", tests: 1), z = cls("Z", tests: 2)
        let units = [unit(1, [x, y], agent: "a", from: 0, seconds: 10, cpu: 20),  // X 30 s, Y 10 s of 40 s
                     unit(2, [z], agent: "a", from: 0, seconds: 1, cpu: nil)]    // not measured
        let report = assembly([agent("a")], units, items: [x, y, z]).report
        let cpu = Dictionary(uniqueKeysWithValues: report.classes.map { ($0.suite.name, $0.cpuSeconds) })
        #expect(cpu["X"] == 15 && cpu["Y"] == 5)
        #expect(cpu["Z"] == .some(nil), "its unit's CPU was not measured")
    }

    /// When every attempt carries its own CPU, the class's CPU is their sum.
    @Test func classCPUFromItsAttemptsWhenEveryOneHasIt() throws {
        let x = cls("X", tests: 3), y = cls("Y", tests: 1)
        let units = [unit(1, [x, y], agent: "a", from: 0, seconds: 10, cpu: 20)]
        let report = assembly([agent("a")], units, items: [x, y], results: results(units, attemptCPU: 2.5)).report
        let cpu = Dictionary(uniqueKeysWithValues: report.classes.map { ($0.suite.name, $0.cpuSeconds) })
        #expect(cpu["X"] == 7.5 && cpu["Y"] == 2.5)
        // One attempt without its CPU: back to the share of the unit.
        var mixed = results(units, attemptCPU: 2.5)
        mixed[0].attempts[0].cpuSeconds = nil
        let shared = assembly([agent("a")], units, items: [x, y], results: mixed).report
        #expect(shared.classes.first { $0.suite.name == "X" }?.cpuSeconds == 15)
    }

    @Test func classCPUOfZeroTimeUnitsIsSplitEvenly() {
        let x = cls("X", tests: 1), y = cls("Y", tests: 1)
        let units = [unit(1, [x, y], agent: "a", from: 0, seconds: 0, cpu: 1)]
        let report = assembly([agent("a")], units, items: [x, y]).report
        #expect(report.classes.map(\.cpuSeconds) == [0.5, 0.5])
    }
}
