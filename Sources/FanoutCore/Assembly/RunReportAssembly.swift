import struct Foundation.Date

/// Everything a finished run left behind, and the pure rules that make a `RunReport` of it: per-class estimate
/// versus actual and outcome, one entry per unit, the lower bounds measured from the tests, timing, and the exit code.
/// The coordinator gathers these values; nothing here runs a process, reads a clock or touches a file.
public struct RunReportAssembly: Sendable {
    public var runID: String
    public var fanoutVersion: String
    public var startedAt: Date
    public var finishedAt: Date
    /// The exit code of the interruption that stopped the run (SIGINT or SIGTERM); nil when it was not interrupted.
    public var interruption: RunExitCode?
    public var product: ProductInfo
    public var destinations: [String]
    public var agents: [AgentInfo]
    /// False when no agent was usable: nothing could run, an infrastructure failure whatever the results say.
    public var anyAgentUsable: Bool
    public var plan: PlanReport
    /// Slots of usable agents that serve each destination (a destination missing here is served by all slots).
    public var slotsServing: [String: Int]
    /// The work items that were planned (pieces of split classes are merged back into their class).
    public var items: [WorkItem]
    /// Every unit that ended, superseded twins included.
    public var units: [UnitRecord]
    /// Every test that was asked for, exactly once per destination.
    public var results: [TestResult]
    public var measurements: [MeasurementRecord]
    public var warnings: [String]
    public var steals: [StealReport]
    public var shard: Shard?
    /// A `--repeat` run's settings; its first failure is found here, from the results.
    public var repeatRun: RepeatReport?
    /// Seconds from the run's start to now (the end of the run).
    public var wall: Double

    public init(runID: String, fanoutVersion: String, startedAt: Date, finishedAt: Date, interruption: RunExitCode?,
                product: ProductInfo, destinations: [String], agents: [AgentInfo], anyAgentUsable: Bool,
                plan: PlanReport, slotsServing: [String: Int], items: [WorkItem], units: [UnitRecord],
                results: [TestResult], measurements: [MeasurementRecord], warnings: [String],
                steals: [StealReport] = [], shard: Shard? = nil, wall: Double) {
        self.runID = runID
        self.fanoutVersion = fanoutVersion
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.interruption = interruption
        self.product = product
        self.destinations = destinations
        self.agents = agents
        self.anyAgentUsable = anyAgentUsable
        self.plan = plan
        self.slotsServing = slotsServing
        self.items = items
        self.units = units
        self.results = results
        self.measurements = measurements
        self.warnings = warnings
        self.steals = steals
        self.shard = shard
        self.wall = wall
    }

    /// Units whose results count (not stopped in favour of their twin), in the order they were made.
    var counted: [UnitRecord] { units.filter { !$0.superseded }.sorted { $0.unit.id < $1.unit.id } }

    public var report: RunReport {
        let classes = Self.classReports(items: items, finished: counted, results: results)
        let timing = timing(classes: classes)
        var report = RunReport(
            runID: runID, fanoutVersion: fanoutVersion, startedAt: Self.milliseconds(startedAt),
            finishedAt: Self.milliseconds(finishedAt), interrupted: interruption != nil, product: product,
            destinations: destinations, agents: Self.agentReports(agents, units: units, makespan: timing.makespan),
            plan: plan, units: units.sorted { $0.unit.id < $1.unit.id }.map(Self.unitReport), classes: classes,
            results: results, measurements: measurements, warnings: warnings, timing: timing,
            exitCode: exitCode.rawValue)
        report.steals = steals.isEmpty ? nil : steals
        report.shard = shard
        if var repeatRun {
            repeatRun.firstFailure = RepeatReport.firstFailure(in: results)
            report.repeatRun = repeatRun
        }
        return report
    }

    /// The run's exit code (the rule is `Verdict.exitCode`): trouble with the infrastructure is no usable agent, or
    /// a unit with a problem (it selected zero tests, exited oddly).
    public var exitCode: RunExitCode {
        Verdict.exitCode(Counts(results: results), infrastructure: !anyAgentUsable || counted.contains { $0.result.problem != nil },
                         interruption: interruption)
    }

    /// The honest bound comes from the tests alone, and from the CPU their units consumed on the cores of their
    /// machines (``MeasuredLowerBound/bound(_:slots:slotsServing:cpu:)``); the class-level one (over the pieces
    /// scheduled as one: a whole class, or a group of a split class) says how well the chosen units were placed.
    func timing(classes: [ClassReport]) -> Timing {
        let firstStart = units.map(\.startedAt).min() ?? wall
        let lastEnd = counted.map(\.endedAt).max() ?? wall
        let sharing = MeasuredLowerBound.sharing(of: agents)
        let testWork = results.flatMap { r in
            r.attempts.map { a in
                MeasuredLowerBound.Work(destination: r.destination, seconds: MeasuredLowerBound.uncontended(
                    duration: a.duration, cpu: a.cpuSeconds, sharing: sharing[a.agent] ?? 1))
            }
        }
        let spent = Self.cpuByAgent(units)
        let cpu = MeasuredLowerBound.cpu(spent: spent, agents: agents)
        let bound = MeasuredLowerBound.bound(testWork, slots: plan.slots, slotsServing: slotsServing, cpu: cpu)
        let actual = classes.compactMap(\.actual).reduce(0, +)
        let longestPiece = counted.flatMap { $0.result.suiteDurations.values }.max() ?? 0
        let classLowerBound = max(bound.seconds, Scheduler.lowerBound(work: actual, longest: longestPiece, slots: plan.slots))
        var timing = Timing(wall: wall, preparation: firstStart, makespan: max(0, lastEnd - firstStart),
                            lowerBound: bound.seconds, classLowerBound: classLowerBound)
        timing.cpuSeconds = spent.isEmpty ? nil : spent.values.reduce(0, +)
        timing.cores = cpu?.cores
        timing.cpuLowerBound = bound.cpu
        timing.boundBy = bound.boundBy
        return timing
    }

    /// CPU seconds of the units of each agent whose CPU was measured (superseded twins included: it was spent).
    static func cpuByAgent(_ units: [UnitRecord]) -> [String: Double] {
        var spent: [String: Double] = [:]
        for u in units {
            guard let cpu = u.usage?.cpuSeconds, cpu.isFinite, cpu >= 0 else { continue }
            spent[u.agent, default: 0] += cpu
        }
        return spent
    }

    /// The agents with the CPU their units consumed (``cpuByAgent(_:)``) and how busy that kept their cores over
    /// the run: `cpuBusy` = CPU seconds / (cores × makespan). Agents that share a machine report that machine's
    /// cores, so each one's `cpuBusy` is its share of the whole machine, and the machine's own busy share is the sum
    /// over its agents. Nil when the agent's units were not measured (or its cores are unknown, or nothing ran).
    static func agentReports(_ agents: [AgentInfo], units: [UnitRecord], makespan: Double) -> [AgentInfo] {
        let spent = cpuByAgent(units)
        return agents.map { agent in
            var agent = agent
            agent.cpuSeconds = spent[agent.name]
            if let cpu = agent.cpuSeconds, let cores = agent.cores, cores > 0, makespan > 0 {
                agent.cpuBusy = cpu / (Double(cores) * makespan)
            }
            return agent
        }
    }

    /// One unit as the report shows it.
    static func unitReport(_ u: UnitRecord) -> UnitReport {
        var report = UnitReport(
            id: u.unit.id, destination: u.unit.destination, framework: u.unit.framework, agent: u.agent,
            slot: u.slot, suites: u.unit.suiteDescriptions, testCount: u.unit.testCount,
            estimate: u.unit.estimate, startedAt: u.startedAt, duration: u.endedAt - u.startedAt,
            ending: u.superseded ? UnitStop.twinFinishedFirst.ending : u.ending.description,
            command: u.command, log: u.log, takenFrom: u.takenFrom,
            handedOver: u.handedOver > 0 ? u.handedOver : nil)
        report.cpuSeconds = u.usage?.cpuSeconds
        report.peakMemoryBytes = u.usage?.peakMemoryBytes
        report.cpuWaitSeconds = u.usage?.cpuWaitSeconds
        report.concurrent = u.result.concurrent ? true : nil
        report.replayOf = u.replayOf?.description
        return report
    }

    /// Estimate versus actual per class and destination, pieces of split classes merged back into their class;
    /// a class's outcome is its worst test's; its CPU seconds by ``classCPU(_:attempts:units:)``.
    public static func classReports(items: [WorkItem], finished: [UnitRecord], results: [TestResult]) -> [ClassReport] {
        var byClass: [String: [Outcome]] = [:]
        var attemptsByClass: [String: [Attempt]] = [:]
        for r in results {
            byClass["\(r.destination)|\(r.id.suite)", default: []].append(r.outcome)
            attemptsByClass["\(r.destination)|\(r.id.suite)", default: []] += r.attempts
        }
        var order: [String] = []
        var pieces: [String: [WorkItem]] = [:]
        for item in items {
            let key = "\(item.destination)|\(item.suite)"
            if pieces[key] == nil { order.append(key) }
            pieces[key, default: []].append(item)
        }
        return order.compactMap { key -> ClassReport? in
            guard let parts = pieces[key], let first = parts.first else { return nil }
            let mine = finished.filter { $0.unit.destination == first.destination }
            let runs = mine.filter { $0.result.suiteDurations[first.suite] != nil }
            let times = runs.compactMap { $0.result.suiteDurations[first.suite] }
            // Its time teaches the history only when every piece ran normally and together they covered the class.
            let covered = Set(runs.flatMap { $0.unit.items.filter { $0.suite == first.suite }.flatMap(\.tests) })
            let wanted = Set(parts.flatMap(\.tests))
            let complete = !runs.isEmpty && covered == wanted && runs.allSatisfy { $0.result.completeSuites.contains(first.suite) }
            // A `--repeat` run ran the class once per repetition: its time is the mean of one repetition.
            let repetitions = Double(max(1, Set(parts.compactMap(\.repetition)).count))
            var report = ClassReport(
                suite: first.suite, framework: first.framework, destination: first.destination,
                testCount: wanted.count, estimate: parts.reduce(0) { $0 + $1.estimate } / repetitions,
                estimateSource: parts.count > 1 ? "\(first.source) · split in \(parts.count)" : first.source.description,
                actual: times.isEmpty ? nil : times.reduce(0, +) / repetitions,
                outcome: Verdict.class(byClass[key] ?? []), timingIsComplete: complete,
                agent: runs.last?.agent)
            report.cpuSeconds = classCPU(first.suite, attempts: attemptsByClass[key] ?? [], units: runs)
            return report
        }.sorted { ($0.destination, $0.suite) < ($1.destination, $1.suite) }
    }

    /// The CPU seconds a class consumed on one destination:
    /// - the sum of its tests' `Attempt.cpuSeconds` when every attempt that ran (not-run ones aside) carries one;
    /// - else its share of the CPU of the counted units that ran it: each unit's CPU in proportion to the class's
    ///   time in that unit (its suite duration) over the unit's time for all its classes (evenly among them when
    ///   that time is 0). A unit's CPU is thus spread over its classes whole, process start-up included, and the
    ///   classes of a unit add up to its CPU. Units whose CPU was not measured add nothing.
    /// - nil when neither is known.
    static func classCPU(_ suite: SuiteID, attempts: [Attempt], units: [UnitRecord]) -> Double? {
        let ran = attempts.filter { $0.outcome != .notRun }
        if !ran.isEmpty, ran.allSatisfy({ $0.cpuSeconds?.isFinite == true }) {
            return ran.reduce(0) { $0 + max(0, $1.cpuSeconds ?? 0) }
        }
        var total: Double?
        for unit in units {
            guard let cpu = unit.usage?.cpuSeconds, cpu.isFinite, cpu >= 0,
                  let mine = unit.result.suiteDurations[suite] else { continue }
            let times = unit.result.suiteDurations.values.map { $0.isFinite ? max(0, $0) : 0 }
            let all = times.reduce(0, +)
            let share = all > 0 ? (mine.isFinite ? max(0, mine) : 0) / all : 1 / Double(max(1, times.count))
            total = (total ?? 0) + cpu * share
        }
        return total
    }

    /// Reports keep milliseconds: a report read back from report.json equals the one written.
    public static func milliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }
}
