import Foundation

/// BENCHMARKS.md and the ratio chart, written from the results files of one benchmark run.
enum MarkdownReport {
    static func fleetName(_ fleet: String, _ r: SuiteResult) -> String {
        fleet == "local" ? "\(r.slots) local slots" : "SSH, \(r.fleetDescription ?? "fleet")"
    }

    /// Alternative wall / Fanout wall on that fleet (the median over paired rounds): above 1 means Fanout was faster.
    static func speedup(_ alt: CaseResult, over fanout: CaseResult) -> Double { speedups(alt, over: fanout).median }

    /// `1.71× (1.65–1.80), faster`: the ratio over the rounds, and what its whole range says.
    static func speedupText(_ alt: CaseResult, over fanout: CaseResult) -> String {
        let s = speedups(alt, over: fanout)
        return s.text(f2, unit: "×") + ", " + s.verdict
    }

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
                    ratio = "1.00 (best alternative: \(speedupText(best, over: c)))"
                } else if !c.isFanout, c.complete, let pair = r.fanoutPair(of: c), pair.complete {
                    ratio = speedupText(c, over: pair) + (pair.strategy == "fanout" ? "" : " (vs `--package`)")
                }
                let name = c.isFanout ? "**\(c.label)**" : c.label
                let wall: String = c.wallSpread.text(f2, unit: " s")
                let makespan: String = c.makespan.map { f2($0) + " s" } ?? "—"
                let efficiency: String = r.ratioSpread(c)?.text(f3) ?? "—"
                let overhead: String = r.lowerBound(of: c).map { f2(c.wall - $0) + " s" } ?? "—"
                let processes: String = c.processes.map(String.init) ?? "—"
                let cells: [String] = [fleetName(fleet, r), name, wall, makespan, efficiency, overhead, processes, testsCell(c), ratio]
                s += "| " + cells.joined(separator: " | ") + " |\n"
            }
        }
        let measured = r.cases.filter { $0.cpuSeconds != nil }
        if !measured.isEmpty {
            let parts: [String] = measured.map { c in
                let processes: String = c.processes.map { "\($0) processes" } ?? "?"
                return "\(c.label) \(f1(c.cpuSeconds ?? 0)) s in \(processes)"
            }
            s += "\nCPU (user + system, `/usr/bin/time`: the command and every process it started, test processes and "
            s += "their starts included), of the median run: " + parts.joined(separator: "; ") + ".\n"
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
        if let apart = r.measuredApart {
            s += "*Measured apart from the rest of this page: \(apart).*\n\n"
        }
        s += "\(r.summary). \(r.classes) classes, \(r.methods) test methods; the generator's waits add up to "
            + "\(f2(r.nominalSerial)) s, the reference run measured \(f2(r.referenceSerial)) s of test time "
            + "(longest class \(f2(r.longestClass)) s, longest method \(f3(r.longestMethod)) s). "
            + (r.shape.computes ? "The methods compute, so at most \(min(r.slots, r.cores ?? r.slots)) run at once on this machine's "
                + "\(r.cores ?? 0) cores whatever the slots: the LB divides by that (its reference run used one slot). It is an "
                + "estimate, not a strict bound: computing tests run a few % faster or slower from one run to the next, so a "
                + (r.hasOwnBounds ? "run's own makespan can beat it. " : "ratio slightly below 1 can happen. ") : "")
            + (r.computingSerial.map { "Of that, \(f2($0)) s is in classes that compute (the others wait): at most "
                + "\(min(r.slots, r.cores ?? r.slots)) of them run at once on this machine's \(r.cores ?? 0) cores, so the "
                + "LB is max(test time / slots, computing time / cores, longest method) (its reference run used one slot). " } ?? "")
            + (r.hasOwnBounds ? "A row whose run measured its own lower bound is divided by it, which no run can beat: "
                + "Fanout's report.json `timing.lowerBound` (its per-test durations, and its CPU time / cores), and, where "
                + "classes compute, a static split's max(CPU of its processes / cores, test time / slots, longest test), "
                + "measured in the same round; "
                + (r.shape.hasComputingTests ? "the other rows have no ratio: the LB below comes from another run, and "
                    + "computing tests take more or less time from run to run (contention, and the steal time of this "
                    + "shared machine), so a run can beat it. " : "the other rows by the LB below. ") : "")
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
                + "\(f2(best.wall)) s: **\(speedupText(best, over: fanout))**."
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
                 demo: run.demo, elapsed: run.elapsed, mergeScale: run.mergeScale) + realSection(run.realSuites ?? [])
            + huntSection(run.hunt)
            + selectiveSection(run.selective)
            + mutationsSection(run.mutations)
            + performanceSection(run.performance)
    }

    /// Selective testing's promise checked by mutation on real packages (`fanout-bench selective-mutations`,
    /// scripts/bench.sh --mutations).
    static func mutationsSection(_ mutations: MutationsResult?) -> String {
        guard let mutations else { return "" }
        return "\n## Selective testing by mutation: no false green on real packages\n\n"
            + "(measured apart from the rest of this page: \(mutations.measured))\n\n"
            + "Each package is a pinned tag of a public package whose tests use what no target graph shows: "
            + "swift-argument-parser's tests run its example executables and tools from the products folder and compare "
            + "with snapshot files; swift-http-structured-headers reads its test vectors from `Tests/TestFixtures`, outside "
            + "its test target, through `#filePath`; swift-openapi-generator reads `Public/openapi-generator-config.schema.json` "
            + "at the package's root and resources of its own. After a full pass recorded with `--selective` (run-time "
            + "inputs observed), each mutation changes one file of a seeded sample of all the package's files (a character "
            + "of a string literal or a digit of a number in Swift, a character of other text; one that does not build is "
            + "replaced), Fanout decides against the recorded pass, and every target it skipped is run by `swift test` on "
            + "the mutated build: a failure there is a false green. The packages' mutations ran side by side; the timings "
            + "were taken one package at a time, with nothing else running, by the release build: the recording run (a new "
            + "history, every target runs) observed the default way\(observerWords(mutations.timings)), not observed "
            + "(`observe: false`), and observed by strace (`observe: strace`), alternating, each round a ratio to the "
            + "round's run not observed.\n\n"
            + SelectiveMutations.table(runs: mutations.runs, timings: mutations.timings)
    }

    /// " (by a preloaded library)": how the timings' observed rounds observed, when they say.
    static func observerWords(_ timings: [SelectiveMutations.Results]) -> String {
        let ways = Set(timings.compactMap(\.observer)).sorted()
        return ways.isEmpty ? "" : " (by \(ways.joined(separator: ", ")))"
    }

    /// Selective testing on a generated 20-target package (`fanout-bench selective`, scripts/bench.sh --selective).
    static func selectiveSection(_ selective: SelectiveResult?) -> String {
        guard let selective else { return "" }
        let r = selective.results
        let hashing = r.rounds.map(\.hashing).sorted()
        let worst = hashing.last ?? 0
        return "\n## Selective testing: a one-file change in a leaf of 20 targets\n\n"
            + "(measured apart from the rest of this page: \(selective.measured))\n\n"
            + "A generated package of \(r.targets) targets (6 leaf libraries, 4 libraries on them, \(r.testTargets) test "
            + "targets of 4 waiting tests each, the shortest 0.6 s and the longest 6 s) and \(r.files) files, most of them "
            + "resources, on \(r.slots) slots. Each round changes one file of a leaf and runs `--selective` (the test "
            + "targets that can see the leaf run) against the same change under `--no-selective`; both include the "
            + "incremental build of the change. Then a run with nothing changed, and the hashing alone (the goal: at most "
            + "0.3 s for 2,000 files; the slowest round took \(String(format: "%.3f", worst)) s, "
            + (worst <= 0.3 ? "within it" : "over it") + "). Then feedback first: the shortest affected target gains a "
            + "failing test, and everything runs (`--no-selective`) with and without `--feedback-first`; seconds to the "
            + "first failure count from the first unit's start. Load average before and after: "
            + "\(r.loadAverage.map { String(format: "%.2f", $0) }.joined(separator: ", ")).\n\n"
            + SelectiveBench.table(r)
    }

    /// `fanout run --repeat` against the loops a user writes today (`fanout-bench repeat`, scripts/bench.sh --hunt).
    static func huntSection(_ hunt: HuntResult?) -> String {
        guard let hunt else { return "" }
        let r = hunt.results
        return "\n## Flake hunting: `--repeat \(r.repetitions)` against the loops a user writes\n\n"
            + "(measured apart from the rest of this page: \(hunt.measured))\n\n"
            + "A generated suite of \(r.tests) waiting tests (shape `two-hundred`, \(String(format: "%.2f", r.serialTotal)) s "
            + "serial) run \(r.repetitions) times on \(r.slots) slots of this 2-core machine: the shell loop people write "
            + "today, that loop with `swift test --parallel`, and one `fanout run --repeat \(r.repetitions)` (every test "
            + "\(r.repetitions) times, each repetition in a process of its own, spread over the slots; its history warmed by "
            + "one ordinary run). Each round runs the three in turn; ratios are taken round by round. Load average before "
            + "and after: \(r.loadAverage.map { String(format: "%.2f", $0) }.joined(separator: ", ")).\n\n"
            + RepeatBench.table(r)
    }

    /// What a first run or a wrong history costs where stealing cannot help: a long single method that the estimates
    /// called short starts late, and no schedule that does not know can start it earlier.
    static func stealingLimits(_ suites: [SuiteResult]) -> String {
        var rows: [String] = []
        for r in suites where !r.shape.hasComputingTests {
            for name in ["fanout-cold", "fanout-shuffled"] {
                // The rounds' median ratio with its range, as every other table of this page gives it.
                guard let c = r.strategy(name), let ratio = r.ratioSpread(c), let lb = r.lowerBound(of: c) else { continue }
                let greedy = lb + r.longestMethod
                rows.append("| \(r.shape.rawValue) | \(c.label) | \(ratio.text(f3)) | \(f3(r.longestMethod)) s "
                    + "(\(Int((r.longestMethod / max(lb, 1e-9) * 100).rounded())) % of LB) | \(f3(greedy / lb)) |")
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

    /// What the document's introduction says of the mixed suite, when it was measured.
    static let mixedIntro = """
        , and **mixed**, whose computing classes compute and whose waiting classes wait: its heaviest class computes \
        40 s in 16 methods, which on 8 slots sharing 2 cores takes several times as long, as in a real suite seen in \
        the field (its LB divides the computing part by the cores and the rest by the slots)
        """

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
                guard c.complete, let ratio = r.ratioSpread(c) else { return "incomplete" }
                return ratio.text(f3)
            }
            func versus(_ alt: String, _ fanout: String) -> String {
                guard let a = r.strategy(alt), let f = r.strategy(fanout) else { return "—" }
                guard a.complete, f.complete else { return "incomplete" }
                return speedupText(a, over: f)
            }
            s += "| \(r.shape.rawValue)\(r.measuredApart == nil ? "" : " †") (\(r.methods) tests, \(r.shape.work)) | "
                + "\(ratio("fanout")) | \(ratio("fanout-cold")) | \(ratio("fanout-shuffled")) | "
                + "\(versus("swift-test-parallel", "fanout")) | \(versus("swift-test-parallel-build", "fanout-package")) |\n"
        }
        // Planning time from the run the goal is judged on (no agent failing), as the goals table gives it.
        if let sim = run.sims.first(where: { $0.failedAgents > 0 }) ?? run.sims.first,
           let planned = run.sims.first(where: { $0.failedAgents == 0 }) ?? run.sims.first {
            s += "\nSimulation (virtual clock): \(planned.classes) classes on \(planned.agents * planned.slotsPerAgent) slots planned in "
                + "\(f3(planned.schedulerInitSeconds + planned.planSeconds)) s; \(f3(sim.ratio)) × LB"
                + (sim.failedAgents > 0 ? " with \(Int(sim.failFraction * 100)) % of the agents failing, every test "
                    + (sim.accountedFor ? "accounted for once" : "NOT accounted for") : "") + ".\n"
        }
        let m = run.machine
        s += "\nEach figure: the median over the runs, their min–max in brackets; \"faster\" only when every run says so, "
            + "\"even\" when the range spans 1."
        s += "\nLB: the method-level lower bound (no schedule, not even one process per test, ends sooner)"
            + (run.suites.contains(where: \.hasOwnBounds) ? "; for Fanout's runs, each run's own from its report.json (test "
                + "time / slots, the longest test, CPU time / cores), which its makespan cannot beat" : "") + ". Measured by "
            + "`\(run.command)` on \(m.date), \(m.commit), \(m.cores) cores; the generated suites sleep except cpu-bound"
            + (run.suites.contains { $0.shape == .mixed } ? " and mixed's computing classes. " : ". ")
            + "Every case, the fleet and the alternatives: [BENCHMARKS.md](BENCHMARKS.md).\n"
        for r in run.suites { if let apart = r.measuredApart { s += "\n† \(r.shape.rawValue): measured apart, \(apart).\n" } }
        return s
    }

    /// README with the text between the markers replaced.
    static func replacingFigures(in readme: String, with figures: String) throws -> String {
        try replacingBlock(in: readme, begin: readmeBegin, end: readmeEnd, with: figures, what: "README has no generated figures section")
    }

    /// `text` with what stands between the `begin` and `end` markers replaced by `block`; `what` names the document
    /// in the error when the markers are missing.
    static func replacingBlock(in text: String, begin: String, end: String, with block: String, what: String) throws -> String {
        guard let b = text.range(of: begin), let e = text.range(of: end), b.upperBound <= e.lowerBound else {
            throw BenchError("\(what): put \(begin) and \(end) where they go")
        }
        return String(text[..<b.upperBound]) + "\n" + block + String(text[e.lowerBound...])
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
            slots on 2 cores cannot all run at once (its LB divides the work by the cores, not the slots)\
            \(suites.contains { $0.shape == .mixed } ? mixedIntro : "").

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

            **Repeats.** Every case ran several times, the rounds interleaving the strategies so that a busy moment of \
            this shared machine does not fall on one strategy only. A figure is the median of the runs with their \
            min–max in brackets; a row shows its median run's makespan. A ratio to Fanout is taken round by round. \
            Fanout is called **faster** only when every round says so, **even** when the range spans 1.

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
}
