import FanoutCore
import FanoutHistory
import FanoutReports
import Foundation

/// The tables that answer `fanout plan`, `fanout list` and `fanout history …`, built from a prepared run or the
/// timing history (Table renders them).
public enum InspectionTables {
    /// `fanout plan`: the hooks a run will run, when and where, with their deadlines; nil when there are none.
    public static func hooksTable(_ settings: RunSettings, slots: Int) -> Table? {
        guard !settings.hooks.isEmpty else { return nil }
        let agents = settings.agents.isEmpty ? ["local"] : settings.agents.map(\.name)
        let rows = settings.hooks.inOrder.map { key, command in
            let count = switch key.scope {
            case .run: "once, on this machine"
            case .agent: "\(agents.count)×: on " + agents.joined(separator: ", ")
            case .slot: "\(slots)×: each slot (FANOUT_WORKER 0–\(max(0, slots - 1)))"
            }
            let when = switch (key.scope, key.phase) {
            case (.run, .setUp): "before anything is dispatched"
            case (.agent, .setUp): "after deploying, before the agent's first unit"
            case (.slot, .setUp): "before the slot's first unit"
            case (.slot, .tearDown): "after the slot's last unit"
            case (.agent, .tearDown): "after the agent's last unit"
            case (.run, .tearDown): "at the very end"
            }
            return ["\(key.scope.rawValue) \(key.phase == .setUp ? "set-up" : "teardown")", count, when,
                    formatSeconds(command.timeout), command.line]
        }
        return Table(title: "Hooks", headers: ["hook", "runs", "when", "deadline", "command"], rows: rows)
    }

    /// The predicted assignment: which slot runs which unit when, and every estimate with its source.
    public static func planTables(_ p: PreparedRun) -> [Table] {
        // Predicted work stealing: idle slots at the end take over tests that running units have not started.
        var handed: [Int: Int] = [:]
        for u in p.plan.units { if let from = u.takenFrom { handed[from, default: 0] += u.unit.testCount } }
        let taken = handed.values.reduce(0, +)
        let units = p.plan.units.sorted { ($0.start, $0.slot) < ($1.start, $1.slot) }.map { u in
            var what = u.unit.suiteDescriptions.joined(separator: ", ")
            if let from = u.takenFrom { what += " — takes over from unit \(from)" }
            if let n = handed[u.unit.id] { what += " — hands \(n) test\(n == 1 ? "" : "s") over to idle slots" }
            return [String(u.unit.id), String(u.slot), String(format2: u.start), String(format2: u.end),
                    String(format2: u.unit.estimate), what]
        }
        let classes = p.items.sorted { $0.estimate > $1.estimate }.map { item in
            [item.suite.description, item.framework.rawValue, String(item.tests.count), String(format2: item.estimate),
             item.source.description]
        }
        let summary = Table(title: "Plan", headers: ["tests", "classes", "units", "slots", "work (s)", "LB (s)", "predicted (s)",
                                                     "taken over"],
                            rows: [[String(p.testCount), String(p.items.count), String(p.plan.units.count),
                                    String(p.slots), String(format2: p.plan.totalWork), String(format2: p.plan.lowerBound),
                                    String(format2: p.plan.predictedMakespan), String(taken)]],
                            numeric: [0, 1, 2, 3, 4, 5, 6, 7])
        return (selectiveTable(p).map { [$0] } ?? []) + [
            summary,
            Table(title: "Units (predicted)", headers: ["unit", "slot", "start", "end", "estimate", "classes"], rows: units,
                  numeric: [0, 1, 2, 3, 4]),
            Table(title: "Estimates", headers: ["class", "framework", "tests", "estimate (s)", "source"], rows: classes,
                  numeric: [2, 3]),
        ]
    }

    /// `--selective`: every test target on every destination, whether it runs, and why.
    public static func selectiveTable(_ p: PreparedRun) -> Table? {
        guard let selective = p.selectiveReport else { return nil }
        let rows = selective.decisions.sorted { ($0.destination, $0.target) < ($1.destination, $1.target) }.map { d in
            [d.target, d.destination, d.skipped ? "skip" : "run", d.reason,
             [.unchanged, .changed].contains(d.cause) ? SelectiveDecision.observedSummary(d.observed) : ""]
        } + selective.notes.map { ["—", "", "run", $0, ""] }
        let skipped = selective.skipped.count
        return Table(title: "Selective: \(selective.decisions.count - skipped) test target\(selective.decisions.count - skipped == 1 ? "" : "s") run, \(skipped) skipped",
                     headers: ["test target", "destination", "", "why", "run-time inputs (of that pass)"], rows: rows)
    }

    /// `fanout plan --shards N`: how the work splits across N CI jobs (each job then plans its own slots).
    public static func shardTable(_ p: PreparedRun) -> Table? {
        guard let shards = p.shards else { return nil }
        let loads = ShardPlanner.loads(shards)
        let ideal = loads.reduce(0, +) / Double(max(1, shards.count))
        let rows = shards.enumerated().map { i, items in
            [String(i + 1) + "/" + String(shards.count), String(items.count), String(items.reduce(0) { $0 + $1.tests.count }),
             String(format2: loads[i]), ideal > 0 ? String(format2: loads[i] / ideal) : "—"]
        }
        let worst = ideal > 0 ? (loads.max() ?? 0) / ideal : 1
        return Table(title: "Shards: the longest is \(String(format2: worst)) × an even split of \(String(format2: ideal * Double(shards.count))) s",
                     headers: ["shard", "items", "tests", "estimate (s)", "× even"], rows: rows, numeric: [1, 2, 3, 4])
    }

    /// `fanout list`: classes with their tests and estimates.
    public static func listTable(_ p: PreparedRun, showTests: Bool) -> Table {
        var rows: [[String]] = []
        for item in p.items.sorted(by: { ($0.framework, $0.suite) < ($1.framework, $1.suite) }) {
            rows.append([item.suite.description, item.framework.rawValue, String(item.tests.count),
                         String(format2: item.estimate), item.source.description])
            if showTests { rows += item.tests.map { ["  " + $0, "", "", "", ""] } }
        }
        return Table(title: "\(p.items.count) classes, \(p.testCount) tests",
                     headers: ["class", "framework", "tests", "estimate (s)", "source"], rows: rows, numeric: [2, 3])
    }

    /// `fanout history flaky`: tests by flake rate (runs where they failed, then passed on a retry) over recent runs.
    public static func flakyTable(path: String, runs: Int) throws(FanoutError) -> Table {
        guard FileManager.default.fileExists(atPath: path) else {
            throw FanoutError("no timing history at \(path)", hint: "Run `fanout run` first, or point --history at the file.")
        }
        do {
            let (store, _) = try HistoryStore.open(at: path)
            // Order-dependent tests are listed apart (`orderDependentTable`), not as flakes.
            let dependent = Set(try store.orderDependentTests(runs: runs).map { "\($0.destination)|\($0.test)" })
            let rows = try store.flakyTests(runs: runs).filter { !dependent.contains("\($0.destination)|\($0.test)") }.map { f in
                let s = f.score, i = s.interval
                return [f.test.description, f.destination, "\(String(format1: s.rate * 100))%",
                        "\(String(format1: i.lowerBound * 100))-\(String(format1: i.upperBound * 100))%",
                        "\(s.failures)/\(s.attempts)", String(f.flakyRuns), String(s.mixedProducts), String(f.runs),
                        s.lastSeen.map(Self.day) ?? "-"]
            }
            return Table(title: "Flaky tests over the last \(runs) runs: failures per attempt on builds the test also "
                            + "passed on (95 % interval), fail-then-pass runs, builds that gave both verdicts",
                         headers: ["test", "destination", "flake rate", "interval", "failed/attempts", "flaky runs",
                                   "mixed builds", "runs", "last failed"], rows: rows,
                         numeric: [2, 3, 4, 5, 6, 7])
        } catch {
            throw FanoutError("cannot read the timing history at \(path): \(error)", exitCode: .infrastructure)
        }
    }

    /// `fanout history flaky`: tests found order-dependent (not flaky) over recent runs, with their polluters; nil
    /// when there are none.
    public static func orderDependentTable(path: String, runs: Int) throws(FanoutError) -> Table? {
        do {
            let (store, _) = try HistoryStore.open(at: path)
            let rows = try store.orderDependentTests(runs: runs).map { o in
                [o.test.description, o.destination, String(o.runs),
                 o.polluters.isEmpty ? "not narrowed down: fanout bisect '\(o.test)' --run \(o.lastRun)" : o.polluters.joined(separator: " + "),
                 Self.day(o.lastSeen)]
            }
            guard !rows.isEmpty else { return nil }
            return Table(title: "Order-dependent tests over the last \(runs) runs: they fail after other tests leave state "
                            + "behind in their process (not flaky: fix the polluter); their runs are not counted as flakes",
                         headers: ["test", "destination", "runs", "polluters", "last seen"], rows: rows, numeric: [2])
        } catch {
            throw FanoutError("cannot read the timing history at \(path): \(error)", exitCode: .infrastructure)
        }
    }

    /// A date as `2026-11-26` (UTC).
    static func day(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// `fanout history show`: recent runs and per-class timing statistics.
    public static func historyTables(path: String, destination: String?, limit: Int) throws(FanoutError) -> [Table] {
        guard FileManager.default.fileExists(atPath: path) else {
            throw FanoutError("no timing history at \(path)", hint: "Run `fanout run` first, or point --history at the file.")
        }
        do {
            let (store, _) = try HistoryStore.open(at: path)
            let runs = try store.recentRuns(limit: limit).map { r in
                [r.runID, r.destinations.joined(separator: ","), String(r.counts.total), String(r.counts.failures),
                 r.wall.map { String(format2: $0) } ?? "-", r.makespan.map { String(format2: $0) } ?? "-",
                 r.lowerBound.map { String(format2: $0) } ?? "-", r.efficiency.map { String(format2: $0) } ?? "-",
                 String(r.exitCode)]
            }
            let classes = try store.classStats(destination: destination, limit: limit).map { c in
                [c.suite.description, c.destination, String(c.runs), String(format2: c.last), String(format2: c.p50),
                 String(format2: c.p80), String(format2: c.max)]
            }
            return [
                Table(title: "Recent runs", headers: ["run", "destinations", "tests", "failures", "wall", "makespan",
                                                      "LB", "makespan/LB", "exit"],
                      rows: runs, numeric: [2, 3, 4, 5, 6, 7, 8]),
                Table(title: "Classes (seconds)", headers: ["class", "destination", "runs", "last", "p50", "p80", "max"],
                      rows: classes, numeric: [2, 3, 4, 5, 6]),
            ]
        } catch {
            throw FanoutError("cannot read the timing history at \(path): \(error)", exitCode: .infrastructure)
        }
    }
}
