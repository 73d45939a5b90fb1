import FanoutCore

// Facts derived from the model that every writer needs worded the same way: which attempt decided an outcome, what
// the headline message of a failure is, why a test did not run. Kept here so JUnit and the console never disagree.

extension Attempt {
    /// The issues that failed the attempt (known issues and warnings excluded).
    var failingIssues: [Issue] { issues.filter(\.isFailure) }
}

extension TestResult {
    /// The attempt that decided the outcome (the last one; of a `--repeat` run's failed test, its last failing
    /// repetition), if the test ran at all.
    var decidingAttempt: Attempt? {
        guard outcome.isFailure, attempts.last?.outcome != outcome else { return attempts.last }
        return attempts.last { $0.outcome == outcome } ?? attempts.last
    }

    /// Attempts before the deciding one that failed, crashed or timed out: the flakes of a flaky test, or the
    /// earlier tries of a test that failed every time.
    /// Numbered from 1 like the attempts a person counts.
    var earlierFailedAttempts: [(number: Int, attempt: Attempt)] {
        attempts.dropLast().enumerated().filter { $0.element.outcome.isFailure }.map { ($0.offset + 1, $0.element) }
    }

    /// Every result that needs a person's attention: `Outcome.isFailure` plus not-run (exit code 3, not 1, but a
    /// test that never ran is still a hole in the run). A muted failure is not one: it is listed with the other
    /// quarantined tests instead.
    var needsAttention: Bool { (outcome.isFailure && !isMutedFailure) || outcome == .notRun }

    /// The skip reason of a skipped test.
    var skipReason: String? { decidingAttempt?.skipReason }
}

enum ReportFacts {
    /// The quarantined tests of a run: muted ones (whatever their outcome), then skipped ones.
    static func quarantined(_ report: RunReport) -> (muted: [TestResult], skipped: [TestResult]) {
        (report.results.filter { $0.quarantine?.mode == .mute }, report.results.filter { $0.quarantine?.mode == .skip })
    }

    /// `--selective`: a heading and one line per test target (skipped ones first), in the words every format shows.
    static func selective(_ report: RunReport) -> (heading: String, lines: [(target: String, skipped: Bool, text: String)])? {
        guard let selective = report.selective else { return nil }
        let skipped = selective.skipped.count, ran = selective.ran.count
        let several = Set(selective.decisions.map(\.destination)).count > 1
        let heading = "Selective testing: \(skipped) test target\(skipped == 1 ? "" : "s") skipped as unchanged, \(ran) run"
            + (selective.filesHashed.map { files in
                " · the inputs of \(files) files hashed" + (selective.hashSeconds.map { " in \(formatSeconds($0))" } ?? "") } ?? "")
            + (selective.feedbackFirst ? " (feedback first: changed and recently failed work started first)" : "")
        let ordered = selective.skipped + selective.ran
        var lines = ordered.map { d in
            (target: d.target + (several ? " on \(d.destination)" : ""), skipped: d.skipped,
             text: (d.skipped ? "skipped: " : "ran: ") + d.reason)
        }
        lines += selective.notes.map { (target: "note", skipped: false, text: $0) }
        if let observation = selective.observation { lines.append((target: TargetFingerprint.runTimeKey, skipped: false, text: observation)) }
        return (heading, lines)
    }

    /// `ORDER-DEPENDENT: fails after M.A/testX ran before it in its process (not flaky) · fanout bisect …`: what an
    /// order check found, and how to narrow it down or replay it; nil for a test not found order-dependent.
    static func orderLine(_ result: TestResult, runID: String) -> String? {
        guard let order = result.orderDependence else { return nil }
        let next = order.polluters == nil
            ? " · narrow it down: fanout bisect '\(result.id)' --run \(runID) (or --report with this run's report.json)"
            : " · fix the polluter (it leaves state behind), or reset that state in setUp"
        return "ORDER-DEPENDENT, not flaky: " + order.summary.dropFirst("order-dependent: ".count) + next
    }

    /// `fails one run in ten · @alice, https://…/12 · until 2026-12-26`: why a test is quarantined, who owns it.
    static func quarantineLine(_ entry: QuarantineEntry) -> String {
        ([entry.reason, entry.ownership].filter { !$0.isEmpty } + ["until \(entry.expires)"]).joined(separator: " · ")
    }

    /// What a quarantined test did: `not run (skip)`, or `muted, passed`, or `muted, failed: <its headline>`.
    static func quarantinedOutcome(_ result: TestResult, unit: UnitReport?) -> String {
        if result.quarantine?.mode == .skip { return "not run (skip)" }
        guard result.outcome.isFailure else { return "muted, " + result.outcome.rawValue }
        return "muted, \(result.outcome.rawValue): "
            + headline(of: result.decidingAttempt, outcome: result.outcome, unit: unit)
    }

    /// The tests of a `--repeat` run that failed in some repetition, the lowest pass rate first.
    static func failedInSomeRepetition(_ report: RunReport) -> [TestResult] {
        report.results.filter { ($0.repeats?.failed ?? 0) > 0 }.sorted { ($0.repeats?.passRate ?? 1) < ($1.repeats?.passRate ?? 1) }
    }

    /// The one-line message for a failed, crashed, timed-out or not-run attempt.
    static func headline(of attempt: Attempt?, outcome: Outcome, unit: UnitReport?) -> String {
        let issues = attempt?.failingIssues ?? []
        switch outcome {
        case .crashed:
            if let crash = issues.first(where: { $0.kind == .crash }) { return crash.message }
            return "crashed" + (unit.map { " (unit ended: \($0.ending))" } ?? "")
        case .timedOut:
            if let timeout = issues.first(where: { $0.kind == .timeout }) { return timeout.message }
            return "timed out" + (unit.map { " (unit ended: \($0.ending))" } ?? "")
        case .notRun:
            return notRunReason(attempt, unit: unit)
        default:
            return issues.first?.message ?? attempt?.issues.first?.message ?? "failed (no issue was reported)"
        }
    }

    /// Why a test did not run. Core carries the reason in the last attempt's `skipReason` (an attempt whose unit was
    /// lost), else in an issue, else the unit's ending says it.
    static func notRunReason(_ attempt: Attempt?, unit: UnitReport?) -> String {
        if let reason = attempt?.skipReason, !reason.isEmpty { return reason }
        if let message = attempt?.issues.first?.message { return message }
        if let unit { return "not run (unit \(unit.id) ended: \(unit.ending))" }
        return "not run"
    }

    /// The JUnit-style `type` of a failure: the kind of its first failing issue.
    static func failureType(of attempt: Attempt?) -> String {
        (attempt?.failingIssues.first ?? attempt?.issues.first)?.kind.rawValue ?? Issue.Kind.other.rawValue
    }

    /// `file:line: message`, or just the message when the issue has no location. Known issues are marked, since they
    /// appear next to real failures.
    static func line(for issue: Issue) -> String {
        let prefix = issue.isFailure ? "" : "(known issue) "
        guard let location = issue.location else { return prefix + issue.message }
        return "\(prefix)\(location): \(issue.message)"
    }

    /// The last `count` lines of a text, without trailing blank lines.
    static func tail(_ text: String, lines count: Int) -> (lines: [Substring], omitted: Int) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        while let last = lines.last, last.allSatisfy(\.isWhitespace) { lines.removeLast() }
        let kept = lines.suffix(max(0, count))
        return (Array(kept), lines.count - kept.count)
    }
}

/// What binds the run's lower bound, worded once for every writer (`Timing.boundBy`).
enum BoundFacts {
    /// `CPU-bound: 2 m 50 s of CPU on 2 cores, busy 96 % of the run`, `the longest test`, `destination linux: its
    /// test time / the slots serving it`, `test time / slots`; nil when the report does not say (older reports).
    /// The destination's name (from the configuration) goes through `name`, for the caller's format; the rest is
    /// plain text.
    /// `compact` leaves out ` of the run` (for a line that must fit a terminal).
    static func phrase(_ timing: Timing, compact: Bool = false, name: (String) -> String = { $0 }) -> String? {
        guard let term = timing.boundBy else { return nil }
        switch term {
        case MeasuredLowerBound.slotsTerm:
            return "test time / slots"
        case MeasuredLowerBound.longestTestTerm:
            return "the longest test"
        case MeasuredLowerBound.cpuTerm:
            return "CPU-bound" + (cpu(timing, compact: compact).map { ": " + $0 } ?? "")
        default:
            let prefix = MeasuredLowerBound.destinationTerm("")
            if term.hasPrefix(prefix) {
                return "destination \(name(String(term.dropFirst(prefix.count)))): its test time / the slots serving it"
            }
            return name(term)
        }
    }

    /// `2 m 50 s of CPU on 2 cores, busy 96 % of the run`; nil when CPU was not measured.
    static func cpu(_ timing: Timing, compact: Bool = false) -> String? {
        guard let seconds = timing.cpuSeconds else { return nil }
        var text = "\(cpuSeconds(seconds)) of CPU"
        if let cores = timing.cores { text += " on \(cores) core\(cores == 1 ? "" : "s")" }
        if let busy = timing.cpuBusy { text += ", busy \(percent(busy))" + (compact ? "" : " of the run") }
        return text
    }

    /// An agent's CPU: `1 m 20 s of CPU on 2 cores, busy 48 %`; nil when not measured.
    static func agentCPU(_ agent: AgentInfo) -> String? {
        guard let seconds = agent.cpuSeconds else { return nil }
        var text = "\(cpuSeconds(seconds)) of CPU"
        if let cores = agent.cores { text += " on \(cores) core\(cores == 1 ? "" : "s")" }
        if let busy = agent.cpuBusy { text += ", busy \(percent(busy))" }
        return text
    }

    /// CPU seconds as people add them up: `170.4 s` (minutes of CPU are not minutes of the run), `2.50 s` below 10 s,
    /// and `formatSeconds` from 1,000 s on.
    static func cpuSeconds(_ s: Double) -> String {
        s.isFinite && s >= 10 && s < 1_000 ? String(format1: s) + " s" : formatSeconds(s)
    }

    /// `96 %`, rounded to a whole percent.
    static func percent(_ fraction: Double) -> String {
        fraction.isFinite ? "\(Int((fraction * 100).rounded())) %" : "?"
    }

    /// `1.5 GiB`, `312 MiB`, `800 KiB`: a memory size for people.
    static func bytes(_ count: Int64) -> String {
        let b = Double(count), kib = 1024.0, mib = kib * 1024, gib = mib * 1024
        if b >= gib { return String(format1: b / gib) + " GiB" }
        if b >= mib { return "\(Int((b / mib).rounded())) MiB" }
        if b >= kib { return "\(Int((b / kib).rounded())) KiB" }
        return "\(count) bytes"
    }
}
