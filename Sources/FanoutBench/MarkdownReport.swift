import Foundation

/// BENCHMARKS.md and the ratio chart, written from the results files of one benchmark run.
enum MarkdownReport {
    static func fleetName(_ fleet: String, _ r: SuiteResult) -> String {
        fleet == "local" ? "\(r.slots) local slots" : "SSH, \(r.fleetDescription ?? "fleet")"
    }

    /// Alternative wall / Fanout wall on that fleet: above 1 means Fanout was faster.
    static func speedup(_ alt: CaseResult, over fanout: CaseResult) -> Double { alt.wall / max(fanout.wall, 1e-9) }

    static func suiteTable(_ r: SuiteResult) -> String {
        var s = "| fleet | strategy | wall | makespan | makespan / LB | overhead (wall − LB) | processes | tests passed | wall / Fanout's |\n"
        s += "|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
        for fleet in ["local", "ssh"] {
            let rows = r.cases.filter { $0.fleet == fleet }
            guard !rows.isEmpty else { continue }
            for c in rows {
                let isFanout = c.strategy == "fanout"
                var ratio = "—"
                if isFanout, c.complete, let best = r.alternatives(fleet).min(by: { $0.wall < $1.wall }) {
                    ratio = "1.00 (best alternative: \(f2(speedup(best, over: c)))×)"
                } else if !c.isFanout, c.complete, let pair = r.fanoutPair(of: c), pair.complete {
                    ratio = f2(speedup(c, over: pair)) + "×" + (pair.strategy == "fanout" ? "" : " (vs `--package`)")
                }
                let name = c.isFanout ? "**\(c.label)**" : c.label
                s += "| \(fleetName(fleet, r)) | \(name) | \(f2(c.wall)) s | "
                    + (c.makespan.map { f2($0) + " s" } ?? "—") + " | "
                    + (c.makespan.map { f3($0 / r.methodLowerBound) } ?? "—") + " | "
                    + "\(f2(c.wall - r.methodLowerBound)) s | " + (c.processes.map(String.init) ?? "—") + " | "
                    + "\(testsCell(c)) | \(ratio) |\n"
            }
        }
        let notes = r.cases.compactMap { c in c.note.map { "- \(c.label) (\(c.fleet)): \(String($0.prefix(300)))" } }
        if !notes.isEmpty { s += "\nNotes:\n" + notes.joined(separator: "\n") + "\n" }
        return s
    }

    /// `546/546`, or a row that is no speed figure: not every test ran and passed, or the command failed.
    static func testsCell(_ c: CaseResult) -> String {
        if c.complete { return "\(c.testsPassed)/\(c.testsExpected)" }
        return "**INCOMPLETE**: \(c.testsPassed)/\(c.testsExpected) passed" + (c.exitCode.map { ", exit \($0)" } ?? "")
    }

    static func suiteSection(_ r: SuiteResult) -> String {
        var s = "### \(r.shape.rawValue) (seed \(r.seed))\n\n"
        s += "\(r.summary). \(r.classes) classes, \(r.methods) test methods; the generator's waits add up to "
            + "\(f2(r.nominalSerial)) s, the reference run measured \(f2(r.referenceSerial)) s of test time "
            + "(longest class \(f2(r.longestClass)) s, longest method \(f3(r.longestMethod)) s). "
            + (r.shape.computes ? "The methods compute, so at most \(min(r.slots, r.cores ?? r.slots)) run at once on this machine's "
                + "\(r.cores ?? 0) cores whatever the slots: the LB divides by that (its reference run used one slot). It is an "
                + "estimate, not a strict bound: computing tests run a few % faster or slower from one run to the next, so a "
                + "ratio slightly below 1 can happen. " : "")
            + "**LB at \(r.slots) slots, method level: \(f2(r.methodLowerBound)) s** (whole classes: "
            + "\(f2(r.classLowerBound)) s). Build: \(f1(r.buildSeconds)) s, not counted."
            + (r.loadAverage.map { " Load average (1 min) when its cases started / ended: \($0.map(f2).joined(separator: " / "))." } ?? "")
            + "\n\n"
        s += suiteTable(r)
        if let d = r.deploy { s += "\nDeployment to the SSH fleet (not in the walls above): \(d).\n" }
        for fleet in ["local", "ssh"] {
            guard let fanout = r.fanout(fleet), fanout.complete,
                  let best = r.alternatives(fleet).min(by: { $0.wall < $1.wall }) else { continue }
            s += "\n\(fleetName(fleet, r)): Fanout \(f2(fanout.wall)) s against the best alternative, \(best.label), "
                + "\(f2(best.wall)) s: **\(f2(speedup(best, over: fanout)))×**."
        }
        return s + "\n"
    }

    /// Where Fanout stands against the best alternative, and what it spends outside the test processes.
    static func readingSection(_ suites: [SuiteResult]) -> String {
        var s = """
            ### Reading the figures

            The generated methods wait for exactly the same time on every run, so the last run's timings are perfect \
            estimates. That is the best case for a static longest-first split from history: where no class needs \
            splitting it balances as well as Fanout's planner, and what separates the two is Fanout's own cost outside \
            the test processes (wall − makespan: starting, discovery, planning, then history and reports). This \
            benchmark does not measure timings that drift between runs or classes without history.

            | suite | fleet | Fanout: wall − makespan | best alternative | its wall − Fanout's wall |
            |---|---|---:|---|---:|

            """
        for r in suites {
            for fleet in ["local", "ssh"] {
                guard let f = r.fanout(fleet), let mk = f.makespan,
                      let best = r.alternatives(fleet).min(by: { $0.wall < $1.wall }) else { continue }
                s += "| \(r.shape.rawValue) | \(fleetName(fleet, r)) | \(f2(f.wall - mk)) s | \(best.label) | "
                    + "\(best.wall >= f.wall ? "+" : "")\(f2(best.wall - f.wall)) s |\n"
            }
        }
        return s + "\n"
    }

    static func simulationTable(_ sims: [SimulationResult]) -> String {
        guard let first = sims.first else { return "" }
        var s = "\(first.classes) classes over \(first.agents) agents × \(first.slotsPerAgent) slots "
            + "(\(first.agents * first.slotsPerAgent) slots); \(first.estimateModel); \(first.overhead * 1000) ms per "
            + "process start. The real `Scheduler` (FanoutCore) hands out every unit; the clock is virtual.\n\n"
        s += "| case | planning: init + plan() (median of 3; fastest) | dispatch loop (next() calls) | slowest next() | units | makespan | LB | makespan / LB | every item exactly once | peak RSS |\n"
        s += "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|\n"
        for r in sims {
            let name = r.failedAgents == 0 ? "noise \(Int(r.noise * 100)) %"
                : "noise \(Int(r.noise * 100)) %, \(r.failedAgents) agents (\(Int(r.failFraction * 100)) %) fail; \(r.requeuedItems) items re-queued"
            s += "| \(name) | \(f3(r.schedulerInitSeconds)) + \(f3(r.planSeconds)) = **\(f3(r.schedulerInitSeconds + r.planSeconds)) s**; \(f3(r.planningMinSeconds)) s | "
                + "\(f3(r.dispatchLoopSeconds)) s (\(r.nextCalls)) | \(f3(r.slowestNextMilliseconds)) ms | \(r.units) | "
                + "\(f2(r.makespan)) s | \(f2(r.lowerBound)) s | **\(f3(r.ratio))** | "
                + "\(r.accountedFor ? "yes (\(r.itemsCompleted)/\(r.classes))" : "NO: \(r.itemsMissing) missing, \(r.itemsCompletedTwice) twice") | "
                + "\(f1(r.peakRSSMiB)) MiB |\n"
        }
        return s
    }

    static func fleetScaleTable(_ f: FleetScaleResult) -> String {
        var s = "\(f.agents) real sshd agents on 127.0.1.1-\(f.agents) × \(f.slotsPerAgent) slot\(f.slotsPerAgent == 1 ? "" : "s"), "
            + "started by `Agents/local-fleet/up.sh \(f.agents)` in \(f2(f.upSeconds)) s.\n\n"
        s += "| measure | value |\n|---|---:|\n"
        s += "| `fanout agents check` over all \(f.agents) agents at once (connect, handshake, auth, probe; wall) | \(f2(f.checkWall)) s |\n"
        s += "| connection setup per agent (median / max of \(f.connectMilliseconds.count)) | "
            + "\(f1(medianOf(f.connectMilliseconds))) / \(f1(f.connectMilliseconds.max() ?? 0)) ms |\n"
        if f.dispatchP50Milliseconds.isEmpty {
            s += "| dispatch latency on an open connection | not measured (see the problem below) |\n"
        } else {
            s += "| dispatch latency on an open connection, p50 (median over agents / worst agent) | "
                + "\(f2(medianOf(f.dispatchP50Milliseconds))) / \(f2(f.dispatchP50Milliseconds.max() ?? 0)) ms |\n"
            s += "| dispatch latency, p99 (median over agents / worst agent), \(f.latencyRuns) commands per agent, all agents at once | "
                + "\(f2(medianOf(f.dispatchP99Milliseconds))) / \(f2(f.dispatchP99Milliseconds.max() ?? 0)) ms |\n"
        }
        for p in f.problems ?? [] { s += "\n**Problem:** \(p)\n" }
        s += "\n| run | wall | makespan | LB (report) | units | tests passed | coordinator CPU (user + sys) | coordinator max RSS | deployed |\n"
        s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        for r in f.runs {
            s += "| \(r.suite), \(r.label) | \(f2(r.wall)) s | \(f2(r.makespan)) s | \(f2(r.lowerBound)) s | \(r.units) | "
                + "\(r.testsPassed)/\(r.testsExpected) | \(f2(r.coordinatorUserSeconds)) + \(f2(r.coordinatorSystemSeconds)) s | "
                + "\(f1(r.coordinatorMaxRSSMiB)) MiB | \(r.deployedBytes / 1024) KiB in \(f2(r.deploySeconds)) s |\n"
        }
        return s
    }

    // MARK: - Goals

    struct Goal {
        var text: String
        var measured: String
        var met: Bool?
    }

    static func goals(suites: [SuiteResult], sims: [SimulationResult], mergeScale: MergeScaleResult? = nil) -> [Goal] {
        var out: [Goal] = []
        func suite(_ shape: SuiteShape) -> SuiteResult? { suites.first { $0.shape == shape } }
        if let r = suite(.lognormal), let f = r.fanout("local"), let mk = f.makespan {
            out.append(Goal(text: "lognormal suite, warm history, 8 slots: makespan ≤ 1.05 × LB",
                            measured: "\(f2(mk)) s / \(f2(r.methodLowerBound)) s = \(f3(mk / r.methodLowerBound))",
                            met: f.complete && mk <= 1.05 * r.methodLowerBound))
        }
        if let r = suite(.dominant), let f = r.fanout("local"), let mk = f.makespan {
            out.append(Goal(text: "one-dominant-class suite, 8 slots: makespan ≤ 1.15 × method-level LB",
                            measured: "\(f2(mk)) s / \(f2(r.methodLowerBound)) s = \(f3(mk / r.methodLowerBound))"
                                + " (whole-class LB \(f2(r.classLowerBound)) s)",
                            met: f.complete && mk <= 1.15 * r.methodLowerBound))
        }
        // Like with like: a prebuilt product (`--bundle` / `--skip-build`) and a package with its no-op build.
        for (fanoutName, swiftName, how) in [("fanout", "swift-test-parallel", "prebuilt: `fanout run --bundle` vs `swift test --skip-build --parallel`"),
                                             ("fanout-package", "swift-test-parallel-build", "on the package, no-op builds included: `fanout run --package` vs `swift test --parallel`"),
                                             ("fanout-cold", "swift-test-parallel", "first run, no history, prebuilt")] {
            var all: [String] = [], allFaster = true
            for r in suites {
                guard let f = r.strategy(fanoutName), let st = r.strategy(swiftName) else { continue }
                let x = st.wall / max(f.wall, 1e-9)
                all.append("\(r.shape.rawValue) \(f.complete && st.complete ? f2(x) + "×" : "incomplete")")
                allFaster = allFaster && f.complete && st.complete && x > 1
            }
            if !all.isEmpty {
                out.append(Goal(text: "faster than `swift test --parallel --num-workers 8` on every generated suite, \(how) (same run)",
                                measured: all.joined(separator: ", "), met: allFaster))
            }
        }
        // Work stealing: a first run with no history, and a history that is wrong.
        for shape in [SuiteShape.skewed, .dominant] {
            if let r = suite(shape), let c = r.strategy("fanout-cold"), let mk = c.makespan {
                out.append(Goal(text: "\(shape.rawValue) suite, first run (no history), 8 slots: makespan ≤ 1.25 × method-level LB",
                                measured: "\(f2(mk)) s / \(f2(r.methodLowerBound)) s = \(f3(mk / r.methodLowerBound))",
                                met: c.complete && mk <= 1.25 * r.methodLowerBound))
            }
        }
        for shape in [SuiteShape.skewed, .dominant] {
            if let r = suite(shape), let c = r.strategy("fanout-shuffled"), let mk = c.makespan {
                out.append(Goal(text: "\(shape.rawValue) suite, history deliberately wrong (class and test times shuffled), 8 slots: makespan ≤ 1.15 × LB",
                                measured: "\(f2(mk)) s / \(f2(r.methodLowerBound)) s = \(f3(mk / r.methodLowerBound))",
                                met: c.complete && mk <= 1.15 * r.methodLowerBound))
            }
        }
        if let r = suite(.manySmall), let f = r.fanout("local"),
           let st = r.cases.first(where: { $0.strategy == "swift-test-parallel" }) {
            let x = st.wall / max(f.wall, 1e-9)
            out.append(Goal(text: "at least 2× faster than `swift test --parallel` on the many-small-tests suite",
                            measured: "\(f2(st.wall)) s / \(f2(f.wall)) s = \(f2(x))×", met: f.complete && x >= 2))
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
            out.append(Goal(text: "`fanout report merge` of \(m.shards) × \(m.testsPerShard.formatted()) -test shard reports < 2 s",
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

    // MARK: - The document

    struct Machine: Codable, Sendable {
        var cores: Int
        var memoryGiB: Double
        var cpu: String
        var os: String
        var swift: String
        var date: String
        var commit: String
    }

    static func document(_ run: BenchRun) -> String {
        document(suites: run.suites, sims: run.sims, fleet: run.fleet, machine: run.machine, command: run.command,
                 demo: run.demo, elapsed: run.elapsed, mergeScale: run.mergeScale)
    }

    /// What a first run or a wrong history costs where stealing cannot help: a long single method that the estimates
    /// called short starts late, and no schedule that does not know can start it earlier.
    static func stealingLimits(_ suites: [SuiteResult]) -> String {
        var rows: [String] = []
        for r in suites where !r.shape.computes {
            for name in ["fanout-cold", "fanout-shuffled"] {
                guard let c = r.strategy(name), let mk = c.makespan else { continue }
                let greedy = r.methodLowerBound + r.longestMethod
                rows.append("| \(r.shape.rawValue) | \(c.label) | \(f3(mk / r.methodLowerBound)) | \(f3(r.longestMethod)) s "
                    + "(\(Int((r.longestMethod / max(r.methodLowerBound, 1e-9) * 100).rounded())) % of LB) | \(f3(greedy / r.methodLowerBound)) |")
            }
        }
        guard !rows.isEmpty else { return "" }
        let lognormalLongest = suites.first { $0.shape == .lognormal }
            .map { "\(f2($0.longestMethod)) s, \(Int(($0.longestMethod / max($0.methodLowerBound, 1e-9) * 100).rounded())) %" } ?? "—"
        return """

            **Without good estimates.** On a first run, or with a wrong history, the estimates do not say which classes \
            are long. Work stealing splits a long class across idle slots at test boundaries, so classes of many methods \
            (skewed, dominant) end close to the bound. It cannot split a single long method: when the estimates call a \
            class with one long method short, it starts late, and a schedule that does not know cannot avoid LB + that \
            method (list scheduling at method granularity ends by LB + the longest method at worst). That is why the \
            goals for these runs are set on the skewed and dominant suites; the lognormal suite's longest method is \
            \(lognormalLongest) of its LB, and its warm runs are held to 1.05 × LB instead.

            | suite | run | makespan / LB | longest method | (LB + longest method) / LB: where greedy at method level ends at worst, start-up costs aside |
            |---|---|---:|---:|---:|
            \(rows.joined(separator: "\n"))

            """
    }

    // MARK: - README's figures

    static let readmeBegin = "<!-- bench:begin: generated by `fanout-bench report` from docs/bench-results.json; do not edit -->"
    static let readmeEnd = "<!-- bench:end -->"

    /// The short table README shows: ratios from the last full benchmark run.
    static func readmeFigures(_ run: BenchRun) -> String {
        var s = "| suite, 8 local slots | warm: makespan / LB | first run: makespan / LB | wrong history: makespan / LB "
            + "| `swift test --parallel` wall / Fanout's: prebuilt | on the package (no-op builds) |\n"
        s += "|---|---:|---:|---:|---:|---:|\n"
        for r in run.suites {
            func ratio(_ name: String) -> String {
                guard let c = r.strategy(name) else { return "—" }
                guard c.complete, let mk = c.makespan else { return "incomplete" }
                return f3(mk / r.methodLowerBound)
            }
            func versus(_ alt: String, _ fanout: String) -> String {
                guard let a = r.strategy(alt), let f = r.strategy(fanout) else { return "—" }
                guard a.complete, f.complete else { return "incomplete" }
                return f2(speedup(a, over: f)) + "×"
            }
            s += "| \(r.shape.rawValue) (\(r.methods) tests\(r.shape.computes ? ", computing" : ", waiting")) | "
                + "\(ratio("fanout")) | \(ratio("fanout-cold")) | \(ratio("fanout-shuffled")) | "
                + "\(versus("swift-test-parallel", "fanout")) | \(versus("swift-test-parallel-build", "fanout-package")) |\n"
        }
        if let sim = run.sims.first(where: { $0.failedAgents > 0 }) ?? run.sims.first {
            s += "\nSimulation (virtual clock): \(sim.classes) classes on \(sim.agents * sim.slotsPerAgent) slots planned in "
                + "\(f3(sim.schedulerInitSeconds + sim.planSeconds)) s, \(f3(sim.ratio)) × LB"
                + (sim.failedAgents > 0 ? " with \(Int(sim.failFraction * 100)) % of the agents failing, every test "
                    + (sim.accountedFor ? "accounted for once" : "NOT accounted for") : "") + ".\n"
        }
        let m = run.machine
        s += "\nLB: the method-level lower bound (no schedule, not even one process per test, ends sooner). Measured by "
            + "`\(run.command)` on \(m.date), \(m.commit), \(m.cores) cores; the generated suites sleep except cpu-bound. "
            + "Every case, the fleet and the alternatives: [BENCHMARKS.md](BENCHMARKS.md).\n"
        return s
    }

    /// README with the text between the markers replaced.
    static func replacingFigures(in readme: String, with figures: String) throws -> String {
        guard let begin = readme.range(of: readmeBegin), let end = readme.range(of: readmeEnd),
              begin.upperBound <= end.lowerBound else {
            throw BenchError("README has no generated figures section: put \(readmeBegin) and \(readmeEnd) where they go")
        }
        return String(readme[..<begin.upperBound]) + "\n" + figures + String(readme[end.lowerBound...])
    }

    static func document(suites: [SuiteResult], sims: [SimulationResult], fleet: FleetScaleResult?, machine m: Machine,
                         command: String, demo: String?, elapsed: String?, mergeScale: MergeScaleResult? = nil) -> String {
        var s = """
            # Benchmarks

            Generated by `\(command)` (fixed seeds; \(elapsed.map { "the whole benchmark took \($0)" } ?? "")). \
            Do not edit by hand: run it again.

            **Machine:** \(m.cores) cores (\(m.cpu)), \(f1(m.memoryGiB)) GiB memory, \(m.os), \(m.swift). \
            **Date:** \(m.date). **Fanout:** \(m.commit).

            Every case below ran for real in the same benchmark run, one after the other on this machine. **The generated \
            suites sleep**: their test methods *wait* (usleep) instead of computing, so that 8 slots on 2 cores measure \
            scheduling rather than CPU contention, except **cpu-bound**, whose methods compute (a hash loop) so that 8 \
            slots on 2 cores cannot all run at once (its LB divides the work by the cores, not the slots).

            ## The goals


            """
        s += "| goal | measured | met |\n|---|---|---|\n"
        for g in goals(suites: suites, sims: sims, mergeScale: mergeScale) {
            s += "| \(g.text) | \(g.measured) | \(g.met.map { $0 ? "yes" : "**no**" } ?? "—") |\n"
        }
        s += stealingLimits(suites)
        s += """

            ![Fanout's speed-up over each alternative](docs/bench-ratios.svg)

            ## Generated suites × strategies

            Each suite is generated from its seed by `fanout-bench generate`, built once with `swift build --build-tests`, \
            and then run by every strategy from the same test binary:

            - **Fanout**: `fanout run --bundle BIN --slots 8 --history H` after two warm-up runs that fill the timing \
            history (on the fleet: `--config fleet.yml`, after one run that deploys the product).
            - **Fanout, first run (no history)**: the same with a history file that does not exist yet (and `--no-record`, \
            so every repeat is a first run): estimates are guesses, so work stealing and first-run method groups do the work.
            - **Fanout, wrong history**: the warm history with the recorded class times shuffled between classes and the \
            test times between tests (`--no-record`, so it stays wrong).
            - **Fanout, `fanout run --package`**: as a user runs it on a package, its no-op `swift build` included; compared \
            with `swift test --parallel` with its no-op build included (like with like).
            - **split by count**: 8 shards with equal class counts, dealt round-robin in discovery order; one process per \
            shard (`BIN Mod.A,Mod.B,…`), all 8 at once.
            - **split by name**: 8 shards of equal class counts over contiguous ranges of sorted class names.
            - **static longest-first (history)**: classes sorted by their duration in the last warm-up run's report \
            (`classes[].actual`) into the least-loaded of 8 shards (LPT), as CI timing splitters do.
            - **`swift test --parallel --num-workers 8`** (`--skip-build`, the pair of `--bundle`; and without it, its \
            no-op build included, the pair of `--package`): one process per test method. It needs the package and its \
            build tree, so it runs locally only.

            A row whose tests did not all run and pass, or whose command did not exit 0, says **INCOMPLETE** and is no \
            speed figure: both runners' exit codes and test counts (Fanout's report, `swift test`'s xUnit file) are checked.

            Over SSH the static shards run as `ssh agent 'exec BIN selector'` (OpenSSH client, the fleet's key and \
            known_hosts, `StrictHostKeyChecking=yes`), shard i on agent i mod 4, after the binary was copied to every \
            agent with scp. The agents run with the suite's build tree hidden (`up.sh --hide`), like remote hosts.

            **Definitions.** *wall*: from starting the command (for static shards: from listing the tests, which a \
            splitter needs) to its end; builds excluded. *makespan*: first test process start to last test process end \
            (Fanout: `timing.makespan` of its report; `swift test` does not tell). *LB*: max(total method time / 8, \
            longest method) from the per-method durations of the last warm-up run: no schedule, not even one that \
            splits every class into single methods, ends sooner. *overhead*: wall − LB, everything that is not \
            test time spread perfectly over the slots (process starts, listing, connections, imbalance). \
            *wall / Fanout's*: the alternative's wall divided by Fanout's on the same fleet (above 1: Fanout was faster); \
            on Fanout's row, the same figure for the best alternative.


            """
        for r in suites { s += suiteSection(r) + "\n" }
        if !suites.isEmpty { s += readingSection(suites) }
        if !sims.isEmpty {
            s += "## Simulation at scale (virtual clock)\n\n`fanout-bench simulate` (see its `--help`).\n\n"
            s += simulationTable(sims)
            s += """

                Where the planning time goes (\(sims[0].failedAgents == 0 ? "first row" : "first case")): \
                `Scheduler.init` takes \(f3(sims[0].schedulerInitSeconds)) s, of which predicting plain longest-first's \
                end is \(f3(sims[0].longestFirstMakespanSeconds)) s; on items already in longest-first order the same init \
                takes \(f3(sims[0].initPresortedSeconds)) s, so its sort (of indices, by estimate) costs about \
                \(f3(sims[0].schedulerInitSeconds - sims[0].initPresortedSeconds)) s (sorting bare (estimate, index) \
                keys: \(f3(sims[0].sortKeysSeconds)) s). `plan()` takes \(f3(sims[0].planSeconds)) s for \
                \(sims[0].units) units; with `fillWindow` 1 (a pull looks at one queued item to fill its batch, default \
                256) it takes \(f3(sims[0].planFillWindow1Seconds)) s.

                *planning*: `Scheduler.init` (sorting the items longest first and predicting plain longest-first's end) \
                plus `plan()` (the whole schedule on a virtual clock, every slot free at 0): what a run pays before its \
                first unit. *LB*: max(total actual time / slots, longest item), where a failed agent's slots count only \
                until it failed (a valid lower bound: the work it lost is not counted as capacity). Agents fail at random \
                times in 5-90 % of the predicted makespan; what their units finished stays done, the rest is re-queued.


                """
        }
        s += ciSection(suites: suites, mergeScale: mergeScale)
        if let fleet {
            s += "## Coordinator scale: \(fleet.agents) SSH agents on this machine\n\n`fanout-bench fleet-scale` (see its `--help`).\n\n"
            s += fleetScaleTable(fleet)
            s += """

                The coordinator's CPU and memory come from `/usr/bin/time -v fanout run …`; the test processes run \
                under the agents' sshd, not in the coordinator. All \(fleet.agents) agents and the coordinator share \
                this machine's \(m.cores) cores.


                """
        }
        if let demo, !demo.isEmpty {
            s += "## The demo suite (scripts/bench.sh without --full)\n\n```\n\(demo.trimmingCharacters(in: .whitespacesAndNewlines))\n```\n"
        }
        return s
    }

    // MARK: - The chart

    /// A horizontal bar per (suite, fleet, alternative): the alternative's wall / Fanout's wall.
    static func svg(suites: [SuiteResult]) -> String {
        struct Bar { var group: String; var label: String; var value: Double; var color: String }
        let colors = ["count": "#8da0cb", "name": "#66c2a5", "timings": "#fc8d62", "swift-test-parallel": "#e78ac3"]
        var bars: [Bar] = []
        for r in suites {
            for fleet in ["local", "ssh"] {
                guard let f = r.fanout(fleet), f.complete else { continue }
                for c in r.alternatives(fleet) {
                    let sshName = (r.fleetDescription?.components(separatedBy: " on ").first).map { "SSH, \($0)" } ?? "SSH"
                    bars.append(Bar(group: "\(r.shape.rawValue) · \(fleet == "local" ? "\(r.slots) local slots" : sshName)",
                                    label: c.label, value: speedup(c, over: f), color: colors[c.strategy] ?? "#999999"))
                }
            }
        }
        let rowH = 20.0, groupGap = 26.0, left = 230.0, plotW = 460.0, top = 56.0
        let maxValue = max(2, (bars.map(\.value).max() ?? 1).rounded(.up))
        func x(_ v: Double) -> Double { left + plotW * v / maxValue }
        var y = top
        var body = ""
        var lastGroup = ""
        for b in bars {
            if b.group != lastGroup {
                y += lastGroup.isEmpty ? 0 : groupGap - rowH + 6
                body += "<text x=\"10\" y=\"\(fmt(y + 12))\" font-weight=\"bold\">\(escape(b.group))</text>\n"
                y += rowH
                lastGroup = b.group
            }
            body += "<text x=\"\(fmt(left - 6))\" y=\"\(fmt(y + 13))\" text-anchor=\"end\">\(escape(b.label))</text>\n"
            body += "<rect x=\"\(fmt(left))\" y=\"\(fmt(y + 2))\" width=\"\(fmt(max(1, x(b.value) - left)))\" height=\"\(fmt(rowH - 5))\" fill=\"\(b.color)\"/>\n"
            body += "<text x=\"\(fmt(x(b.value) + 4))\" y=\"\(fmt(y + 13))\">\(f2(b.value))×</text>\n"
            y += rowH
        }
        let height = y + 40
        var axis = ""
        var tick = 0.0
        let step = maxValue > 8 ? 2.0 : (maxValue > 4 ? 1.0 : 0.5)
        while tick <= maxValue + 1e-9 {
            axis += "<line x1=\"\(fmt(x(tick)))\" y1=\"\(fmt(top - 4))\" x2=\"\(fmt(x(tick)))\" y2=\"\(fmt(y))\" stroke=\"#e0e0e0\"/>\n"
            axis += "<text x=\"\(fmt(x(tick)))\" y=\"\(fmt(y + 16))\" text-anchor=\"middle\" fill=\"#666\">\(tick == tick.rounded() ? String(Int(tick)) : f1(tick))×</text>\n"
            tick += step
        }
        axis += "<line x1=\"\(fmt(x(1)))\" y1=\"\(fmt(top - 4))\" x2=\"\(fmt(x(1)))\" y2=\"\(fmt(y))\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>\n"
        let width = left + plotW + 70
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(fmt(width))" height="\(fmt(height))" viewBox="0 0 \(fmt(width)) \(fmt(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="22" font-size="15" font-weight="bold">Fanout's speed-up: alternative's wall time / Fanout's wall time</text>
            <text x="10" y="40" fill="#555">same run, same machine, warm history; above 1× (dashed line) Fanout was faster. Generated by fanout-bench.</text>
            \(axis)\(body)</svg>

            """
    }

    static func fmt(_ v: Double) -> String { String(format: "%.1f", v) }
    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
