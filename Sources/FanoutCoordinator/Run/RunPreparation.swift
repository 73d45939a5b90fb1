import FanoutAgents
import FanoutCore
import FanoutHistory
import Foundation

/// Lists the tests of a built product for one destination (by default `Discovery`, which runs the binary).
typealias Discover = @Sendable (TestProduct, DestinationSpec) async throws(FanoutError) -> Catalog

/// What a run does beside its preparation, told when: something will be built and run (the agents get ready), and
/// each destination's product is built (it is deployed to the agents while the tests are listed and planned).
struct PreparationSideline: Sendable {
    var willRun: @Sendable () -> Void = {}
    var built: @Sendable (_ destinations: [DestinationSpec], _ products: [String: TestProduct]) -> Void = { _, _ in }
}

/// Everything before the first unit runs: build each distinct build setting once, discover each destination's
/// tests, estimate them from the timing history, split long classes, and plan (`fanout plan` and `fanout list`
/// stop here).
struct RunPreparation: Sendable {
    let settings: RunSettings
    /// Every slot of the run's agents.
    let slotCount: Int
    let discover: Discover
    /// The run's one session with its timing history (``HistorySession``).
    let history: HistorySession
    let progress: ProgressHandler

    /// The stages, in the order of docs/ARCHITECTURE.md's diagram: select → build → discover → quarantine →
    /// estimate (and split) → shard → repeat → plan. Each stage is a function below, named for what it does.
    /// `timeline` (on `runClock`) holds the run's phases so far; the prepared run carries it on with the stages'.
    func prepare(timeline: PhaseTimeline = PhaseTimeline(), runClock: RunClock = RunClock(ContinuousClock()),
                 sideline: PreparationSideline = PreparationSideline()) async throws(FanoutError) -> PreparedRun {
        let clock = ContinuousClock()
        let start = clock.now
        var timeline = timeline
        try settings.validate()
        // Bad filters are bad input, said before anything is built.
        let filter = try ClassFilter(filters: settings.filters, skips: settings.skips)
        let destinations = try settings.activeDestinations()
        // Selective testing decides from the sources, before anything is built: when nothing changed, nothing is.
        var selective = settings.tracksInputs
            ? try await SelectivePlan.make(settings: settings, destinations: destinations, history: history,
                                         progress: progress) : nil
        if selective != nil { timeline.end("selective", at: runClock.now()) }
        if let plan = selective, plan.skipsEverything, settings.selective.alwaysRun.isEmpty {
            progress(.phase("selective: every test target is unchanged since its last full pass: nothing to build or run"))
            var prepared = PreparedRun(destinations: destinations, products: [:], catalogs: [:], items: [], shards: nil,
                                       plan: Scheduler(items: [], options: schedulerOptions).plan(stealing: nil),
                                       timeLimits: try TimeLimitBook(settings: settings, destinations: destinations, items: [],
                                                                     histories: [:]),
                                       warnings: [], slots: slotCount, preparation: (clock.now - start).seconds)
            prepared.selective = plan
            prepared.timeline = timeline
            return prepared
        }
        sideline.willRun()
        // The timing history is read while the products are built and listed: it needs the destinations' names
        // alone, and reading it (a tenth of a second or more for thousands of tests) no longer waits for them.
        let names = destinations.map(\.name)
        let reading = Task { () -> ([String: TimingHistory], [SuiteID: Set<String>], [String]) in
            var warnings: [String] = []
            let (histories, measured) = readHistories(names, warnings: &warnings)
            return (histories, measured, warnings)
        }
        // A stage that fails waits for the read first, so that nothing reads the history once the run has ended.
        let products: [String: TestProduct]
        var catalogs: [String: Catalog]
        let quarantine: QuarantinePlan
        do {
            products = try await build(destinations)
            sideline.built(destinations, products)
            timeline.end("build", at: runClock.now())
            let fullCatalogs: [String: Catalog]
            (catalogs, fullCatalogs) = try await discover(destinations, products: products, filter: filter)
            quarantine = try quarantinePlan(selected: catalogs, full: fullCatalogs)
            catalogs = quarantine.catalogs
            if var plan = selective {
                try plan.applyAlwaysRun(settings.selective.alwaysRun, catalogs: fullCatalogs)
                plan.catalog = fullCatalogs.mapValues { catalog in
                    catalog.suites.reduce(into: [:]) { byModule, suite in
                        byModule[suite.id.module, default: []].formUnion(suite.tests.map { TestID(suite: suite.id, name: $0) })
                    }
                }
                let skips = plan.skips
                for (name, catalog) in catalogs { catalogs[name] = catalog.filter { !skips($0.id.module, name) } }
                selective = plan
            }
        } catch {
            _ = await reading.value
            throw error
        }
        timeline.end("discover", at: runClock.now())
        let (histories, measured, warnings) = await reading.value
        timeline.end("history", at: runClock.now())
        var items = try estimate(destinations, catalogs: catalogs, histories: histories, measured: measured,
                                 quarantine: quarantine)
        let shards = try shard(&items)
        if let plan = selective {
            // After the shards are cut, so that every CI job cuts the same shards whatever its history holds: a job
            // skips only what it has a full pass on record for, and never runs another job's part.
            let skips = plan.skips
            items.removeAll { skips($0.suite.module, $0.destination) }
            if plan.feedbackFirst { markFeedbackFirst(&items, plan: plan) }
        }
        items = repeatAndShuffle(items)
        timeline.end("estimate", at: runClock.now())
        let plan = Scheduler(items: items, options: schedulerOptions).plan(stealing: StealPolicy(overhead: settings.invocationOverhead))
        let limits = try TimeLimitBook(settings: settings, destinations: destinations, items: items, histories: histories)
        var prepared = PreparedRun(destinations: destinations, products: products, catalogs: catalogs, items: items, shards: shards,
                                   plan: plan, timeLimits: limits, warnings: warnings + quarantine.outcome.warnings,
                                   slots: slotCount, preparation: (clock.now - start).seconds)
        timeline.end("plan", at: runClock.now())
        prepared.timeline = timeline
        prepared.quarantine = quarantine.outcome
        prepared.selective = selective
        if settings.isRepeating || settings.seed != nil { prepared.seed = settings.seed ?? Int.random(in: 0...Int(Int32.max)) }
        // Of a run split across CI jobs, the first shard reports the tests the quarantine kept from running.
        if let shard = settings.shard, shard.index != 1 { prepared.quarantine.skipped = [] }
        return prepared
    }

    /// Build: each distinct build setting once; destinations that share one share its product.
    private func build(_ destinations: [DestinationSpec]) async throws(FanoutError) -> [String: TestProduct] {
        var builds: [String: TestProduct] = [:]
        var products: [String: TestProduct] = [:]
        for spec in destinations {
            var build = settings.buildSettings(for: spec)
            let key = "\(build.configuration) \(build.buildFlags.joined(separator: " ")) \(build.bundlePath ?? "")"
            if builds[key] == nil {
                // Two settings of one configuration would overwrite each other's products: separate build folders.
                let sameConfiguration = Set(destinations.map { settings.buildSettings(for: $0) }.filter {
                    $0.configuration == build.configuration }.map(\.buildFlags)).count > 1
                if sameConfiguration, !build.buildFlags.isEmpty, build.bundlePath == nil {
                    let base = build.scratchPath ?? (URL(fileURLWithPath: build.packagePath).path + "/.build")
                    build.scratchPath = base + "-fanout-" + Self.stableDigest(key)
                }
                builds[key] = try await ProductBuilder(settings: build).product(progress: progress)
            }
            products[spec.name] = builds[key]
        }
        return products
    }

    /// Discover: each destination's tests, as found (`full`) and as the filters select them.
    private func discover(_ destinations: [DestinationSpec], products: [String: TestProduct],
                          filter: ClassFilter) async throws(FanoutError) -> (selected: [String: Catalog], full: [String: Catalog]) {
        var catalogs: [String: Catalog] = [:]
        var fullCatalogs: [String: Catalog] = [:]
        for spec in destinations {
            guard let product = products[spec.name] else { continue }
            progress(.phase("discovering tests in \(product.binary) for \(spec.name)"))
            let full = try await discover(product, spec)
            guard full.testCount > 0 else {
                throw FanoutError("the product \(product.binary) contains no tests",
                                  hint: "Check that the package has test targets with XCTest classes or Swift Testing suites.")
            }
            let catalog = full.filter { filter.accepts($0.id) }
            guard catalog.testCount > 0 else {
                throw FanoutError(
                    "no test class matches the filters (--filter \(settings.filters.joined(separator: " ")) --skip \(settings.skips.joined(separator: " ")))",
                    hint: "Filters are regexes over Module.Class; `fanout list` shows the \(full.suites.count) classes found.")
            }
            catalogs[spec.name] = catalog
            fullCatalogs[spec.name] = full
        }
        return (catalogs, fullCatalogs)
    }

    /// Estimate and split: each destination's work items from its history, the tests that measure separated to run
    /// alone, long classes split (unless kept whole or dealt by `--shuffle`), with what the history knows of each
    /// class's CPU and memory.
    private func estimate(_ destinations: [DestinationSpec], catalogs: [String: Catalog],
                          histories: [String: TimingHistory], measured: [SuiteID: Set<String>],
                          quarantine: QuarantinePlan) throws(FanoutError) -> [WorkItem] {
        let keepWhole = try ClassPatterns(settings.keepWhole, option: "keep_whole")
        let exclusive = try PerformanceClasses(settings: settings, measured: measured,
                                               fromSources: PerformanceClasses.measuringInSources(of: settings))
        // With shards, a class is split for the same slots in every job (not this job's own: jobs of different sizes
        // would cut different shards), so that its groups spread over shards. In queue mode the seeder's items are
        // every job's: split for the build's jobs (its fallback shards' count, else 4), not for the seeder alone.
        let splitSlots = settings.shard.map { ShardPlanner.splitSlots($0.count) }
            ?? settings.queue.map { ShardPlanner.splitSlots($0.fallbackShard?.count ?? 4) } ?? slotCount
        let splitter = MethodSplitter(slots: splitSlots,
                                      overhead: settings.invocationOverhead,
                                      percentile: settings.percentile / 100)
        var items: [WorkItem] = []
        for spec in destinations {
            guard let catalog = catalogs[spec.name], let history = histories[spec.name] else { continue }
            var whole = settings.estimator.workItems(for: catalog, destination: spec.name, history: history,
                                                     others: Array(histories.values))
            quarantine.mark(&whole)
            // The tests that measure run alone on their agent, in one piece: their measurements must not share the
            // machine. The rest of a performance class is work like any other (split, shared, stolen from).
            whole = whole.flatMap { exclusive.separate($0, splitter: splitter, history: history) }
            let keep: (SuiteID) -> Bool = { keepWhole.matches($0) }
            // `--shuffle` deals whole classes: splitting follows the history, and the same seed must deal the same
            // processes from one run to the next.
            var mine = settings.splitClasses && settings.shuffle == nil
                ? splitter.split(whole, history: history, keepWhole: keep) : whole
            for i in mine.indices {
                if exclusive.notExclusive.matches(mine[i].suite) { mine[i].shared = true }
                if keepWhole.matches(mine[i].suite) { mine[i].keepWhole = true }
                mine[i].cpuShare = history.cpuShare[mine[i].suite]
                mine[i].peakMemory = history.peakMemory[mine[i].suite]
            }
            items += mine
        }
        let alone = Set(items.filter(\.exclusive).map(\.suite)).sorted()
        if !alone.isEmpty {
            let shown = alone.prefix(5).map { suite in
                let part = exclusive.measuringTests(of: suite).map { "\($0.count == 1 ? "1 test" : "\($0.count) tests") of " } ?? ""
                return "\(part)\(suite) (\(exclusive.why(suite) ?? ""))"
            }
            progress(.phase("measured alone, nothing else on their agent while they run: \(shown.joined(separator: ", "))"
                + (alone.count > 5 ? " and \(alone.count - 5) more" : "")))
        }
        return items
    }

    /// Shard (`--shard I/N`): the items are cut into the build's shards and this job keeps its own; returns every
    /// shard, nil without `--shard`.
    private func shard(_ items: inout [WorkItem]) throws(FanoutError) -> [[WorkItem]]? {
        guard let shard = settings.shard else { return nil }
        let all = items
        let shards = ShardPlanner.shards(all, count: shard.count)
        items = shards[shard.index - 1]
        guard !items.isEmpty else {
            throw FanoutError("shard \(shard) has nothing to run: the \(all.count) work items went to the other shards",
                              hint: "Use at most \(all.count) shards, or select more tests (`fanout plan --shards N` previews the split).")
        }
        progress(.phase("shard \(shard): \(items.count) of \(all.count) work items"))
        return shards
    }

    /// Repeat (`--repeat N`: one copy of every item per repetition, each in processes of its own) and shuffle
    /// (`--shuffle SEED`: classes dealt at random to processes).
    private func repeatAndShuffle(_ items: [WorkItem]) -> [WorkItem] {
        var items = items
        if settings.isRepeating {
            let once = items
            items = (1...settings.repetitions).flatMap { r in
                once.map { item in
                    var copy = item
                    copy.repetition = r
                    return copy
                }
            }
        }
        if let seed = settings.shuffle {
            // Repetitions each get a deal of their own (ShuffleDeal keys it by repetition): a `--repeat N --shuffle`
            // hunt puts other tests before each test in every repetition.
            items = ShuffleDeal.deal(items, seed: seed, processes: slotCount)
            progress(.phase("--shuffle \(seed): classes dealt at random to \(Set(items.compactMap(\.batch)).count) processes "
                + "(replay this order with --shuffle \(seed) and the same slots); inside a process XCTest runs its classes in the "
                + "binary's order and Swift Testing runs suites at the same time: neither order can be chosen on Linux"))
        }
        return items
    }

    /// Reads the quarantine file and applies it: `skip` entries leave the catalogs, `mute` ones are remembered. An
    /// entry for a destination that is not configured is an error (a typo would quarantine nothing).
    private func quarantinePlan(selected: [String: Catalog], full: [String: Catalog]) throws(FanoutError) -> QuarantinePlan {
        let quarantine = try QuarantineFile.load(settings.quarantinePath)
        let configured = Set(settings.configuredDestinations.map(\.name))
        for entry in quarantine.entries {
            if let d = entry.destination, !configured.contains(d) {
                throw FanoutError("\(settings.quarantinePath): the entry for \(entry.test) is for the destination '\(d)', "
                                  + "which is not configured",
                                  hint: "Configured destinations: \(configured.sorted().joined(separator: ", ")). Fix the "
                                    + "entry's `destination`, or remove it to apply it on every destination.")
            }
        }
        let plan = QuarantinePlan(quarantine, selected: selected, full: full,
                                  today: settings.quarantineToday ?? QuarantineFile.day())
        if selected.values.contains(where: { $0.testCount > 0 }), plan.catalogs.values.allSatisfy({ $0.testCount == 0 }) {
            throw FanoutError("every selected test is quarantined with `skip` in \(settings.quarantinePath): nothing to run",
                              hint: "Select other tests, or release entries with `fanout quarantine remove`.")
        }
        return plan
    }

    /// `feedback_first`: the items of targets whose inputs changed or whose last run failed, and of classes that failed
    /// recently, start first.
    private func markFeedbackFirst(_ items: inout [WorkItem], plan: SelectivePlan) {
        var failed: [String: Set<SuiteID>] = [:]
        if let store = try? history.existing() {
            for d in Set(items.map(\.destination)) {
                failed[d] = (try? store.recentlyFailedClasses(destination: d, runs: Self.feedbackRuns)) ?? []
            }
        }
        let likelyToFail = plan.likelyToFail
        for i in items.indices {
            let item = items[i]
            if likelyToFail(item.suite.module, item.destination)
                || failed[item.destination]?.contains(item.suite) == true {
                items[i].startsFirst = true
            }
        }
    }

    /// How many recent runs `feedback_first` looks back over for failures.
    static let feedbackRuns = 5

    var schedulerOptions: SchedulerOptions {
        SchedulerOptions(slots: slotCount, overhead: settings.invocationOverhead)
    }

    /// Each destination's own timing history (estimates, flakiness and baselines never mix destinations).
    /// Each destination's timing history, and the tests that have measured (by class).
    private func readHistories(_ destinations: [String], warnings: inout [String])
        -> ([String: TimingHistory], [SuiteID: Set<String>])
    {
        var out = Dictionary(uniqueKeysWithValues: destinations.map { ($0, TimingHistory.empty($0)) })
        do {
            guard let store = try history.existing() else { return (out, [:]) }
            warnings += history.takeNotes()
            // Other destinations known to the history lend their times to classes never run on these.
            let known = Set(try store.recentRuns(limit: 50).flatMap(\.destinations)).union(destinations)
            for d in known { out[d] = try store.timingHistory(destination: d, window: settings.historyWindow) }
            return (out, try store.measuringTests())
        } catch {
            warnings.append("timing history not used: \(error)")
        }
        return (out, [:])
    }

    /// A short digest that is the same in every process (FNV-1a, 64-bit): Swift's `hashValue` is seeded per process,
    /// so a build folder named by it would change every run and rebuild from scratch.
    static func stableDigest(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
