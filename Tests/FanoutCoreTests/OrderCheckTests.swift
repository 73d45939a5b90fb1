import Testing
@testable import FanoutCore

/// The order-check rules on plain values: which failure earns a check, and what each stage's attempt means.
@Suite struct OrderCheckTests {
    let victim = TestID(module: "M", suite: "Cache", name: "testHit")
    let suspects = [TestID(module: "M", suite: "Cache", name: "testClear"), TestID(module: "M", suite: "Cache", name: "testFill")]

    func attempt(_ outcome: Outcome, unit: Int, position: Int? = nil, replayOf: Int? = nil) -> Attempt {
        var a = Attempt(outcome: outcome, duration: 0.1, unit: unit, agent: "a")
        a.position = position
        a.replayOf = replayOf
        return a
    }

    var check: OrderCheck {
        OrderCheck(victim: victim, destination: "local", framework: .xctest, failedIn: 3, failedAs: .failed, suspects: suspects)
    }

    @Test func aFailureAfterOtherTestsInAnotherUnitEarnsACheck() {
        let failed = attempt(.failed, unit: 3, position: 3)
        #expect(OrderCheck.failure(toCheck: [failed, attempt(.passed, unit: 5)], passedIn: 5) == failed)
        // First in its process: nothing ran before it, so its order cannot be to blame.
        #expect(OrderCheck.failure(toCheck: [attempt(.failed, unit: 3, position: 1)], passedIn: 5) == nil)
        // A replay's own failure, or one in the unit it passed in, earns none.
        #expect(OrderCheck.failure(toCheck: [attempt(.failed, unit: 3, position: 3, replayOf: 2)], passedIn: 5) == nil)
        #expect(OrderCheck.failure(toCheck: [attempt(.failed, unit: 5, position: 3)], passedIn: 5) == nil)
        // The latest qualifying failure; a crash counts as a failure too.
        let crashed = attempt(.crashed, unit: 4, position: 2)
        #expect(OrderCheck.failure(toCheck: [failed, crashed], passedIn: 5) == crashed)
        #expect(OrderCheck.failure(toCheck: [], passedIn: 5) == nil)
    }

    @Test func failingAgainAfterItsPredecessorsThenPassingAloneMakesItOrderDependent() {
        guard case .runAlone(let alone) = check.next(after: attempt(.failed, unit: 0), unit: 8, ending: "exit 1") else {
            Testing.Issue.record("failing as in the run after its predecessors runs it once more alone")
            return
        }
        #expect(alone.stage == .alone && alone.failedAgain?.unit == 8, "the failing attempt is the check unit's")
        #expect(alone.next(after: attempt(.passed, unit: 9), unit: 9, ending: "exit 0") == .orderDependent(counted: alone.failedAgain!))
        guard case .notOrderDependent(let why) = alone.next(after: attempt(.failed, unit: 9), unit: 9, ending: "exit 1") else {
            Testing.Issue.record("failing alone too is chance, not order")
            return
        }
        #expect(why.contains("alone too: flaky, not order-dependent"), "\(why)")
    }

    @Test func passingOrFailingOtherwiseAfterItsPredecessorsIsNoOrderDependence() {
        guard case .notOrderDependent(let passed) = check.next(after: attempt(.passed, unit: 8), unit: 8, ending: "exit 0"),
              case .notOrderDependent(let crashed) = check.next(after: attempt(.crashed, unit: 8), unit: 8, ending: "exit 139"),
              case .notOrderDependent(let missing) = check.next(after: nil, unit: 8, ending: "agent lost: gone") else {
            Testing.Issue.record("only failing as in the run leads on")
            return
        }
        #expect(passed.contains("flaky, not order-dependent"))
        #expect(crashed.contains("it crashed") && crashed.contains("no verdict on its order"))
        #expect(missing.contains("it did not run (agent lost: gone)"))
        var step = check
        step.stage = .step
        #expect(step.next(after: nil, unit: 8, ending: "exit 0") == .answer)
    }
}
