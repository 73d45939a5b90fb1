/// Every verdict Fanout gives, in one place: a test's final outcome from its attempts, a class's from its tests',
/// and the exit code of a run, of merged shards, and of a run whose measurements regressed. Assembly, merging and
/// baseline judging all ask here, so the rules cannot drift apart.
public enum Verdict {
    // MARK: - Tests and classes

    /// A test's final outcome. Under `--repeat`, its outcome over the repetitions (`RepeatStats.outcome`); else the
    /// last attempt decides, and a pass after a failure is flaky. No attempt: not run. An attempt set aside as
    /// `contended` (a measurement that failed beside other work, run again alone) is no evidence either way while
    /// the attempt that replaced it is there.
    public static func test(_ attempts: [Attempt]) -> Outcome {
        let counted = attempts.filter { $0.contended == nil }
        let attempts = counted.isEmpty ? attempts : counted
        if RepeatStats(attempts) != nil { return RepeatStats.outcome(attempts) }
        guard let last = attempts.last?.outcome else { return .notRun }
        if last == .passed, attempts.dropLast().contains(where: { $0.outcome.isFailure }) { return .flaky }
        return last
    }

    /// The worst failure or not-run of the class; else skipped when every test skipped; else flaky or passed.
    public static func `class`(_ outcomes: [Outcome]) -> Outcome {
        if let worst = outcomes.filter({ $0.isFailure || $0 == .notRun }).max() { return worst }
        if !outcomes.isEmpty, outcomes.allSatisfy({ $0 == .skipped }) { return .skipped }
        return outcomes.contains(.flaky) ? .flaky : .passed
    }

    // MARK: - Exit codes

    /// A run's exit code. Interrupted: the interruption's code. Else any failure, crash or time-out (muted ones
    /// aside, which `Counts` leaves out): 1. Else a test not run, or trouble with the infrastructure (no usable
    /// agent, a unit that selected zero tests or exited oddly, shards that disagree): 3. Else success.
    public static func exitCode(_ counts: Counts, infrastructure: Bool = false,
                                interruption: RunExitCode? = nil) -> RunExitCode {
        if let interruption { return interruption }
        if counts.failures > 0 { return .testFailures }
        return counts.notRun > 0 || infrastructure ? .infrastructure : .success
    }

    /// The exit code of shards merged into one report: what the merged results say (`exitCode`), then an
    /// interrupted shard's code (the higher of 130 and 143 when both), then, when all that says success, the worst
    /// code of a shard that failed for another reason (exit 2: bad input, nothing ran).
    public static func merged(_ merged: RunExitCode, shards: [(exitCode: Int32, interrupted: Bool)]) -> Int32 {
        var exit = merged.rawValue
        let interruptions = [RunExitCode.interrupted, .terminated].map(\.rawValue)
        for shard in shards where shard.interrupted || interruptions.contains(shard.exitCode) {
            exit = max(exit, shard.exitCode)
        }
        if exit == RunExitCode.success.rawValue, let worst = shards.map(\.exitCode).filter({ $0 != 0 }).max() {
            exit = worst
        }
        return exit
    }

    /// A run whose measurements regressed, with `--fail-on-perf-regression`: a run that passed or only had trouble
    /// with its infrastructure now fails (test failures win over infrastructure trouble); an interrupted run keeps
    /// 130/143, bad input keeps 2.
    public static func failingOnRegression(_ exitCode: Int32) -> Int32 {
        switch RunExitCode(rawValue: exitCode) {
        case .success, .infrastructure: RunExitCode.testFailures.rawValue
        default: exitCode
        }
    }
}
