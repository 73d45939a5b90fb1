import FanoutCore

/// Judges a run's measurements against the baselines file (the rule of each verdict is Core's `PerformanceJudge`;
/// what a regression does to the exit code is Core's `Verdict.failingOnRegression`).
public enum BaselineJudge {
    /// Gives every measurement of `report` its verdict against the baselines file of `settings`
    /// (`settings.baselinesPath`) under `rules`. With `settings.failOnPerfRegression`, a regression's verdict is
    /// marked `failsRun` and the report's exit code becomes 1 when it was 0 or 3 (test failures win over
    /// infrastructure trouble; an interrupted run keeps 130/143).
    /// - Returns: whether any measurement regressed.
    /// - Throws: exit 2 when the baselines file exists but cannot be read or is invalid.
    @discardableResult
    public static func judge(_ report: inout RunReport, settings: RunSettings,
                             rules: PerformanceRules = PerformanceRules()) throws(FanoutError) -> Bool {
        guard !report.measurements.isEmpty else { return false }
        let file = try BaselineFile.load(settings.baselinesPath)
        var records = PerformanceJudge(rules: rules).judge(report.measurements, baselines: file.baselines)
        var regressed = false
        for i in records.indices where records[i].verdict?.kind == .regression {
            regressed = true
            if settings.failOnPerfRegression { records[i].verdict?.failsRun = true }
        }
        report.measurements = records
        if regressed, settings.failOnPerfRegression { report.exitCode = Verdict.failingOnRegression(report.exitCode) }
        return regressed
    }

    /// The coordinator's hook in `finish()`, after the report is built and before the history and the files are
    /// written: `judge`, with a baselines file that cannot be used turned into a warning on the report (the tests
    /// have run; their report must still be written; check the file before the run with `load` to refuse it with
    /// exit 2 instead). Returns the exit code the run ends with (`exit`, or 1 for a regression that fails it).
    public static func judgeFinishedRun(_ report: inout RunReport, settings: RunSettings,
                                        rules: PerformanceRules = PerformanceRules(), exit: RunExitCode) -> RunExitCode {
        do {
            try judge(&report, settings: settings, rules: rules)
        } catch {
            report.warnings.append("performance verdicts were not given: \(error.message)")
            return exit
        }
        return RunExitCode(rawValue: report.exitCode) ?? exit
    }
}
