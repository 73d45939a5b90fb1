import FanoutCore

/// The summary's failures and flaky tests: each with its place, agent and message, crashes with their frames.
extension ConsoleSummary {
    func flaky(_ report: RunReport, _ context: Context, _ out: inout Output) {
        let flaky = report.results.filter { $0.outcome == .flaky }
        guard !flaky.isEmpty else { return }
        out.blank()
        out.plain(out.style.boldYellow("Flaky") + " (\(flaky.count)): passed on a retry after failing")
        for result in flaky {
            title(result, context, &out)
            for (number, attempt) in result.earlierFailedAttempts {
                let unit = context.units[attempt.unit]
                let issues = attempt.failingIssues.isEmpty
                    ? [ReportFacts.headline(of: attempt, outcome: attempt.outcome, unit: unit)]
                    : attempt.failingIssues.map(ReportFacts.line(for:))
                out.wrapped("attempt \(number) of \(result.attempts.count) \(Self.verb(attempt.outcome)) on agent "
                    + "\(attempt.agent), unit \(attempt.unit):", indent: "      ", style: out.style.dim)
                for line in issues { out.wrapped(line, indent: "        ", continuation: "          ") }
            }
            if let score = result.flakeScore {
                out.wrapped(score.summary, indent: "      ", continuation: "        ", style: out.style.dim)
            }
        }
    }

    /// Muted tests (their failures do not fail the run) and tests the quarantine kept from running, each with why.
    func quarantined(_ report: RunReport, _ context: Context, _ out: inout Output) {
        let (muted, skipped) = ReportFacts.quarantined(report)
        guard !muted.isEmpty || !skipped.isEmpty else { return }
        out.blank()
        let failing = muted.filter(\.outcome.isFailure).count
        out.plain(out.style.boldYellow("Quarantined") + " (\(muted.count) muted, \(failing) of them failed and did not "
            + "fail the run; \(skipped.count) skipped)")
        for result in muted + skipped {
            title(result, context, &out)
            let unit = result.decidingAttempt.flatMap { context.units[$0.unit] }
            out.wrapped(ReportFacts.quarantinedOutcome(result, unit: unit), indent: "      ", continuation: "        ")
            if let entry = result.quarantine {
                out.wrapped(ReportFacts.quarantineLine(entry), indent: "      ", continuation: "        ", style: out.style.dim)
            }
        }
    }

    /// `--selective`: which test targets were skipped as unchanged (with the run that vouches for them) and why the
    /// others ran.
    func selective(_ report: RunReport, _ out: inout Output) {
        guard let (heading, lines) = ReportFacts.selective(report) else { return }
        out.blank()
        out.plain(out.style.bold("Selective") + String(heading.dropFirst("Selective testing".count)))
        let style = out.style
        for line in lines {
            let dim: ((String) -> String)? = line.skipped ? { style.dim($0) } : nil
            out.wrapped("\(line.target): \(line.text)", indent: "  ", continuation: "    ", style: dim)
        }
    }

    /// A `--repeat` run: the hunt's settings, the first failure with what replays it, and every test that failed
    /// in some repetition with its pass rate.
    func repeats(_ report: RunReport, _ context: Context, _ out: inout Output) {
        guard let hunt = report.repeatRun else { return }
        out.blank()
        let failing = ReportFacts.failedInSomeRepetition(report)
        out.plain(out.style.bold("Repeat") + " (\(hunt.untilFailure ? "until the first failure, at most " : "")"
            + "\(hunt.repetitions) repetitions, seed \(hunt.seed)): \(failing.count) of \(report.results.count) tests failed "
            + "in some repetition")
        if let first = hunt.firstFailure {
            let place = context.destinations.count > 1 ? " on \(first.destination)" : ""
            out.wrapped("first failure: \(first.test)\(place) in repetition \(first.repetition), agent \(first.agent), unit "
                + "\(first.unit)" + (first.seed.map { ", FANOUT_SEED=\($0)" } ?? ""), indent: "  ", continuation: "    ")
        }
        for result in failing.prefix(20) {
            title(result, context, &out)
            if let stats = result.repeats { out.wrapped(stats.summary, indent: "      ", continuation: "        ", style: out.style.dim) }
        }
        if failing.count > 20 { out.wrapped("… and \(failing.count - 20) more (report.json has every test's rate)", indent: "  ") }
    }

    func failures(_ report: RunReport, _ context: Context, _ out: inout Output) {
        let failures = report.results.filter(\.needsAttention)
        guard !failures.isEmpty else { return }
        out.blank()
        out.plain(out.style.boldRed("Failures") + " (\(failures.count))")
        for (index, result) in failures.enumerated() {
            // A blank line between entries: a long list is scanned by its titles.
            if index > 0 { out.blank() }
            title(result, context, &out)
            let attempt = result.decidingAttempt
            let unit = attempt.flatMap { context.units[$0.unit] }
            var lines = attempt?.issues.map(ReportFacts.line(for:)) ?? []
            let headline = ReportFacts.headline(of: attempt, outcome: result.outcome, unit: unit)
            // A crash or time-out with only test issues (or none) still needs its cause said first.
            if lines.isEmpty || (result.outcome != .failed && !lines.contains(where: { $0.hasSuffix(headline) })) {
                lines.insert(headline, at: 0)
            }
            for line in lines { out.wrapped(line, indent: "      ", continuation: "        ") }
            for (number, earlier) in result.earlierFailedAttempts {
                let text = ReportFacts.headline(of: earlier, outcome: earlier.outcome,
                                                unit: context.units[earlier.unit])
                out.wrapped("attempt \(number) \(Self.verb(earlier.outcome)) too: \(text)", indent: "      ",
                            continuation: "        ", style: out.style.dim)
            }
            if let attempt {
                var place = "ran on agent \(attempt.agent), unit \(attempt.unit)"
                if let unit { place += " (slot \(unit.slot), \(formatSeconds(unit.duration)), ended: \(unit.ending))" }
                if result.attempts.count > 1 { place += " · attempt \(result.attempts.count)" }
                out.wrapped(place, indent: "      ", continuation: "        ", style: out.style.dim)
            }
            if let order = ReportFacts.orderLine(result, runID: report.runID) {
                out.wrapped(order, indent: "      ", continuation: "        ", style: out.style.boldYellow)
            }
            // Whether the history says this failure is likely a flake.
            if let score = result.flakeScore {
                out.wrapped(score.summary, indent: "      ", continuation: "        ", style: out.style.dim)
            }
            if let diagnostics = attempt?.diagnostics, !diagnostics.isEmpty, diagnosticLines > 0 {
                let (tail, omitted) = ReportFacts.tail(TextSanitizer.terminalSafe(diagnostics), lines: diagnosticLines)
                out.plain(out.style.dim("      " + (omitted > 0 ? "last \(tail.count) lines of the diagnostics:"
                    : "diagnostics:")))
                for line in tail {
                    out.wrapped(String(line), indent: "      | ", continuation: "      |   ")
                }
            }
        }
    }

    /// `  FAILED     Module.Class/test · destination`, the label colored by outcome.
    func title(_ result: TestResult, _ context: Context, _ out: inout Output) {
        let label = ConsoleText.padRight(Self.label(result.outcome), to: 9)
        let destination = context.destinations.count > 1 ? " · \(result.destination)" : ""
        var lines = ConsoleText.wrap(TextSanitizer.terminalSafe("\(result.id)\(destination)"), width: width,
                                     indent: "  " + label + " ", continuation: "            ")
        if let first = lines.first {
            let name = first.dropFirst(2 + label.count)
            lines[0] = "  " + out.style.outcome(result.outcome, label) + name
        }
        lines.forEach { out.lines.append($0) }
    }
}
