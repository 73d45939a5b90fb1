import FanoutCore
import Foundation
import Testing

/// Selective testing's two rules: a target is skipped only on a full pass with exactly its inputs and never while
/// its last verdict is a failure; and only a run of every test of a target that all passed is a full pass.
@Suite struct SelectivePolicyTests {
    static let parts = ["files of Leaf": "a1", "files of LeafTests": "b1", "toolchain": "t1"]
    static let fingerprint = TargetFingerprint(target: "LeafTests", module: "LeafTests", destination: "local", parts: parts)

    static func row(_ verdict: TargetVerdict, parts: [String: String] = SelectivePolicyTests.parts, run: String,
                    reason: String? = nil, commit: String? = nil) -> TargetRun {
        TargetRun(target: "LeafTests", destination: "local", fingerprint: TargetFingerprint.digest(of: parts), parts: parts,
                  verdict: verdict, reason: reason, runID: run, commit: commit, recordedAt: Date(timeIntervalSince1970: 0))
    }

    @Test func aFullPassWithTheSameInputsIsSkippedAndSaysSinceWhen() {
        let d = SelectivePolicy.decide(Self.fingerprint, history: [Self.row(.passed, run: "r1", commit: String(repeating: "c", count: 40))])
        #expect(d.skipped)
        #expect(d.cause == .unchanged)
        #expect(d.since == "r1")
        #expect(d.reason == "unchanged since run r1 at commit cccccccccccc")
    }

    @Test func withoutAFullPassOnRecordItRuns() {
        #expect(SelectivePolicy.decide(Self.fingerprint, history: []).cause == .noPass)
        let partial = SelectivePolicy.decide(Self.fingerprint, history: [Self.row(.partial, run: "r1")])
        #expect(!partial.skipped, "a run of part of the target (a filter, a shard) vouches for nothing")
    }

    @Test func changedInputsRunAndAreNamed() {
        var changed = Self.parts
        changed["files of Leaf"] = "a2"
        changed["Package.resolved"] = "p1"
        let d = SelectivePolicy.decide(Self.fingerprint, history: [Self.row(.passed, parts: changed, run: "r1")])
        #expect(!d.skipped)
        #expect(d.cause == .changed)
        #expect(d.changed == ["Package.resolved", "files of Leaf"])
        #expect(d.reason.contains("files of Leaf"))
    }

    @Test func theLastVerdictFailingAlwaysRunsEvenWithAPassOfTheSameInputsBehindIt() {
        // A change broke it; the change was reverted: the inputs equal the old pass, but the last thing known of
        // the target is a failure (or a crash, a time-out, an interruption). It runs.
        for reason in ["1 failed of 3", "1 crashed of 2", "1 timed out of 2", "the run was interrupted"] {
            let history = [Self.row(.failed, run: "r2", reason: reason), Self.row(.passed, run: "r1")]
            let d = SelectivePolicy.decide(Self.fingerprint, history: history)
            #expect(!d.skipped, "\(reason)")
            #expect(d.cause == .lastFailed)
            #expect(d.reason.contains(reason))
        }
        // Same inputs, failed last time (a flaky or environment-dependent failure): runs.
        #expect(!SelectivePolicy.decide(Self.fingerprint, history: [Self.row(.failed, run: "r1")]).skipped)
    }

    @Test func aPassAfterAFailureCountsAgainAndPartialRunsInBetweenChangeNothing() {
        let history = [Self.row(.partial, run: "r4"), Self.row(.passed, run: "r3"), Self.row(.failed, run: "r2")]
        let d = SelectivePolicy.decide(Self.fingerprint, history: history)
        #expect(d.skipped)
        #expect(d.since == "r3")
        var other = Self.parts
        other["toolchain"] = "t2"
        // A pass of other inputs, then the older pass of these: skipped on the older one (nothing failed since).
        let back = SelectivePolicy.decide(Self.fingerprint, history: [Self.row(.passed, parts: other, run: "r6"),
                                                                      Self.row(.passed, run: "r5")])
        #expect(back.skipped)
        #expect(back.since == "r5")
    }

    @Test func aChangeAfterAFailureThatWasFixedSaysWhatChangedSinceTheFix() {
        // r1 passed with these inputs, r2 failed, r3 passed with other inputs: r1 cannot vouch (a failure came after
        // it), and the target runs because its inputs differ from r3's, which the reason names.
        var fixed = Self.parts
        fixed["files of Leaf"] = "a3"
        let history = [Self.row(.passed, parts: fixed, run: "r3"), Self.row(.failed, run: "r2"), Self.row(.passed, run: "r1")]
        let d = SelectivePolicy.decide(Self.fingerprint, history: history)
        #expect(!d.skipped)
        #expect(d.cause == .changed)
        #expect(d.changed == ["files of Leaf"])
        #expect(d.reason.contains("r3"))
    }

    @Test func aPassIsComparedOnTheInputsItRecorded() {
        // A pass recorded with observed run-time inputs is compared with the target's inputs now in its own terms.
        let observed = Self.parts.merging(["run-time inputs": "observed", "observed Golden/a.txt": "g1"]) { $1 }
        let row = Self.row(.passed, parts: observed, run: "r1")
        let same = TargetFingerprint(target: "LeafTests", module: "LeafTests", destination: "local", parts: observed)
        let d = SelectivePolicy.decide(Self.fingerprint, history: [row], current: { _ in same })
        #expect(d.skipped)
        #expect(d.observed == ["Golden/a.txt"])
        let edited = TargetFingerprint(target: "LeafTests", module: "LeafTests", destination: "local",
                                       parts: observed.merging(["observed Golden/a.txt": "g2"]) { $1 })
        let e = SelectivePolicy.decide(Self.fingerprint, history: [row], current: { _ in edited })
        #expect(e.cause == .changed)
        #expect(e.changed == ["observed Golden/a.txt"])
        #expect(SelectiveDecision.observedSummary(e.observed) == "observed: Golden/a.txt")
        #expect(SelectiveDecision.observedSummary(nil) == "assumed: every file of the package")
    }

    @Test func alwaysRunWins() {
        let d = SelectivePolicy.decide(Self.fingerprint, history: [Self.row(.passed, run: "r1")], alwaysRun: "Leaf")
        #expect(d.cause == .alwaysRun && !d.skipped)
        #expect(d.reason == "always runs (always_run: Leaf)")
    }

    // MARK: - Verdicts

    static func result(_ test: String, _ outcome: Outcome, module: String = "LeafTests", destination: String = "local") -> TestResult {
        TestResult(id: TestID(suite: SuiteID(module: module, name: "LeafTests"), name: test), framework: .xctest,
                   destination: destination, outcome: outcome,
                   attempts: [Attempt(outcome: outcome, duration: 0.1, unit: 1, agent: "local")])
    }

    static let catalog: [String: [String: Set<TestID>]] = [
        "local": ["LeafTests": Set(["a", "b", "c"].map { TestID(suite: SuiteID(module: "LeafTests", name: "LeafTests"), name: $0) })],
    ]

    static func verdict(_ results: [TestResult], interrupted: Bool = false) -> TargetRun? {
        SelectivePolicy.verdicts(fingerprints: [fingerprint], catalog: catalog, results: results, interrupted: interrupted,
                                 runID: "r", commit: nil, at: Date()).first
    }

    @Test func everyTestPassedIsAFullPass() {
        let v = Self.verdict([Self.result("a", .passed), Self.result("b", .passed), Self.result("c", .skipped)])
        #expect(v?.verdict == .passed, "a skip by the framework itself is part of a pass")
        #expect(v?.fingerprint == Self.fingerprint.digest)
        #expect(v?.parts == Self.parts)
    }

    @Test func anythingButAPassIsAFailureOnRecord() {
        for bad in [Outcome.failed, .crashed, .timedOut, .notRun, .flaky] {
            let v = Self.verdict([Self.result("a", .passed), Self.result("b", bad), Self.result("c", .passed)])
            #expect(v?.verdict == .failed, "\(bad)")
        }
        let interrupted = Self.verdict([Self.result("a", .passed), Self.result("b", .passed), Self.result("c", .passed)],
                                       interrupted: true)
        #expect(interrupted?.verdict == .failed)
        #expect(interrupted?.reason == "the run was interrupted")
    }

    @Test func aRunOfPartOfTheTargetOrWithQuarantinedTestsIsPartial() {
        let some = Self.verdict([Self.result("a", .passed), Self.result("b", .passed)])
        #expect(some?.verdict == .partial)
        #expect(some?.reason == "ran 2 of 3 tests")
        var muted = Self.result("c", .passed)
        muted.quarantine = QuarantineEntry(test: "LeafTests.LeafTests/c", mode: .mute, reason: "flaky", owner: "@a",
                                           added: "2026-11-01", expires: "2026-12-01")
        #expect(Self.verdict([Self.result("a", .passed), Self.result("b", .passed), muted])?.verdict == .partial)
        var mutedFailure = Self.result("c", .failed)
        mutedFailure.quarantine = muted.quarantine
        #expect(Self.verdict([Self.result("a", .passed), Self.result("b", .passed), mutedFailure])?.verdict == .failed,
                "a muted failure is still a failure on record")
    }

    @Test func aTargetThatDidNotRunGetsNoRow() {
        #expect(Self.verdict([Self.result("x", .passed, module: "Other")]) == nil)
        #expect(Self.verdict([Self.result("a", .passed, destination: "linux-release")]) == nil)
    }

    /// swift-collections' SortedCollectionsTests lists no test on Linux: without this it would "never pass".
    @Test func aTargetWithNoTestAtAllInTheProductIsAFullPassOfNothing() {
        let empty = TargetFingerprint(target: "EmptyTests", module: "EmptyTests", destination: "local", parts: Self.parts)
        let rows = SelectivePolicy.verdicts(fingerprints: [Self.fingerprint, empty], catalog: Self.catalog,
                                            results: [Self.result("a", .passed)], interrupted: false, runID: "r",
                                            commit: nil, at: Date())
        #expect(rows.first { $0.target == "EmptyTests" }?.verdict == .passed)
        let interrupted = SelectivePolicy.verdicts(fingerprints: [empty], catalog: Self.catalog, results: [],
                                                   interrupted: true, runID: "r", commit: nil, at: Date())
        #expect(interrupted.isEmpty)
        let undiscovered = SelectivePolicy.verdicts(fingerprints: [empty], catalog: [:], results: [], interrupted: false,
                                                    runID: "r", commit: nil, at: Date())
        #expect(undiscovered.isEmpty, "a destination never discovered (nothing was built) vouches for nothing")
    }

    @Test func fingerprintsNameWhatChanged() {
        var other = Self.parts
        other.removeValue(forKey: "toolchain")
        other["files of Leaf"] = "zz"
        other["declared inputs"] = "d"
        #expect(Self.fingerprint.changed(since: other) == ["declared inputs", "files of Leaf", "toolchain"])
        #expect(TargetFingerprint.digest(of: Self.parts) == Self.fingerprint.digest)
        #expect(TargetFingerprint.digest(of: other) != Self.fingerprint.digest)
    }
}
