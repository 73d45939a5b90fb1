import Foundation

/// The "Performance tests measured alone" section of BENCHMARKS.md (`fanout-bench performance`).
extension MarkdownReport {
    static func performanceSection(_ performance: PerformanceResult?) -> String {
        guard let performance, let first = performance.suites.first else { return "" }
        var s = """

            ## Performance tests measured alone

            (measured apart from the rest of this page: \(performance.measured))

            Suites with XCTest `measure` tests, on \(first.slots) local slots of a \(first.cores)-core machine. Each \
            was built once, then run round after round by `fanout-bench performance`:

            - **`swift test` (serial)**: `swift test --skip-build --no-parallel`; its first round's verdicts are the \
            **oracle**.
            - **Fanout, first run of the package**: no history, `--package DIR`: Fanout reads which classes measure from \
            the package's `Tests/` sources.
            - **Fanout, first run of the bundle**: no history and `--bundle` (no sources to read): Fanout learns which \
            classes measure from their output, and re-runs alone a measure test that failed XCTest's deviation rule \
            beside other work. A measurement taken before the class was known is said to be taken beside other work.
            - **Fanout, warm**: the history of the first round's first run: the classes that measured run alone on \
            their agent.
            - **Fanout, warm, nothing alone**: the same history with `not_exclusive: ['.*']`: no class measured \
            alone, which is what the old name-only rule did to a class whose name does not say "performance".

            *verdicts ≠ serial*: tests of that case's runs whose verdict differs from the oracle's. *alone*: \
            measurements whose `measuredAlone` is true, of all the runs' measurements. *re-measured*: measure tests \
            whose first attempt failed beside other work and ran again alone. Figures are medians of the rounds with \
            their min–max. *the cost of measuring alone* is, round by round, the warm makespan measured alone / the \
            warm makespan with nothing alone. *bound alone* is the least any schedule that measures alone on one agent \
            can take, from that run's own test times: the measuring tests one after the other, plus the rest over the \
            slots or its longest test, whichever is longer (it counts slots, not cores: where the rest computes, as the \
            fixture's Load classes do, it cannot be reached); *makespan / bound alone* near 1 means the cost is the \
            measuring itself, not how Fanout placed it. It is given for the runs whose every measurement was taken alone.


            """
        for r in performance.suites { s += performanceSuite(r) + "\n" }
        return s
    }

    static func performanceSuite(_ r: PerformanceSuiteResult) -> String {
        let p = r.package
        var s = "### \(p.name) \(p.tag)\n\n"
        s += (p.local.map { "`\($0)` of this repository at commit `\(r.commit.prefix(12))`" }
            ?? "`\(p.repo)` at \(p.tag) (commit `\(r.commit.prefix(12))`)")
            + ": \(p.kind). \(r.tests) tests, \(r.measureTests.count) of them measure. Load average (1 min) when its "
            + "cases started / ended: \(r.loadAverage.map(f2).joined(separator: " / ")).\n\n"
        s += "| case | rounds | makespan | makespan / bound alone | wall | verdicts ≠ serial | alone | re-measured |\n"
        s += "|---|---:|---:|---:|---:|---:|---:|---|\n"
        for c in r.cases {
            let rounds = r.rounds[c.strategy] ?? []
            let makespans = rounds.compactMap(\.makespan)
            let disagreeing = Set(r.disagreements.filter { $0.run.hasPrefix(c.label + ", round") }.map(\.test)).count
            let remeasured = rounds.map { String($0.remeasured.count) }.joined(separator: ", ")
            // Only where every measurement was taken alone: otherwise the measuring tests did not run one after
            // the other, and the bound does not apply.
            let bounded = rounds.filter { $0.alone == $0.measurements }
                .compactMap { r in r.makespan.flatMap { m in r.boundAlone.map { m / max($0, 1e-9) } } }
            s += "| \(c.isFanout ? "**\(c.label)**" : c.label) | \(c.walls.count) | "
                + (Spread(makespans)?.text(f2, unit: " s") ?? "—") + " | "
                + (!c.isFanout || c.strategy == PerformanceBench.shared ? "—" : Spread(bounded)?.text(f3) ?? "— (not all alone)")
                + " | \(c.wallSpread.text(f2, unit: " s")) | "
                + (c.isFanout ? String(disagreeing) : "(oracle)") + " | "
                + (c.isFanout ? "\(rounds.reduce(0) { $0 + $1.alone }) of \(rounds.reduce(0) { $0 + $1.measurements })" : "—")
                + " | " + (c.isFanout ? (rounds.allSatisfy { $0.remeasured.isEmpty } ? "none" : "per round: " + remeasured) : "—")
                + " |\n"
        }
        if let cost = Spread(r.costRatios) {
            s += "\nThe cost of measuring alone: \(cost.text { String(format: "%.3f", $0) }) of the makespan with "
                + "nothing alone" + (cost.runs < 3 ? " (fewer than 3 rounds: no claim)" : "") + ".\n"
        }
        if !r.disagreements.isEmpty {
            var groups: [String: [VerdictDisagreement]] = [:]
            for d in r.disagreements { groups["\(d.test)\u{1}\(d.serial)\u{1}\(d.other)", default: []].append(d) }
            s += "\nVerdicts that differ from the serial run:\n\n"
            for key in groups.keys.sorted() {
                guard let all = groups[key], let d = all.first else { continue }
                s += "- `\(d.test)`: serial **\(d.serial)**, \(d.other) in \(all.map(\.run).joined(separator: "; "))"
                    + (all.compactMap(\.evidence).first.map { " — \"\(String($0.prefix(200)))\"" } ?? "") + "\n"
            }
        }
        let remeasured = Set(r.rounds.values.flatMap { $0.flatMap(\.remeasured) }).sorted()
        if !remeasured.isEmpty {
            s += "\nRe-measured alone: " + remeasured.map { "`\($0)`" }.joined(separator: ", ") + ".\n"
        }
        for n in r.notes { s += "\nNote: \(n)\n" }
        return s
    }
}
