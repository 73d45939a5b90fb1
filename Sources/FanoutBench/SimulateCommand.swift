import ArgumentParser

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Drive Fanout's real Scheduler on a virtual clock over a huge simulated fleet.",
        discussion: """
            Items get lognormal estimates; each one's actual time is its estimate × (1 + noise·N(0,1)), never below \
            5 % of it. Free slots pull units from the scheduler in time order. With --fail, that fraction of the agents \
            dies at random times within the predicted run: what their units finished stays done, the rest goes back \
            through Scheduler.requeue and the survivors pick it up. Reports planning time (Scheduler init + plan()), \
            the dispatch loop's time, makespan / LB and the peak memory of this process, and checks that every item \
            ran to completion exactly once.
            """)

    @Option(help: "Classes (work items).")
    var classes = 100_000
    @Option(help: "Agents.")
    var agents = 1_000
    @Option(help: "Slots per agent.")
    var slots = 4
    @Option(help: "Duration noise: the standard deviation of actual / estimate − 1.")
    var noise = 0.2
    @Option(help: "Fraction of agents that fail mid-run.")
    var fail = 0.0
    @Option(help: "The seed.")
    var seed: UInt64 = 1
    @Option(help: "Seconds to start one test process.")
    var overhead = 0.015
    @Option(help: "Median estimate of a class, in seconds.")
    var median = 2.0
    @Option(help: "σ of the lognormal estimates.")
    var sigma = 0.7
    @OptionGroup var output: ResultsFileOption

    func run() throws {
        let setup = SimulationSetup(classes: classes, agents: agents, slotsPerAgent: slots, noise: noise,
                                    failFraction: fail, seed: seed, overhead: overhead)
        let sim = Simulation(setup: setup, median: median, sigma: sigma)
        let r = sim.run()
        try output.write(r)
        print("""
            simulation: \(r.classes) classes over \(r.agents) agents × \(r.slotsPerAgent) slots, noise \(r.noise), \
            \(r.failedAgents) agents failing (seed \(r.seed))
              planning (median of 3): Scheduler.init \(f3(r.schedulerInitSeconds)) s (of which longestFirstMakespan \
            \(f3(r.longestFirstMakespanSeconds)) s) + plan() \(f3(r.planSeconds)) s = \
            \(f3(r.schedulerInitSeconds + r.planSeconds)) s; fastest \(f3(r.planningMinSeconds)) s (predicted makespan \(f2(r.predictedMakespan)) s, \
            planned LB \(f2(r.plannedLowerBound)) s)
              for comparison: Scheduler.init on items already in longest-first order \(f3(r.initPresortedSeconds)) s; \
            sorting \(r.classes) (estimate, index) keys \(f3(r.sortKeysSeconds)) s; plan() with fillWindow 1 \
            \(f3(r.planFillWindow1Seconds)) s
              dispatch loop: \(f3(r.dispatchLoopSeconds)) s for \(r.nextCalls) next() calls (\(r.units) units; slowest \
            next() \(f3(r.slowestNextMilliseconds)) ms); \(r.requeueCalls) requeue() calls for \(r.requeuedItems) items \
            took \(f3(r.requeueSeconds)) s
              makespan \(f2(r.makespan)) s, LB \(f2(r.lowerBound)) s: makespan / LB = \(f3(r.ratio))
              items completed \(r.itemsCompleted) of \(r.classes), twice \(r.itemsCompletedTwice), missing \(r.itemsMissing)\
            \(r.accountedFor ? " — every item ran exactly once" : " — NOT every item ran exactly once")
              peak memory (max RSS) \(f1(r.peakRSSMiB)) MiB
            """)
        if !r.accountedFor { throw ExitCode(1) }
    }
}
