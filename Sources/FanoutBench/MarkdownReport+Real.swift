import Foundation

/// The "Real suites" section of BENCHMARKS.md: public packages' own suites (`fanout-bench real`).
extension MarkdownReport {
    /// What a paired ratio (`other` / Fanout's) says of a real suite: no claim from fewer than 3 rounds.
    static func realVerdict(_ q: Spread) -> String {
        q.runs < 3 ? "fewer than 3 runs: no claim" : q.verdict == "even" ? "even" : "Fanout " + q.verdict
    }

    static func realSection(_ results: [RealSuiteResult]) -> String {
        guard !results.isEmpty else { return "" }
        var s = """
            ## Real suites

            (measured apart from the rest of this page, by `scripts/bench.sh --real`: each suite says when)

            Public packages' own test suites, pinned by tag and cloned from their repositories (here git reads \
            github.com from a local mirror), built once with `swift build --build-tests`, then run \
            round after round by `fanout-bench real` (`scripts/bench.sh --real`), on \(results[0].slots) slots:

            - **`swift test` (serial)**: `swift test --skip-build --no-parallel --xunit-output F`: XCTest one test after \
            the other and Swift Testing without its in-process parallelism. Its first round's verdicts, from both xUnit \
            files (XCTest's `F`, Swift Testing's `F-swift-testing`), are the **oracle**.
            - **Fanout, first run**: `fanout run --bundle BIN --slots \(results[0].slots)` with a history file that does \
            not exist yet; round 1's run records, and its file is the warm history.
            - **Fanout, warm history**: the same with the warm history (each warm run records too).
            - **`swift test --parallel`**: `swift test --skip-build --parallel --num-workers \(results[0].slots)`.

            Every figure is the median of the rounds with its min–max. *vs Fanout warm* is, round by round, that \
            case's wall / Fanout's warm wall: **Fanout faster** only when every round's ratio is above 1, **even** \
            when the range spans 1. *tests passed or skipped*: of the tests the oracle passed or skipped. \
            *verdicts*: tests of that case's runs whose verdict differs from the oracle's or that one side lacks \
            (Fanout's `crashed` and `timed-out` count as `failed`; `flaky` is not `passed`). The machine is shared \
            with other work: the load average is given.


            """
        let missing = RealPackage.all.filter { p in !results.contains { $0.package.name == p.name } }
        if !missing.isEmpty {
            s += "Not measured in this run: " + missing.map { "\($0.repo) \($0.tag)" }.joined(separator: ", ") + ".\n\n"
        }
        for r in results { s += realSuiteSection(r) + "\n" }
        return s + realLessons(results)
    }

    static func realSuiteSection(_ r: RealSuiteResult) -> String {
        let p = r.package
        var s = "### \(p.name) \(p.tag)\n\n"
        s += "`\(p.repo)` at \(p.tag) (commit `\(r.commit.prefix(12))`): \(p.kind). \(r.tests) tests ("
            + "\(r.xctestCount) XCTest, \(r.swiftTestingCount) Swift Testing); the serial run: \(r.serialPassed) passed, "
            + "\(r.serialFailed) failed, \(r.serialSkipped) skipped, \(f1(r.serialTestTime)) s of test time, the longest "
            + "test \(f2(r.longestTest)) s. Build \(f1(r.buildSeconds)) s (not counted; a no-op when the clone was built "
            + "before). Load average (1 min) when its cases started / ended: \(r.loadAverage.map(f2).joined(separator: " / ")). "
            + "Measured \(r.measured ?? "by an earlier commit than the rest of this page (before results said when)").\n\n"
        s += "| case | wall | makespan | processes | tests passed or skipped | verdicts ≠ serial | vs Fanout warm |\n"
        s += "|---|---:|---:|---:|---:|---:|---|\n"
        let warm = r.strategy("fanout")
        for c in r.cases {
            let disagreeing = Set(r.disagreements.filter { $0.run.hasPrefix(c.label + ", round") }.map(\.test)).count
            var versus = "—"
            if let warm, c.strategy != "fanout" {
                let q = speedups(c, over: warm)
                versus = q.text(f2, unit: "×") + ": " + realVerdict(q)
            }
            s += "| \(c.isFanout ? "**\(c.label)**" : c.label) | \(c.wallSpread.text(f2, unit: " s")) | "
                + (c.makespan.map { f2($0) + " s" } ?? "—") + " | " + (c.processes.map(String.init) ?? "—") + " | "
                + "\(c.testsPassed)/\(c.testsExpected)\(c.exitCode.map { $0 == 0 ? "" : ", exit \($0)" } ?? "") | "
                + "\(c.strategy == "swift-test-serial" ? "(oracle)" : String(disagreeing)) | \(versus) |\n"
        }
        if let first = r.strategy("fanout-cold"), let parallel = r.strategy("swift-test-parallel") {
            let q = speedups(parallel, over: first)
            s += "\nFanout's first run against `swift test --parallel`: \(q.text(f2, unit: "×")): \(realVerdict(q)).\n"
        }
        s += "\n" + disagreementList(r)
        if r.serialUnstable.count >= r.tests, r.tests > 0 {
            s += "\nIn a later serial round no test had the first round's verdict: that round wrote no verdicts (its "
                + "process ended early, a crash), so it says nothing of single tests.\n"
        } else if !r.serialUnstable.isEmpty {
            s += "\nTests whose serial verdict changed between rounds (the suite's own flakiness; \(r.serialUnstable.count) in all): "
                + r.serialUnstable.prefix(10).map { "`\($0)`" }.joined(separator: ", ") + ".\n"
        }
        for n in r.notes { s += "\nNote: \(n)\n" }
        for c in r.cases { if let n = c.note { s += "- \(c.label): \(String(n.prefix(300)))\n" } }
        return s
    }

    /// Disagreements grouped by test and verdicts, with the runs that showed them.
    static func disagreementList(_ r: RealSuiteResult) -> String {
        guard !r.disagreements.isEmpty else {
            return "**Verdicts: every test of every run agreed with the serial run.**\n"
        }
        var groups: [String: [VerdictDisagreement]] = [:]
        for d in r.disagreements { groups["\(d.test)\u{1}\(d.serial)\u{1}\(d.other)", default: []].append(d) }
        var s = "**Verdicts that differ from the serial run** (\(groups.count)):\n\n"
        for key in groups.keys.sorted() {
            guard let all = groups[key], let d = all.first else { continue }
            s += "- `\(d.test)`: serial **\(d.serial)**, \(d.other) in \(all.map(\.run).joined(separator: "; "))"
                + (r.alone?[d.test].map { "; run alone: \($0.text)" } ?? "")
                + (all.compactMap(\.evidence).first.map { " — \"\(String($0.prefix(200)))\"" } ?? "") + "\n"
        }
        return s
    }

    /// What the real suites showed that the generated ones could not: figures from the results, and what reading
    /// real suites' verdicts takes.
    static func realLessons(_ results: [RealSuiteResult]) -> String {
        var s = "### What the real suites taught\n\n"
        let runs = results.reduce(0) { $0 + $1.cases.filter { $0.strategy != "swift-test-serial" }
            .reduce(0) { $0 + ($1.runWalls?.count ?? 1) } }
        let fanoutDisagreeing = results.flatMap { r in r.disagreements.filter { $0.run.hasPrefix("Fanout") }.map { (r, $0) } }
        s += "- **Verdicts.** \(results.reduce(0) { $0 + $1.tests }) tests in \(results.count) suites, \(runs) runs compared "
            + "test by test with the serial run: "
        if fanoutDisagreeing.isEmpty {
            s += "Fanout's verdicts never differed from it.\n"
        } else {
            let tests = Set(fanoutDisagreeing.map(\.1.test))
            func count(_ rule: (RealSuiteResult, VerdictDisagreement, AloneRuns) -> Bool) -> Int {
                Set(fanoutDisagreeing.filter { r, d in r.alone?[d.test].map { rule(r, d, $0) } == true }.map(\.1.test)).count
            }
            let flaky = count { _, _, a in a.flaky }
            let failBeside = count { _, d, a in d.serial == "passed" && a.passed == a.runs }
            let serialOutlier = count { _, d, a in d.serial == "failed" && a.passed == a.runs }
            let passUnderLoad = count { _, d, a in d.serial == "failed" && a.passed == 0 }
            s += "Fanout's differed on \(tests.count) test(s), listed above with each one run alone 5 times. "
                + "\(failBeside) passed serially and in every run alone but failed in a Fanout run beside other tests on "
                + "\(results[0].cores) cores (expectation time-outs, event-order assertions); \(serialOutlier) failed "
                + "serially but passed alone and in the parallel runs; \(passUnderLoad) failed serially and in every run "
                + "alone but passed in a Fanout run; \(flaky) both passed and failed alone. Each of them changes its "
                + "verdict with the timing the machine's load gives it"
                + (results.contains { $0.disagreements.contains { $0.run.hasPrefix("swift test --parallel") && $0.serial == "passed" } }
                    ? " (`swift test --parallel` failed tests that passed serially too)" : "")
                + ", not with the runner: the serial run is an oracle only where verdicts are stable, so run "
                + "the disagreeing tests alone before blaming the runner.\n"
        }
        for r in results {
            guard r.serialTestTime > 0, let warm = r.strategy("fanout"), let parallel = r.strategy("swift-test-parallel") else { continue }
            let share = r.longestTest / r.serialTestTime
            let q = speedups(parallel, over: warm)
            s += "- **\(r.package.name)**: its longest test is \(f2(r.longestTest)) s of \(f1(r.serialTestTime)) s serial test time "
                + "(\(Int((share * 100).rounded())) %); on \(r.cores) cores no schedule ends before max(CPU time / cores, "
                + "longest test). Fanout warm \(warm.wallSpread.text(f2, unit: " s")), `swift test --parallel` "
                + "\(parallel.wallSpread.text(f2, unit: " s")): \(realVerdict(q))"
                + (r.swiftTestingCount > 0 && r.xctestCount == 0
                    ? ". Its tests are all Swift Testing, which already runs them in parallel inside one process: "
                        + "`swift test --parallel` is one process, Fanout one per suite (\(warm.processes.map(String.init) ?? "?") "
                        + "in its warm run), each paying the start of a debug test binary"
                    : "") + ".\n"
        }
        s += """
            - **Reading `swift test`'s verdicts.** `--xunit-output` writes XCTest's file only with `--parallel`: the serial \
            run's XCTest verdicts come from its console lines (which lack the module: classes are put in their modules \
            from the bundle's `--list-tests`). With `--parallel`, an `XCTSkip` is written as a passing test case. Swift \
            Testing's file (`-swift-testing` before the extension) spells nested suites `Module.Outer.Inner` and puts \
            functions outside any suite in `classname="Module"`; and without `--no-parallel` Swift Testing runs its \
            tests in parallel even when XCTest runs serially.

            """
        return s
    }
}
