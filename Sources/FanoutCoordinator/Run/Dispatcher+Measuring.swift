import FanoutCore

/// Performance tests measured alone (README "Performance tests"). An exclusive unit (a class known to measure)
/// starts only on an idle agent; while it runs, or while any unit that has started printing measurements runs,
/// nothing else starts on that agent: no queued work, no stolen part, no copy of a straggler. Each measurement says
/// whether it was taken alone: no other unit ran on its agent between its test's start and the measurement.
extension Dispatcher {
    /// Whether the agent is held by a unit that measures: nothing else may start there.
    func isHeldForMeasuring(_ agent: String) -> Bool {
        running.values.contains { $0.agent == agent && ($0.measuring || $0.unit.items.contains(where: \.exclusive)) }
    }

    /// A running unit printed a measurement of `test`: from now on its agent is held, and the measurement is
    /// marked alone or not.
    func unitMeasured(_ unit: Int, test: TestID, now: Double) {
        guard let me = running[unit] else { return }
        // A class said not to be a performance class (`not_exclusive`) holds nothing.
        let shared = me.unit.items.contains { $0.suite == test.suite && $0.shared }
        if !me.measuring && !shared { running[unit]?.measuring = true }
        let since = me.current?.test == test ? me.current?.since ?? me.start : me.start
        let others = running.contains { $0.key != unit && $0.value.agent == me.agent }
        let overlapped = (endedSpans[me.agent] ?? []).contains { $0.unit != unit && $0.end > since && $0.start < now }
        measuredAlone[unit, default: [:]][test] = !others && !overlapped && (measuredAlone[unit]?[test] ?? true)
    }

    /// A unit left its agent: its span is kept while a running unit there may still be measuring over it.
    func agentSpanEnded(_ unit: Int, agent: String, start: Double, end: Double) {
        let earliest = running.values.filter { $0.agent == agent }.map(\.start).min()
        var spans = endedSpans[agent] ?? []
        spans.append(AgentSpan(unit: unit, start: start, end: end))
        endedSpans[agent] = earliest.map { e in spans.filter { $0.end > e } } ?? []
    }
}

/// When a unit ran on an agent.
struct AgentSpan: Sendable {
    var unit: Int
    var start: Double
    var end: Double
}
