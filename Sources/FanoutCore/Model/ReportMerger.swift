import struct Foundation.Date

/// Merges the reports of the shards of one run (N CI jobs, `--shard I/N` each) into one report, as if one run had
/// done it all: every test exactly once, units renumbered so they stay distinct, timings of the slowest shard.
///
/// A merge that cannot vouch for every test is never green: a missing shard, a shard given twice, reports of
/// different splits, or a test reported by two shards are listed in `problems`, written into the report's warnings,
/// and the exit code is at least 3 (tests missing). Test failures still give 1, as in one run.
public enum ReportMerger {
    public struct Merged: Sendable {
        public var report: RunReport
        /// Why the merged report cannot be trusted to hold every test once (empty when it can).
        public var problems: [String]
    }

    public static func merge(_ reports: [RunReport]) -> Merged {
        var problems: [String] = []
        let sharded = reports.compactMap(\.shard)
        if sharded.count != reports.count, !sharded.isEmpty {
            problems.append("\(reports.count - sharded.count) of the \(reports.count) reports are of runs that were not sharded")
        }
        if let count = sharded.first?.count {
            if sharded.contains(where: { $0.count != count }) {
                problems.append("the reports come from different splits: " + Set(sharded.map { "/\($0.count)" }).sorted().joined(separator: ", "))
            }
            let indices = sharded.map(\.index)
            let missing = (1...count).filter { !indices.contains($0) }
            if !missing.isEmpty { problems.append("shard\(missing.count == 1 ? "" : "s") \(missing.map { "\($0)/\(count)" }.joined(separator: ", ")) missing: its tests are not in this report") }
            let twice = Set(indices.filter { i in indices.filter { $0 == i }.count > 1 }).sorted()
            if !twice.isEmpty { problems.append("shard\(twice.count == 1 ? "" : "s") \(twice.map { "\($0)/\(count)" }.joined(separator: ", ")) given more than once") }
        }

        // Units get new ids: each report's ids shifted past the previous reports'.
        var units: [UnitReport] = [], tagged: [(result: TestResult, report: Int)] = [], classes: [ClassReport] = []
        var measurements: [MeasurementRecord] = [], warnings: [String] = [], agents: [AgentInfo] = []
        var steals: [StealReport] = []
        var hooks: [HookReport] = []
        tagged.reserveCapacity(reports.reduce(0) { $0 + $1.results.count })
        var offset = 0
        let label = { (n: Int) in reports[n].shard.map { "shard \($0)" } ?? "report \(n + 1)" }
        for (n, report) in reports.enumerated() {
            let shift = { (id: Int) in id + offset }
            units += report.units.map { u in
                var u = u
                u.id = shift(u.id)
                u.takenFrom = u.takenFrom.map(shift)
                return u
            }
            for result in report.results {
                var r = result
                if offset > 0 {
                    r.attempts = r.attempts.map { a in
                        var a = a
                        a.unit = shift(a.unit)
                        a.replayOf = a.replayOf.map(shift)
                        return a
                    }
                    if var order = r.orderDependence {
                        order.unit = shift(order.unit)
                        order.checkUnit = order.checkUnit.map(shift)
                        r.orderDependence = order
                    }
                }
                tagged.append((r, n))
            }
            classes += report.classes
            measurements += report.measurements
            warnings += report.warnings.map { "\(label(n)): \($0)" }
            agents += report.agents.map { a in
                var a = a
                if reports.count > 1 { a.name = "\(label(n)): \(a.name)" }
                return a
            }
            // A shard's hooks ran on its own agents: named as they are in `agents`.
            hooks += (report.hooks ?? []).map { h in
                var h = h
                if reports.count > 1, let agent = h.agent { h.agent = "\(label(n)): \(agent)" }
                return h
            }
            steals += (report.steals ?? []).map { s in
                var s = s
                s.from = shift(s.from)
                s.to = s.to.map(shift)
                return s
            }
            offset += (report.units.map(\.id).max() ?? 0)
        }
        // Sorted by (destination, test); the sort is stable, so of a test reported twice the first report's result
        // comes first and is kept, and the second is a problem.
        struct Key: Equatable, Comparable {
            var destination: String
            var id: TestID
            static func < (a: Key, b: Key) -> Bool { (a.destination, a.id) < (b.destination, b.id) }
        }
        let keys = tagged.map { Key(destination: $0.result.destination, id: $0.result.id) }
        var results: [TestResult] = []
        results.reserveCapacity(tagged.count)
        var previous: Int?
        for i in tagged.indices.sorted(by: { keys[$0] < keys[$1] }) {
            if let previous, keys[previous] == keys[i] {
                let r = tagged[i].result
                problems.append("\(r.id) on \(r.destination) is in \(label(tagged[previous].report)) and \(label(tagged[i].report))")
                continue
            }
            results.append(tagged[i].result)
            previous = i
        }
        warnings = problems + warnings

        let counts = Counts(results: results)
        // Shards that disagree (a test in two of them) are trouble, like a test not run.
        let exit = Verdict.merged(Verdict.exitCode(counts, infrastructure: !problems.isEmpty),
                                  shards: reports.map { ($0.exitCode, $0.interrupted) })

        let first = reports.min { $0.startedAt < $1.startedAt }
        let timing = mergedTiming(reports.map(\.timing), agents: agents)
        var report = RunReport(
            runID: (first?.runID ?? "merged") + (reports.count > 1 ? "+\(reports.count - 1)" : ""),
            fanoutVersion: first?.fanoutVersion ?? "", startedAt: first?.startedAt ?? Date(timeIntervalSince1970: 0),
            finishedAt: reports.map(\.finishedAt).max() ?? Date(timeIntervalSince1970: 0),
            interrupted: reports.contains(where: \.interrupted), product: first?.product ?? ProductInfo(package: nil, bundle: ""),
            destinations: reports.flatMap(\.destinations).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } },
            agents: agents,
            plan: PlanReport(slots: reports.reduce(0) { $0 + $1.plan.slots },
                             lowerBound: reports.map(\.plan.lowerBound).max() ?? 0,
                             predictedMakespan: reports.map(\.plan.predictedMakespan).max() ?? 0,
                             totalEstimate: reports.reduce(0) { $0 + $1.plan.totalEstimate }),
            units: units, classes: classes, results: results, measurements: measurements, warnings: warnings,
            timing: timing, exitCode: exit)
        report.steals = steals.isEmpty ? nil : steals
        report.hooks = reports.contains { $0.hooks != nil } ? hooks : nil
        return Merged(report: report, problems: problems)
    }

    /// The shards ran at the same time, each on its own CI job, so the merged run took as long as its slowest shard:
    /// wall, preparation and makespan are the largest of the shards'. Each shard's lower bound (its CPU term
    /// included) holds for its own makespan, hence for the slowest shard's: the merged `lowerBound` is the largest
    /// of them, `boundBy` that shard's binding term, and `cpuLowerBound` the largest shard CPU term.
    ///
    /// CPU: `cpuSeconds` is the sum over the shards (all of it was spent), `cores` the cores of the distinct machines
    /// of every shard (agents with the same `machine` counted once, across shards too). The bound is NOT recomputed
    /// as all CPU / all cores: that would assume CPU work could move from one job's machine to another's, which it
    /// cannot, and would let a badly balanced split look CPU-bound-perfect. So in a merged report `cpuLowerBound`
    /// may exceed `cpuSeconds / cores` (the shards' CPU was uneven); `cpuSeconds / (cores × makespan)` is still how
    /// busy all the cores were over the merged makespan.
    static func mergedTiming(_ timings: [Timing], agents: [AgentInfo]) -> Timing {
        let binding = timings.max { $0.lowerBound < $1.lowerBound }
        var timing = Timing(wall: timings.map(\.wall).max() ?? 0, preparation: timings.map(\.preparation).max() ?? 0,
                            makespan: timings.map(\.makespan).max() ?? 0, lowerBound: binding?.lowerBound ?? 0)
        timing.boundBy = binding?.boundBy
        let cpu = timings.compactMap(\.cpuSeconds)
        timing.cpuSeconds = cpu.isEmpty ? nil : cpu.reduce(0, +)
        timing.cpuLowerBound = timings.compactMap(\.cpuLowerBound).max()
        // Agents whose units' CPU was measured (as a run counts them); agents of earlier reports lack it.
        timing.cores = timing.cpuSeconds == nil ? nil : MeasuredLowerBound.cores(of: agents.filter { $0.cpuSeconds != nil })
        return timing
    }
}
