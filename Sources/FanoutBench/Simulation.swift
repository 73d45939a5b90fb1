import FanoutCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a simulation is asked: the fleet, the noise, the failures. Its result carries it back.
struct SimulationSetup: Codable, Sendable {
    var classes: Int
    var agents: Int
    var slotsPerAgent: Int
    var noise: Double
    var failFraction: Double
    var seed: UInt64
    /// Seconds to start one test process (a Linux .xctest: ~15 ms).
    var overhead: Double
}

/// The real `Scheduler` driven on a virtual clock over a huge simulated fleet: lognormal estimates, actual durations
/// with noise around them, and agents that die mid-run (their unfinished items go back through `requeue`).
struct Simulation {
    var setup: SimulationSetup
    var median: Double
    var sigma: Double
    var planningRepeats = 3

    private struct Event {
        var time: Double
        var seq: Int
        /// >= 0: that slot is free; < 0: agent -(kind + 1) fails.
        var kind: Int
    }

    private struct Running {
        var unit: WorkUnit
        var start: Double
    }

    func run() -> SimulationResult {
        let (classes, agents, slotsPerAgent) = (setup.classes, setup.agents, setup.slotsPerAgent)
        let (noise, failFraction, seed, overhead) = (setup.noise, setup.failFraction, setup.seed, setup.overhead)
        var rng = SeededRandom(seed: seed)
        let destination = "sim"
        var items: [WorkItem] = []
        var actual: [Double] = []
        items.reserveCapacity(classes)
        actual.reserveCapacity(classes)
        for i in 0..<classes {
            let estimate = rng.lognormal(mu: log(median), sigma: sigma)
            let tests = max(1, min(40, Int(estimate / 0.25)))
            items.append(WorkItem(suite: SuiteID(module: "Module\(i % 97)", name: "C\(i)"), framework: .xctest,
                                  destination: destination, tests: (0..<tests).map { "test\($0)" }, isWholeSuite: true,
                                  estimate: estimate, source: .history(samples: 10)))
            actual.append(estimate * max(0.05, 1 + noise * rng.normal()))
        }
        let slots = agents * slotsPerAgent
        let options = SchedulerOptions(slots: slots, overhead: overhead)

        // Planning: what `fanout plan` and the start of every run pay. Measured `planningRepeats` times (this machine
        // is shared; the median is reported, the minimum too), the last scheduler then dispatches.
        var initTimes: [Double] = [], planTimes: [Double] = []
        var scheduler = Scheduler(items: [], options: options)
        var plan = scheduler.plan()
        for _ in 0..<max(1, planningRepeats) {
            // Free the previous round's scheduler and plan first: their deallocation is not planning.
            scheduler = Scheduler(items: [], options: options)
            plan = scheduler.plan()
            let t0 = ContinuousClock.now
            scheduler = Scheduler(items: items, options: options)
            let t1 = ContinuousClock.now
            plan = scheduler.plan()
            let t2 = ContinuousClock.now
            initTimes.append((t1 - t0).seconds)
            planTimes.append((t2 - t1).seconds)
        }
        // Part of init: predicting plain longest-first's end (a sort of the estimates and a heap of slots).
        let l0 = ContinuousClock.now
        _ = Scheduler.longestFirstMakespan(items.map(\.estimate), slots: slots, overhead: overhead)
        let longestFirstSeconds = (ContinuousClock.now - l0).seconds
        // Where init's time goes: the same init on items already in longest-first order (its sort then has nothing
        // to move), and what sorting plain (estimate, index) keys costs.
        let presorted = items.sorted { $0.estimate != $1.estimate ? $0.estimate > $1.estimate : $0.suite < $1.suite }
        let s0 = ContinuousClock.now
        let check = Scheduler(items: presorted, options: options)
        let s1 = ContinuousClock.now
        let sortedKeys = items.indices.map { (items[$0].estimate, $0) }.sorted { $0.0 > $1.0 }
        let s2 = ContinuousClock.now
        precondition(check.pendingCount == sortedKeys.count)
        // And plan() when a pull may look at one queued item only to fill its batch (fillWindow 1, default 256).
        var narrow = options
        narrow.fillWindow = 1
        let narrowScheduler = Scheduler(items: presorted, options: narrow)
        let w0 = ContinuousClock.now
        _ = narrowScheduler.plan()
        let planNarrowSeconds = (ContinuousClock.now - w0).seconds

        // Agents that fail, each at a random time within the predicted run.
        var failing = Array(0..<agents)
        failing.shuffle(using: &rng)
        failing = Array(failing.prefix(Int((Double(agents) * failFraction).rounded())))
        var failTime = [Double](repeating: .infinity, count: agents)
        var events = MinHeap<Event> { ($0.time, $0.seq) < ($1.time, $1.seq) }
        var seq = 0
        for a in failing {
            failTime[a] = rng.uniform(0.05, 0.9) * plan.predictedMakespan
            events.push(Event(time: failTime[a], seq: seq, kind: -(a + 1))); seq += 1
        }
        for s in 0..<slots { events.push(Event(time: 0, seq: seq, kind: s)); seq += 1 }

        var running = [Running?](repeating: nil, count: slots)
        var dead = [Bool](repeating: false, count: agents)
        var idle = Set<Int>()
        var completions = [UInt8](repeating: 0, count: classes)
        var makespan = 0.0
        var nextCalls = 0, units = 0, requeueCalls = 0, requeuedItems = 0
        var slowestNext = Duration.zero, requeueTime = Duration.zero
        func index(_ item: WorkItem) -> Int { Int(item.suite.name.dropFirst()) ?? -1 }

        let loopStart = ContinuousClock.now
        while let e = events.pop() {
            if e.kind < 0 {
                // An agent dies: what its units finished stays done; the rest goes back to the queue.
                let a = -e.kind - 1
                dead[a] = true
                var back: [WorkItem] = []
                for s in (a * slotsPerAgent)..<((a + 1) * slotsPerAgent) {
                    idle.remove(s)
                    guard let r = running[s] else { continue }
                    running[s] = nil
                    var t = r.start + overhead
                    for item in r.unit.items {
                        let i = index(item)
                        t += actual[i]
                        if t <= e.time {
                            completions[i] &+= 1
                            makespan = max(makespan, t)
                        } else {
                            var again = item
                            again.requeues += 1
                            back.append(again)
                        }
                    }
                }
                if !back.isEmpty {
                    let q0 = ContinuousClock.now
                    scheduler.requeue(back)
                    requeueTime += ContinuousClock.now - q0
                    requeueCalls += 1
                    requeuedItems += back.count
                    // Slots that found the queue empty must look again.
                    for s in idle { events.push(Event(time: e.time, seq: seq, kind: s)); seq += 1 }
                    idle.removeAll()
                }
                continue
            }
            let s = e.kind
            if dead[s / slotsPerAgent] { continue }
            if let r = running[s] {
                for item in r.unit.items { completions[index(item)] &+= 1 }
                makespan = max(makespan, e.time)
                running[s] = nil
            }
            let n0 = ContinuousClock.now
            let unit = scheduler.next(now: e.time)
            let spent = ContinuousClock.now - n0
            slowestNext = max(slowestNext, spent)
            nextCalls += 1
            guard let unit else {
                idle.insert(s)
                continue
            }
            units += 1
            running[s] = Running(unit: unit, start: e.time)
            let end = e.time + overhead + unit.items.reduce(0) { $0 + actual[index($1)] }
            events.push(Event(time: end, seq: seq, kind: s)); seq += 1
        }
        let loopEnd = ContinuousClock.now

        // Lower bound with the capacity the fleet really had: a failed slot worked until its agent died.
        let totalActual = actual.reduce(0, +)
        let longest = actual.max() ?? 0
        let cutoffs = (0..<agents).flatMap { a in Array(repeating: failTime[a], count: slotsPerAgent) }.sorted()
        let lb = max(longest, Self.capacityBound(work: totalActual, slotEnds: cutoffs))

        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let peakRSSBytes = Double(usage.ru_maxrss) * 1024 // kilobytes on Linux
        #else
        getrusage(RUSAGE_SELF, &usage)
        let peakRSSBytes = Double(usage.ru_maxrss) // bytes on Darwin
        #endif
        return SimulationResult(setup: setup, outcome: SimulationOutcome(
            estimateModel: "lognormal estimates (median \(median) s, σ \(sigma)); actual = estimate × max(0.05, 1 + \(noise)·N(0,1))",
            schedulerInitSeconds: medianOf(initTimes), planSeconds: medianOf(planTimes),
            planningMinSeconds: zip(initTimes, planTimes).map { $0 + $1 }.min() ?? 0,
            longestFirstMakespanSeconds: longestFirstSeconds, initPresortedSeconds: (s1 - s0).seconds,
            sortKeysSeconds: (s2 - s1).seconds, planFillWindow1Seconds: planNarrowSeconds,
            dispatchLoopSeconds: (loopEnd - loopStart).seconds, nextCalls: nextCalls,
            slowestNextMilliseconds: slowestNext.seconds * 1000, requeueCalls: requeueCalls,
            requeueSeconds: requeueTime.seconds, units: units, predictedMakespan: plan.predictedMakespan,
            plannedLowerBound: plan.lowerBound, makespan: makespan, lowerBound: lb, failedAgents: failing.count,
            requeuedItems: requeuedItems, itemsCompleted: completions.filter { $0 >= 1 }.count,
            itemsCompletedTwice: completions.filter { $0 > 1 }.count,
            itemsMissing: completions.filter { $0 == 0 }.count,
            peakRSSMiB: peakRSSBytes / (1024 * 1024)))
    }

    /// The smallest T with Σ min(T, end of slot) ≥ work: no schedule finishes the work before T.
    static func capacityBound(work: Double, slotEnds sorted: [Double]) -> Double {
        var done = 0.0, previous = 0.0
        var alive = sorted.count
        for end in sorted + [.infinity] {
            guard alive > 0 else { break }
            let span = end - previous
            if done + span * Double(alive) >= work { return previous + (work - done) / Double(alive) }
            done += span * Double(alive)
            previous = end
            alive -= 1
        }
        return previous
    }
}


