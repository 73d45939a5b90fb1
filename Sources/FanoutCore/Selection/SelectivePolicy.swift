import struct Foundation.Date

/// The two rules of selective testing, kept pure so that they can be tested exhaustively: when a test target may
/// be skipped, and what a run leaves on record for the next one.
///
/// The one promise: a target is skipped only on the evidence of a full pass with exactly its current inputs, and
/// never while the last thing known of it is a failure (of any kind, under any inputs).
public enum SelectivePolicy {
    /// Whether a target with inputs `fingerprint` runs. `history` is what earlier runs recorded for this target on
    /// this destination, newest first. `alwaysRun` is the `always_run` pattern that matched it, if one did.
    /// `current` gives the target's inputs as they are now, in the terms of a recorded run (a run whose run-time
    /// inputs were observed is compared on the paths it observed); without it, `fingerprint` is compared with all.
    public static func decide(_ fingerprint: TargetFingerprint, history: [TargetRun], alwaysRun: String? = nil,
                              current: ((TargetRun) -> TargetFingerprint)? = nil) -> SelectiveDecision {
        let now = current ?? { _ in fingerprint }
        func runs(_ cause: SelectiveCause, _ reason: String) -> SelectiveDecision {
            SelectiveDecision(target: fingerprint.target, module: fingerprint.module, destination: fingerprint.destination,
                              cause: cause, reason: reason, fingerprint: fingerprint.digest)
        }
        if let alwaysRun { return runs(.alwaysRun, "always runs (always_run: \(alwaysRun))") }
        var passedSince = false
        search: for row in history {
            switch row.verdict {
            case .failed where passedSince:
                // A full pass came after it: nothing before that pass vouches for anything, and what runs the target
                // now is what changed since that pass.
                break search
            case .failed:
                // A failure, a crash, a time-out, an interruption: the next run must show it again or show it gone.
                return runs(.lastFailed, "its last run did not pass (\(row.label): \(row.reason ?? "failed"))")
            case .passed where row.fingerprint == now(row).digest:
                var skip = SelectiveDecision(target: fingerprint.target, module: fingerprint.module,
                                             destination: fingerprint.destination, cause: .unchanged,
                                             reason: "unchanged since \(row.label)", fingerprint: row.fingerprint)
                skip.observed = row.observedInputs
                skip.since = row.runID
                skip.sinceCommit = row.commit
                skip.sinceAt = row.recordedAt
                return skip
            case .passed:
                passedSince = true
            case .partial:
                continue
            }
        }
        guard let last = history.first(where: { $0.verdict == .passed }) else {
            return runs(.noPass, "no full pass on record for \(fingerprint.destination)")
        }
        let changed = now(last).changed(since: last.parts)
        var decision = runs(.changed, "changed since its last full pass (\(last.label)): "
                            + (changed.isEmpty ? "inputs" : changed.joined(separator: ", ")))
        decision.changed = changed
        decision.observed = last.observedInputs
        return decision
    }

    /// What a run leaves on record for each target it ran (wholly or in part) on each destination.
    /// - Parameters:
    ///   - fingerprints: the inputs of every test target of the run.
    ///   - catalog: every test each destination's product has, by module (before filters, shards and quarantine),
    ///     so that a run of part of a target is told from a full one.
    ///   - results: the run's results; a target with none on a destination did not run there and gets no row,
    ///     unless the product has no test of it at all (a full pass of nothing).
    public static func verdicts(fingerprints: [TargetFingerprint], catalog: [String: [String: Set<TestID>]],
                                results: [TestResult], interrupted: Bool, runID: String, commit: String?,
                                at date: Date) -> [TargetRun] {
        var byTarget: [String: [String: [TestResult]]] = [:]
        for r in results { byTarget[r.destination, default: [:]][r.id.suite.module, default: []].append(r) }
        return fingerprints.compactMap { fp in
            guard let mine = byTarget[fp.destination]?[fp.module], !mine.isEmpty else {
                // A target of which the product lists no test at all (its tests are compiled out on this platform,
                // or it has none yet) ran everything it has: a full pass, so it is not "never passed" forever. Tests
                // added to it change its inputs.
                guard !interrupted, let modules = catalog[fp.destination], modules[fp.module]?.isEmpty ?? true else { return nil }
                return TargetRun(target: fp.target, destination: fp.destination, fingerprint: fp.digest, parts: fp.parts,
                                 verdict: .passed, runID: runID, commit: commit, recordedAt: date)
            }
            let (verdict, reason) = judge(mine, expected: catalog[fp.destination]?[fp.module] ?? [],
                                          interrupted: interrupted)
            return TargetRun(target: fp.target, destination: fp.destination, fingerprint: fp.digest, parts: fp.parts,
                             verdict: verdict, reason: reason, runID: runID, commit: commit, recordedAt: date)
        }
    }

    /// The verdict on one target's results.
    static func judge(_ results: [TestResult], expected: Set<TestID>, interrupted: Bool) -> (TargetVerdict, String?) {
        if interrupted { return (.failed, "the run was interrupted") }
        var counts: [Outcome: Int] = [:]
        for r in results { counts[r.outcome, default: 0] += 1 }
        let bad: [(Outcome, String)] = [(.failed, "failed"), (.crashed, "crashed"), (.timedOut, "timed out"),
                                        (.notRun, "not run"), (.flaky, "passed only on a retry")]
        let problems = bad.compactMap { outcome, words in counts[outcome].map { "\($0) \(words)" } }
        if !problems.isEmpty {
            return (.failed, problems.joined(separator: ", ") + " of \(results.count)")
        }
        let quarantined = results.filter { $0.quarantine != nil }.count
        if quarantined > 0 { return (.partial, "\(quarantined) quarantined") }
        let ran = Set(results.map(\.id))
        let missing = expected.subtracting(ran).count
        if missing > 0 || expected.isEmpty {
            return (.partial, "ran \(ran.count) of \(expected.count) tests")
        }
        return (.passed, nil)
    }
}
