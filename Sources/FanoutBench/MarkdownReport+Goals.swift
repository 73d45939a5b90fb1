import Foundation

/// The goals BENCHMARKS.md checks, and the CI-step section.
extension MarkdownReport {

    struct Goal {
        var text: String
        var measured: String
        var met: Bool?
    }

    static func goals(suites: [SuiteResult], sims: [SimulationResult], mergeScale: MergeScaleResult? = nil) -> [Goal] {
        var out: [Goal] = []
        func suite(_ shape: SuiteShape) -> SuiteResult? { suites.first { $0.shape == shape } }
        /// makespan / LB of a Fanout row within `limit`: the median over its runs (their range shown).
        func bound(_ text: String, _ r: SuiteResult?, _ name: String, _ limit: Double, extra: String = "") {
            guard let r, let c = r.strategy(name), let mk = c.makespan, let lb = r.lowerBound(of: c),
                  let x = r.ratioSpread(c) else { return }
            // The ratio is the median of the rounds' own ratios; the times are those of the round of median wall,
            // whose own quotient is said too (they need not be the same round).
            out.append(Goal(text: text, measured: x.text(f3) + " (rounds' makespan / LB); the round of median wall: "
                                + "\(f2(mk)) s / \(f2(lb)) s = \(f3(mk / max(lb, 1e-9)))" + extra,
                            met: c.complete && x.median <= limit))
        }
        bound("lognormal suite, warm history, 8 slots: makespan ≤ 1.05 × LB", suite(.lognormal), "fanout", 1.05)
        bound("one-dominant-class suite, 8 slots: makespan ≤ 1.15 × method-level LB", suite(.dominant), "fanout", 1.15,
              extra: suite(.dominant).map { " (whole-class LB \(f2($0.classLowerBound)) s)" } ?? "")
        // Like with like: a prebuilt product (`--bundle` / `--skip-build`) and a package with its no-op build.
        for (fanoutName, swiftName, how) in [("fanout", "swift-test-parallel", "prebuilt: `fanout run --bundle` vs `swift test --skip-build --parallel`"),
                                             ("fanout-package", "swift-test-parallel-build", "on the package, no-op builds included: `fanout run --package` vs `swift test --parallel`"),
                                             ("fanout-cold", "swift-test-parallel", "first run, no history, prebuilt")] {
            var all: [String] = [], allFaster = true
            for r in suites {
                guard let f = r.strategy(fanoutName), let st = r.strategy(swiftName) else { continue }
                let x = speedups(st, over: f)
                all.append("\(r.shape.rawValue) \(f.complete && st.complete ? x.text(f2, unit: "×") : "incomplete")")
                allFaster = allFaster && f.complete && st.complete && x.verdict == "faster"
            }
            if !all.isEmpty {
                out.append(Goal(text: "faster than `swift test --parallel --num-workers 8` on every generated suite, \(how) (same run; "
                                    + "every round faster)",
                                measured: all.joined(separator: ", "), met: allFaster))
            }
        }
        // Work stealing: a first run with no history, and a history that is wrong.
        for shape in [SuiteShape.skewed, .dominant] {
            bound("\(shape.rawValue) suite, first run (no history), 8 slots: makespan ≤ 1.25 × method-level LB",
                  suite(shape), "fanout-cold", 1.25)
        }
        for shape in [SuiteShape.skewed, .dominant] {
            bound("\(shape.rawValue) suite, history deliberately wrong (class and test times shuffled), 8 slots: makespan ≤ 1.15 × LB",
                  suite(shape), "fanout-shuffled", 1.15)
        }
        // A slow test is not a hung one: on 8 slots sharing the cores, the mixed suite's computing tests take several
        // times their serial time without a word of output, and every Fanout run must still pass every test.
        if let r = suite(.mixed) {
            let runs = r.cases.filter { $0.isFanout && $0.fleet == "local" }
            if !runs.isEmpty {
                let incomplete = runs.filter { !$0.complete }.map(\.label)
                out.append(Goal(text: "mixed suite (waiting + computing), \(r.slots) slots on \(r.cores ?? 0) cores: every Fanout run "
                                    + "passes every test, none stopped by a time limit",
                                measured: "\(runs.count - incomplete.count)/\(runs.count) runs complete"
                                    + (incomplete.isEmpty ? "" : " (INCOMPLETE: \(incomplete.joined(separator: "; ")))"),
                                met: incomplete.isEmpty))
            }
        }
        // Computing and waiting classes together: warm, within 10 % of the CPU-aware bound; and what packing buys.
        if let r = suite(.mixed) {
            bound("mixed suite, warm history, \(r.slots) slots on \(r.cores ?? 0) cores: makespan ≤ 1.10 × the CPU-aware LB",
                  r, "fanout", 1.10, extra: r.strategy("fanout-no-packing").flatMap { r.ratioSpread($0) }
                      .map { "; CPU-aware packing off: " + $0.text(f3) } ?? "")
        }
        if let r = suite(.manySmall), let f = r.fanout("local"),
           let st = r.cases.first(where: { $0.strategy == "swift-test-parallel" }) {
            let x = speedups(st, over: f)
            out.append(Goal(text: "at least 2× faster than `swift test --parallel` on the many-small-tests suite (every round)",
                            measured: "\(x.text(f2, unit: "×")) (round by round); the rounds of median wall: \(f2(st.wall)) s / "
                                + "\(f2(f.wall)) s = \(f2(st.wall / max(f.wall, 1e-9)))×", met: f.complete && x.min >= 2))
        }
        if let s = sims.first(where: { $0.failedAgents == 0 }) ?? sims.first {
            let p = s.schedulerInitSeconds + s.planSeconds
            out.append(Goal(text: "simulation: planning \(s.classes) classes for \(s.agents * s.slotsPerAgent) slots ≤ 1 s",
                            measured: "\(f3(p)) s", met: p <= 1))
        }
        if let s = sims.first(where: { $0.failedAgents == 0 }) {
            out.append(Goal(text: "simulation: makespan ≤ 1.05 × LB with \(Int(s.noise * 100)) % duration noise",
                            measured: f3(s.ratio), met: s.ratio <= 1.05))
        }
        if let s = sims.first(where: { $0.failedAgents > 0 }) {
            out.append(Goal(text: "simulation: every test accounted for when \(Int(s.failFraction * 100)) % of agents fail",
                            measured: "\(s.itemsCompleted)/\(s.classes) once, \(s.itemsCompletedTwice) twice, "
                                + "\(s.itemsMissing) missing (\(s.requeuedItems) re-queued); makespan / LB \(f3(s.ratio))",
                            met: s.accountedFor))
        }
        for r in suites {
            guard let ci = r.ci else { continue }
            out.append(Goal(text: "\(r.shape.rawValue) suite as \(ci.shards) CI jobs × \(ci.slotsPerShard) slots, planned from shared "
                                + "history: slowest job's makespan ≤ 1.10 × (total work / \(ci.shards * ci.slotsPerShard) slots)",
                            measured: "\(f2(ci.maxMakespan)) s / \(f2(ci.evenEnd)) s = \(f3(ci.ratio))"
                                + (ci.complete ? "" : " (INCOMPLETE: not every test ran once and passed)"),
                            met: ci.complete && ci.ratio <= 1.10))
        }
        if let m = mergeScale {
            out.append(Goal(text: "`fanout report merge` of \(m.shards) shard reports × \(m.testsPerShard.formatted()) tests < 2 s",
                            measured: "\(f2(m.median)) s (median of \(m.walls.count))" + (m.complete ? "" : " (INCOMPLETE)"),
                            met: m.complete && m.median < 2))
        }
        return out
    }

    /// The suite as CI jobs, and merging large shard reports.
    static func ciSection(suites: [SuiteResult], mergeScale: MergeScaleResult?) -> String {
        let runs = suites.compactMap { r in r.ci.map { (r, $0) } }
        guard !runs.isEmpty || mergeScale != nil else { return "" }
        var s = """
            ## Fanout as a CI step

            `fanout run --shard I/N` in N CI jobs: each job computes the same split from the same history and runs its \
            shard on its own slots. Here the jobs run one after the other on this machine (as N machines would run them \
            at once), from the suite's warm history with `--no-record`, so every job sees the same history; then \
            `fanout report merge` folds their reports into one. *even split*: the test time of all the shards together \
            divided by all their slots: where a perfect split over every slot of every job would end.


            """
        for (r, ci) in runs {
            s += "**\(r.shape.rawValue)**, \(ci.shards) jobs × \(ci.slotsPerShard) slots:\n\n"
            s += "| job | makespan | test time | tests passed | exit |\n|---|---|---|---|---|\n"
            for run in ci.runs {
                s += "| \(run.index)/\(ci.shards) | \(f2(run.makespan)) s | \(f2(run.testTime)) s | \(run.testsPassed)/\(run.tests) | "
                    + "\(run.exitCode.map(String.init) ?? "?") |\n"
            }
            s += "\nSlowest job \(f2(ci.maxMakespan)) s; even split \(f2(ci.totalWork)) s / \(ci.shards * ci.slotsPerShard) = "
                + "\(f2(ci.evenEnd)) s (\(f3(ci.ratio)) ×). Merged: \(ci.mergedTests)/\(ci.testsExpected) tests, once each, in "
                + "\(f2(ci.mergeSeconds)) s (exit \(ci.mergeExitCode.map(String.init) ?? "?")).\n\n"
        }
        if let m = mergeScale {
            s += """
                **Merging large shards** (`fanout-bench merge-scale`): \(m.shards) synthetic shard reports of \
                \(m.testsPerShard.formatted()) tests each (1 in 50 failing, with message and place; \
                \(m.inputBytes / 1_000_000) MB of report.json together) merged by `fanout report merge` into report.json, \
                junit.xml, summary.md and report.html (\(m.outputBytes / 1_000_000) MB): \(m.walls.map { f2($0) + " s" }.joined(separator: ", ")) \
                over \(m.walls.count) runs, median \(f2(m.median)) s; \(m.mergedTests.formatted()) tests in the merged report, \
                exit \(m.exitCode.map(String.init) ?? "?") (the failures were reported).


                """
        }
        return s
    }
}
