import FanoutCore
import Testing

@Suite struct WorkerIdentityTests {
    let slot = WorkerIdentity(runID: "20261128-101010-ab", workers: 8, agent: "linux-2", slot: 1, worker: 5, destination: "debug")

    @Test func everyVariableIsSetAndExpanded() {
        #expect(slot.environment == ["FANOUT_RUN_ID": "20261128-101010-ab", "FANOUT_WORKERS": "8", "FANOUT_AGENT": "linux-2",
                                     "FANOUT_SLOT": "1", "FANOUT_WORKER": "5", "FANOUT_DESTINATION": "debug"])
        #expect(Set(slot.environment.keys) == Set(WorkerIdentity.names))
        #expect(slot.expand("postgres://localhost/app_test_${FANOUT_WORKER}") == "postgres://localhost/app_test_5")
        #expect(slot.expand("${FANOUT_AGENT}-${FANOUT_SLOT}/${FANOUT_DESTINATION}@${FANOUT_RUN_ID} of ${FANOUT_WORKERS}")
                == "linux-2-1/debug@20261128-101010-ab of 8")
    }

    @Test func anythingElseIsLeftAsWritten() {
        for text in ["$FANOUT_WORKER", "${HOME}/x", "${FANOUT_UNKNOWN}", "cost: $5", "${FANOUT_WORKER", "}{", ""] {
            #expect(slot.expand(text) == text, "\(text)")
        }
        #expect(slot.expand("a${FANOUT_WORKER}b${OTHER}c${FANOUT_SLOT") == "a5b${OTHER}c${FANOUT_SLOT")
        // A run-level hook has no slot: its variables stay visible rather than becoming empty.
        let run = WorkerIdentity(runID: "r", workers: 2)
        #expect(run.expand("db_${FANOUT_WORKER}_${FANOUT_WORKERS}") == "db_${FANOUT_WORKER}_2")
        #expect(run.environment == ["FANOUT_RUN_ID": "r", "FANOUT_WORKERS": "2"])
    }

    @Test func theIdentityWinsOverTheConfiguredEnvironment() {
        let env = slot.environment(configured: ["DATABASE_URL": "postgres:///t_${FANOUT_WORKER}", "FANOUT_WORKER": "99",
                                                "PLAIN": "x"])
        #expect(env["DATABASE_URL"] == "postgres:///t_5")
        #expect(env["FANOUT_WORKER"] == "5" && env["PLAIN"] == "x")
    }

    @Test func aHookThatDidNotPassSaysWhatItMeans() {
        func hook(_ scope: HookReport.Scope, _ phase: HookReport.Phase, _ status: HookReport.Status) -> HookReport {
            HookReport(scope: scope, phase: phase, agent: "linux-2", slot: scope == .slot ? 1 : nil, worker: scope == .slot ? 5 : nil,
                       command: "createdb x", status: status, detail: "exit 1", startedAt: 0, duration: 0.2,
                       output: "line 1\nline 2\nline 3\ncreatedb: error: database exists\n")
        }
        #expect(hook(.slot, .setUp, .passed).warning == nil)
        #expect(hook(.slot, .setUp, .failed).warning == "hook slot 1 (worker 5) of linux-2 set-up failed (exit 1): line 2 | "
                + "line 3 | createdb: error: database exists: this slot takes no work; the run goes on on the others")
        #expect(hook(.agent, .setUp, .timedOut).warning?.hasSuffix("this agent takes no work; the run goes on on the others") == true)
        #expect(hook(.run, .setUp, .failed).warning?.hasPrefix("hook run set-up failed") == true)
        #expect(hook(.run, .setUp, .failed).warning?.hasSuffix(": no test runs") == true)
        #expect(hook(.agent, .tearDown, .notRun).warning?.contains("agent linux-2 teardown did not run (exit 1)") == true)
        #expect(hook(.slot, .tearDown, .failed).warning?.hasSuffix("(the verdicts stand)") == true)
    }
}
