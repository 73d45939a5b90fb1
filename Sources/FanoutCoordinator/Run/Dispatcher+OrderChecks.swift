import FanoutCore

/// Order checks (`--retries`): a test that failed in its process and then passed when run again without the tests
/// before it runs once more after those tests, in their order, in a fresh process. Failing again there, and passing
/// once more alone (a test that fails most of the time by chance would otherwise look order-dependent), makes it
/// order-dependent (`OrderDependence`), not flaky; anything else leaves it flaky. An order-dependent test with several
/// suspects is then narrowed down to its polluter(s) by `Bisection`, each step a unit like the check, within the
/// run's `bisectBudget`. Check units hold nothing else, are never cut or backed up, and only the failing check of a
/// test found order-dependent adds an attempt to it (`RunLedger.recordCheck`).
extension Dispatcher {
    /// Checks for these destinations wait for a slot, or a search of one of them will make more: a slot serving
    /// them waits rather than leaves. (A check for a destination whose agents are all gone holds no other slot; like
    /// queued work, it waits for one to be admitted again.)
    func checksPending(for destinations: Set<String>) -> Bool {
        pendingChecks.contains { destinations.contains($0.destination) }
            || searching.contains { destinations.contains($0.key) && $0.value > 0 }
    }

    /// A waiting check unit for this slot's agent.
    func takeOrderCheck(for slot: SlotRef, serving destinations: Set<String>, now: Double) -> WorkUnit? {
        guard let i = pendingChecks.firstIndex(where: { destinations.contains($0.destination) }) else { return nil }
        let unit = pendingChecks.remove(at: i)
        running.start(Running(unit: unit, start: now, agent: slot.agent))
        return unit
    }

    /// After a unit ended: each of its tests that passed on a retry, having failed after other tests in its
    /// process, gets one order check.
    func scheduleOrderChecks(after done: UnitRecord) {
        // Not measured work: its retry was a re-measure alone, and a check beside other work would distort it again.
        for item in done.unit.items where item.retry > 0 && !item.exclusive {
            for id in item.testIDs where done.result.attempts[id]?.outcome == .passed {
                let key = RunLedger.ResultKey(destination: item.destination, test: id)
                guard checksMade[key] == nil,
                      let failed = OrderCheck.failure(toCheck: ledger.attempts(of: key), passedIn: done.unit.id),
                      let position = failed.position else { continue }
                let suspects = ledger.predecessors(inUnit: failed.unit, before: position)
                guard !suspects.isEmpty else { continue }
                let check = OrderCheck(victim: id, destination: item.destination, framework: item.framework,
                                       failedIn: failed.unit, failedAs: failed.outcome, suspects: suspects)
                let unit = enqueue(check, before: suspects)
                progress(.phase("\(id) failed in unit \(failed.unit) and passed on its retry: order check (unit \(unit)) "
                    + "runs it again after the \(suspects.count) test\(suspects.count == 1 ? "" : "s") that ran before it there"))
            }
        }
    }

    /// A check unit: `before` in their order, then the victim, each class one item; returns its id.
    @discardableResult
    func enqueue(_ check: OrderCheck, before: [TestID]) -> Int {
        // A seed of its own (`WorkUnit.seed(run:)` mixes in the retry number): a test that draws its failures from
        // FANOUT_SEED must not fail again here only because its first seed came back.
        let key = RunLedger.ResultKey(destination: check.destination, test: check.victim)
        let retry = ledger.attempts(of: key).count + (checksMade[key] ?? 0)
        checksMade[key, default: 0] += 1
        var items = WorkItem.replaying(before + [check.victim], framework: check.framework, destination: check.destination)
        for i in items.indices { items[i].retry = retry }
        let unit = dispatch.makeUnit(items)
        checkUnits[unit.id] = check
        pendingChecks.append(unit)
        wakeAll()
        return unit.id
    }

    /// A check unit ended: the classifying check decides order-dependent or flaky; a step answers its search.
    func orderCheckEnded(_ done: UnitRecord, _ check: OrderCheck) {
        // No check adds an attempt here: a passing one leaves a flaky test's result as it was (its unit stays in the
        // report, `replayOf` naming the test); a failing one counts once the alone stage confirms it.
        let attempt = ledger.recordCheck(done, victim: check.victim, replayOf: check.failedIn)
        let key = RunLedger.ResultKey(destination: check.destination, test: check.victim)
        switch check.next(after: attempt, unit: done.unit.id, ending: done.ending.description) {
        case .answer:
            stepWaiters.removeValue(forKey: done.unit.id)?.resume(returning: attempt)
        case .runAlone(let alone):
            enqueue(alone, before: [])
        case .notOrderDependent(let why):
            progress(.phase(why))
        case .orderDependent(let counted):
            ledger.count(counted, of: check.victim, destination: check.destination)
            confirmed(check, key: key, checkUnit: counted.unit)
        }
    }

    /// An order-dependent test: the finding, and the search for its polluters when there are several suspects.
    private func confirmed(_ check: OrderCheck, key: RunLedger.ResultKey, checkUnit: Int) {
        let attempt = check.failedAgain ?? Attempt(outcome: check.failedAs, duration: 0, unit: checkUnit, agent: "")
        var finding = OrderDependence(unit: check.failedIn, suspects: check.suspects, checkUnit: checkUnit)
        if check.suspects.count == 1 { finding.polluters = check.suspects }
        ledger.orderDependence[key] = finding
        progress(.phase("\(check.victim) is ORDER-DEPENDENT: it \(attempt.outcome.rawValue) again after the "
            + "\(check.suspects.count) test\(check.suspects.count == 1 ? "" : "s") that preceded it in unit \(check.failedIn)"
            + (check.suspects.count == 1 ? " (the polluter: \(check.suspects[0]))" : "")))
        if check.suspects.count > 1, bisectBudget > 0, !stopped { startSearch(check, key: key) }
    }

    /// Narrows an order-dependent test's suspects down to its polluter(s), each step a check unit.
    private func startSearch(_ check: OrderCheck, key: RunLedger.ResultKey) {
        searching[check.destination, default: 0] += 1
        let deadline = bisectDeadline ?? clock.now() + bisectBudget
        bisectDeadline = deadline
        let search = Bisection()
        progress(.phase("bisecting \(check.victim): at most \(search.bound(predecessors: check.suspects.count)) processes "
            + "within the run's bisection budget (--bisect-budget)"))
        Task { [clock] in
            let result = await search.run(predecessors: check.suspects, confirmed: true,
                                          inBudget: { clock.now() < deadline }) { before in
                let attempt = await self.step(check, before: before)
                guard let attempt else { return .other("the step's unit did not run the test") }
                switch attempt.outcome {
                case .passed, .flaky: return .passes
                case check.failedAs: return .fails
                default: return .other("the test \(attempt.outcome.rawValue) in a step where it \(check.failedAs.rawValue) in the run")
                }
            }
            self.searchEnded(key, result)
        }
    }

    /// One bisection step: a check unit, awaited.
    private func step(_ check: OrderCheck, before: [TestID]) async -> Attempt? {
        guard !stopped else { return nil }
        var step = check
        step.stage = .step
        let id = enqueue(step, before: before)
        return await withCheckedContinuation { stepWaiters[id] = $0 }
    }

    private func searchEnded(_ key: RunLedger.ResultKey, _ result: Bisection.Finding) {
        searching[key.destination, default: 1] -= 1
        if searching[key.destination] == 0 { searching[key.destination] = nil }
        if var finding = ledger.orderDependence[key] {
            if result.conclusion == .found { finding.polluters = result.polluters }
            finding.search = "\(result.conclusion.rawValue) in \(result.runs) processes: \(result.message)"
            ledger.orderDependence[key] = finding
            progress(.phase("bisection of \(key.test): " + (result.conclusion == .found
                ? "polluter\(result.polluters.count == 1 ? "" : "s") \(result.polluters.map(\.description).joined(separator: " + "))"
                : finding.search ?? "")))
        }
        wakeAll()
    }

    /// The run is stopping: waiting checks will not run, and searches waiting for a step are answered.
    func abandonOrderChecks() {
        for unit in pendingChecks { checkUnits[unit.id] = nil }
        pendingChecks.removeAll()
        let waiting = stepWaiters
        stepWaiters.removeAll()
        for (_, c) in waiting { c.resume(returning: nil) }
    }
}
