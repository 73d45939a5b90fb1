import Testing
@testable import FanoutCore

@Suite(.timeLimit(.minutes(2))) struct UnitCollectorTests {
    let a = item("M", "A", 1, tests: 4)
    let b = item("M", "B", 1, tests: 2)
    var unit: WorkUnit { WorkUnit(id: 7, items: [a, b]) }
    var a0: WorkItem { a }

    func id(_ cls: String, _ t: Int) -> TestID { TestID(module: "M", suite: cls, name: "t\(t)") }

    @Test func allPassed() {
        var c = UnitCollector(unit: unit, agent: "local")
        for t in unit.testIDs {
            c.consume(.started(t))
            c.consume(.ended(t, .passed, duration: 0.5, reason: nil))
        }
        c.consume(.suiteEnded(a.suite, duration: 2.1))
        let r = c.finish(.exited(0), diagnostics: "")
        #expect(r.attempts.count == 6)
        #expect(r.attempts.values.allSatisfy { $0.outcome == .passed && $0.unit == 7 })
        #expect(r.leftovers.isEmpty && r.missing.isEmpty && r.problem == nil)
        #expect(r.suiteDurations[a.suite] == 2.1, "the suite time wins over the sum of tests")
        #expect(r.suiteDurations[b.suite] == 1.0, "no suite line: the sum of its tests")
        #expect(r.completeSuites == [a.suite, b.suite])
    }

    /// A second end of a test (a result bundle correcting the console) replaces its attempt and keeps its issues,
    /// but is not reported live a second time.
    @Test func aSecondEndCorrectsTheAttemptWithoutASecondLiveReport() {
        var c = UnitCollector(unit: unit, agent: "local")
        let t = id("A", 0)
        c.consume(.started(t))
        #expect(c.consume(.ended(t, .passed, duration: 0.1, reason: nil)) != nil)
        c.consume(.issue(t, Issue(kind: .assertion, message: "bundle says no", location: SourceLocation(file: "F.swift", line: 3))))
        #expect(c.consume(.ended(t, .failed, duration: 0.2, reason: nil)) == nil, "reported live once")
        let r = c.finish(.exited(65), diagnostics: "")
        #expect(r.attempts[t]?.outcome == .failed && r.attempts[t]?.duration == 0.2)
        #expect(r.attempts[t]?.issues.map(\.message) == ["bundle says no"])
    }

    /// Corrected to passed (a retried or expected failure, as the result bundle says), the console's failing issues
    /// become known issues: the framework's last word is the verdict.
    @Test func aCorrectionToPassedKeepsTheIssuesAsKnownOnes() {
        var c = UnitCollector(unit: unit, agent: "local")
        let t = id("A", 0)
        c.consume(.started(t))
        c.consume(.issue(t, Issue(kind: .assertion, message: "first try failed")))
        c.consume(.ended(t, .failed, duration: 0.1, reason: nil))
        c.consume(.ended(t, .passed, duration: 0.3, reason: nil))
        let r = c.finish(.exited(0), diagnostics: "")
        #expect(r.attempts[t]?.outcome == .passed)
        #expect(r.attempts[t]?.issues.map(\.isFailure) == [false])
    }

    /// xcodebuild that gives up before reaching some tests (no runner, no simulator) exits 65 or 70: those tests go
    /// back to the queue instead of being reported not run.
    @Test func xcodebuildGivingUpLeavesItsUnreachedTestsForAnotherUnit() {
        let x = WorkItem(suite: SuiteID(module: "App", name: "LoginTests"), framework: .xcodebuild, destination: "iphone",
                         tests: ["testA", "testB"], isWholeSuite: true, estimate: 1, source: .noHistory(secondsPerTest: 1))
        let nothing = UnitCollector(unit: WorkUnit(id: 3, items: [x]), agent: "mac").finish(.exited(70), diagnostics: "")
        #expect(nothing.attempts.isEmpty && nothing.missing.isEmpty)
        #expect(nothing.leftovers.map(\.tests) == [["testA", "testB"]] && nothing.leftovers.first?.requeues == 1)
        var c = UnitCollector(unit: WorkUnit(id: 4, items: [x]), agent: "mac")
        let a = TestID(suite: x.suite, name: "testA")
        c.consume(.started(a))
        c.consume(.ended(a, .failed, duration: 1, reason: nil))
        let partial = c.finish(.exited(65), diagnostics: "")
        #expect(partial.leftovers.map(\.tests) == [["testB"]] && partial.leftovers.first?.requeues == 0)
        // An XCTest binary on Linux that skips a test it was asked for will never run it: still missing, not re-queued.
        var linux = UnitCollector(unit: WorkUnit(id: 5, items: [a0]), agent: "local")
        linux.consume(.ended(id("A", 0), .failed, duration: 1, reason: nil))
        #expect(linux.finish(.exited(1), diagnostics: "").missing.count == 3)
    }

    /// A crash message of a test that failed stays; only a test that passed by itself drops a (caught) trap.
    @Test func aFailedTestKeepsItsCrashMessage() {
        var c = UnitCollector(unit: unit, agent: "local")
        let t = id("A", 0)
        c.consume(.issue(t, Issue(kind: .crash, message: "Crash: App (123) at LoginView.swift:40")))
        c.consume(.ended(t, .failed, duration: 2, reason: nil))
        let r = c.finish(.exited(65), diagnostics: "")
        #expect(r.attempts[t]?.issues.map(\.kind) == [.crash])
    }

    @Test func crashMarksTheRunningTestAndRequeuesTheRestOfTheClassAndUnit() {
        var c = UnitCollector(unit: unit, agent: "local")
        c.consume(.started(id("A", 0)))
        c.consume(.ended(id("A", 0), .passed, duration: 0.1, reason: nil))
        c.consume(.started(id("A", 1)))
        let r = c.finish(.exited(132), diagnostics: "Fatal error: deliberate crash\nbacktrace…")
        #expect(r.attempts[id("A", 0)]?.outcome == .passed)
        let crashed = r.attempts[id("A", 1)]
        #expect(crashed?.outcome == .crashed)
        #expect(crashed?.diagnostics?.contains("deliberate crash") == true)
        #expect(crashed?.issues.last?.kind == .crash)
        #expect(crashed?.issues.last?.message.contains("SIGILL") == true)
        // The rest of A (t2, t3) and all of B go back, each as a unit of its own class.
        #expect(r.leftovers.count == 2)
        #expect(r.leftovers[0].suite == a.suite && r.leftovers[0].tests == ["t2", "t3"] && !r.leftovers[0].isWholeSuite)
        #expect(r.leftovers[1].suite == b.suite && r.leftovers[1].isWholeSuite)
        #expect(r.completeSuites.isEmpty, "a crashed class must not teach the history")
        // Every test is accounted for exactly once: in attempts or in leftovers.
        let covered = Set(r.attempts.keys).union(r.leftovers.flatMap(\.testIDs))
        #expect(covered == Set(unit.testIDs))
        #expect(r.attempts.count + r.leftovers.flatMap(\.testIDs).count == unit.testCount)
    }

    @Test func signalFromTheTransportIsACrashToo() {
        var c = UnitCollector(unit: unit, agent: "local")
        c.consume(.started(id("B", 0)))
        let r = c.finish(.signaled(11), diagnostics: "")
        #expect(r.attempts[id("B", 0)]?.outcome == .crashed)
        #expect(r.attempts[id("B", 0)]?.issues.last?.message.contains("SIGSEGV") == true)
    }

    @Test func timeoutMarksTheRunningTestTimedOutAndRequeuesTheRest() {
        var c = UnitCollector(unit: unit, agent: "local")
        c.consume(.started(id("A", 0)))
        let r = c.finish(.timedOut(limit: 60), diagnostics: "")
        #expect(r.attempts[id("A", 0)]?.outcome == .timedOut)
        #expect(r.attempts[id("A", 0)]?.issues.last?.kind == .timeout)
        #expect(r.leftovers.flatMap(\.testIDs).count == 5)
    }

    @Test func lostAgentRequeuesEverythingUnfinishedWithoutBlame() {
        var c = UnitCollector(unit: unit, agent: "a1")
        c.consume(.started(id("A", 0)))
        c.consume(.ended(id("A", 0), .failed, duration: 0.1, reason: nil))
        c.consume(.started(id("A", 1)))
        let r = c.finish(.agentLost("connection reset"), diagnostics: "")
        #expect(r.attempts.count == 1, "results already received are kept")
        #expect(r.attempts[id("A", 0)]?.outcome == .failed)
        #expect(r.leftovers.flatMap(\.testIDs).count == 5, "the running test is re-run, not blamed")
    }

    @Test func zeroTestsSelectedIsAnErrorNeverAPass() {
        let c = UnitCollector(unit: unit, agent: "local")
        let r = c.finish(.exited(0), diagnostics: "")
        #expect(r.problem?.contains("zero tests") == true)
        #expect(r.attempts.isEmpty)
        #expect(Set(r.missing) == Set(unit.testIDs), "every asked-for test is reported missing")
        #expect(r.leftovers.isEmpty, "re-running a selector that matches nothing cannot help")
    }

    @Test func testsTheBinaryDidNotRunAreMissing() {
        var c = UnitCollector(unit: unit, agent: "local")
        for t in a.testIDs {
            c.consume(.started(t))
            c.consume(.ended(t, .passed, duration: 0.1, reason: nil))
        }
        let r = c.finish(.exited(0), diagnostics: "")
        #expect(r.missing.count == 2)
        #expect(r.problem?.contains("did not run 2 of the 6") == true)
    }

    @Test func failingIssueOverridesAPassVerdictAndIssuesAreKept() {
        var c = UnitCollector(unit: unit, agent: "local")
        let t = id("A", 0)
        c.consume(.started(t))
        c.consume(.issue(t, Issue(kind: .assertion, message: "boom", location: SourceLocation(file: "F.swift", line: 3))))
        c.consume(.issue(t, Issue(kind: .other, message: "known", isFailure: false)))
        let ended = c.consume(.ended(t, .passed, duration: 0.1, reason: nil))
        #expect(ended?.1.outcome == .failed)
        #expect(ended?.1.issues.count == 2)
    }

    /// A crash is inferred only when the process died in the test: a test that ended by itself (it caught a trap
    /// and passed) passed, whatever a parser guessed before its end, and its process's exit 0 is a clean end.
    @Test func aTestThatEndedByItselfDidNotCrash() {
        var c = UnitCollector(unit: WorkUnit(id: 1, items: [b]), agent: "local")
        let t0 = id("B", 0), t1 = id("B", 1)
        c.consume(.started(t0))
        c.consume(.issue(t0, Issue(kind: .crash, message: "Precondition failed: caught by the test")))
        let ended = c.consume(.ended(t0, .passed, duration: 0.1, reason: nil))
        #expect(ended?.1.outcome == .passed)
        #expect(ended?.1.issues.isEmpty == true)
        c.consume(.started(t1))
        c.consume(.ended(t1, .passed, duration: 0.1, reason: nil))
        let r = c.finish(.exited(0), diagnostics: "B.swift:3: Precondition failed: caught by the test")
        #expect(r.attempts.count == 2)
        #expect(r.attempts.values.allSatisfy { $0.outcome == .passed })
        #expect(r.problem == nil && r.leftovers.isEmpty && r.missing.isEmpty)
    }

    @Test func skipReasonIsKeptAndAllSkippedClassesDoNotTeachHistory() {
        var c = UnitCollector(unit: WorkUnit(id: 1, items: [b]), agent: "local")
        for t in b.testIDs {
            c.consume(.started(t))
            c.consume(.ended(t, .skipped, duration: 0, reason: "not on Linux"))
        }
        let r = c.finish(.exited(0), diagnostics: "")
        #expect(r.attempts.count == b.tests.count)
        #expect(r.attempts.values.allSatisfy { $0.outcome == .skipped && $0.skipReason == "not on Linux" })
        #expect(r.completeSuites.isEmpty)
    }

    @Test func exitOneWithEveryTestPassingIsFlagged() {
        var c = UnitCollector(unit: WorkUnit(id: 1, items: [b]), agent: "local")
        for t in b.testIDs {
            c.consume(.started(t))
            c.consume(.ended(t, .passed, duration: 0, reason: nil))
        }
        #expect(c.finish(.exited(1), diagnostics: "").problem != nil)
    }

    @Test func swiftTestingCrashWithSeveralRunningTestsMarksEachCrashed() {
        let s = item("M", "S", 1, tests: 3, framework: .swiftTesting)
        var c = UnitCollector(unit: WorkUnit(id: 2, items: [s]), agent: "local")
        c.consume(.started(s.testIDs[0]))
        c.consume(.started(s.testIDs[1]))
        let r = c.finish(.exited(134), diagnostics: "")
        #expect(r.attempts.values.filter { $0.outcome == .crashed }.count == 2)
        #expect(r.attempts[s.testIDs[0]]?.issues.last?.message.contains("2 tests were running") == true)
        #expect(r.leftovers.flatMap(\.testIDs) == [s.testIDs[2]])
    }
}

@Suite(.timeLimit(.minutes(2))) struct UnitCollectorEndingTests {
    let a = item("M", "A", 1, tests: 2)

    @Test func nothingMatchedExitSixtyNineIsMissingNotRequeued() {
        let s = item("M", "S", 1, tests: 2, framework: .swiftTesting)
        let r = UnitCollector(unit: WorkUnit(id: 1, items: [s]), agent: "local").finish(.exited(69), diagnostics: "")
        #expect(r.leftovers.isEmpty, "re-queueing a selector that matches nothing would loop forever")
        #expect(r.missing.count == 2)
        #expect(r.problem?.contains("zero tests") == true)
    }

    @Test func crashBeforeAnyTestSpendsTheRequeueBudget() {
        let r = UnitCollector(unit: WorkUnit(id: 1, items: [a]), agent: "local").finish(.exited(139), diagnostics: "")
        #expect(r.leftovers.count == 1)
        #expect(r.leftovers[0].requeues == 1, "no progress: the leftovers are charged")
    }

    @Test func crashAfterProgressDoesNotSpendTheBudget() {
        var c = UnitCollector(unit: WorkUnit(id: 1, items: [a]), agent: "local")
        c.consume(.started(a.testIDs[0]))
        c.consume(.ended(a.testIDs[0], .passed, duration: 0.1, reason: nil))
        c.consume(.started(a.testIDs[1]))
        let r = c.finish(.signaled(6), diagnostics: "")
        #expect(r.leftovers.isEmpty)
        #expect(r.attempts[a.testIDs[1]]?.outcome == .crashed)
    }
}
