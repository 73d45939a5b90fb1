import FanoutAgents
import FanoutCore
import FanoutHistory
import FanoutReports
import FanoutRunners
import Foundation
import Synchronization

/// What `fanout run` produced.
public struct RunOutcome: Sendable {
    public var report: RunReport
    /// The report folder and the files written there (empty when writing failed: see the report's warnings).
    public var reportDirectory: String?
    public var files: [String]
    public var exitCode: ExitCode
}

/// Everything known before the first unit runs: `fanout plan` and `fanout list` stop here.
public struct Prepared: Sendable {
    public var destinations: [DestinationSpec]
    /// The built product of each destination (destinations with the same build setting share one).
    public var products: [String: TestProduct]
    /// What each destination has, after the filters (with `--shard`, the other shards' tests too).
    public var catalogs: [String: Catalog]
    /// What this run runs (with `--shard`, this shard's part).
    public var items: [WorkItem]
    /// With `--shard`: every shard's items, in shard order (what the other CI jobs run).
    public var shards: [[WorkItem]]?
    public var plan: Plan
    public var warnings: [String]
    public var slots: Int
    /// Seconds spent building and discovering.
    public var preparation: Double

    public var testCount: Int { items.reduce(0) { $0 + $1.tests.count } }
    public func spec(_ destination: String) -> DestinationSpec? { destinations.first { $0.name == destination } }
}

/// Runs the whole job: config → build → discover → estimate → plan → dispatch → collect → report → history.
public final class Coordinator: Sendable {
    public static let version = "0.1.0"

    public let settings: RunSettings
    private let injected: [any Transport]?
    private let progress: ProgressHandler
    private let interruption = Mutex(ExitCode.interrupted)

    /// Says why the run is about to be cancelled (SIGTERM rather than SIGINT): the report's exit code follows it.
    public func noteInterruption(_ code: ExitCode) {
        interruption.withLock { $0 = code }
    }

    /// Without transports: the config's SSH agents, or the embedded default of `settings.slots` local slots.
    public init(settings: RunSettings, transports: [any Transport]? = nil, progress: @escaping ProgressHandler = { _ in }) {
        self.settings = settings
        self.injected = transports
        self.progress = progress
    }

    private var slotCount: Int {
        if let injected { return injected.reduce(0) { $0 + $1.slots } }
        return settings.agents.isEmpty ? settings.slots : settings.agents.reduce(0) { $0 + $1.slots }
    }

    /// The agents of this run: each product is packed once for every SSH agent.
    private func makeTransports() -> ([any Transport], ProductArchives?) {
        if let injected { return (injected, nil) }
        if settings.agents.isEmpty { return ([LocalTransport(slots: settings.slots)], nil) }
        let archives = ProductArchives()
        return (settings.agents.map { SSHTransport(spec: $0, settings: settings.ssh, archives: archives) }, archives)
    }

    /// The destinations an agent serves (local slots serve them all).
    private func served(by transport: any Transport, of destinations: [DestinationSpec]) -> [DestinationSpec] {
        let serving = transport.serving
        return destinations.filter { serving.serves(name: $0.name, requiredTags: $0.tags) }
    }

    // MARK: - Before the run

    public func prepare() async throws(FanoutError) -> Prepared {
        let clock = ContinuousClock()
        let start = clock.now
        try settings.validate()
        let filter = try ClassFilter(filters: settings.filters, skips: settings.skips)
        let destinations = try settings.activeDestinations()

        // Each distinct build setting is built once; destinations that share one share its product.
        var builds: [String: TestProduct] = [:]
        var products: [String: TestProduct] = [:]
        for spec in destinations {
            var build = settings.buildSettings(for: spec)
            let key = "\(build.configuration) \(build.buildFlags.joined(separator: " "))"
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

        var catalogs: [String: Catalog] = [:]
        for spec in destinations {
            guard let product = products[spec.name] else { continue }
            progress(.phase("discovering tests in \(product.binary) for \(spec.name)"))
            let full = try await Discovery().catalog(of: product, destination: spec.destination, frameworks: spec.frameworks)
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
        }

        var warnings: [String] = []
        let histories = readHistories(destinations.map(\.name), warnings: &warnings)
        let keepWhole = try ClassPatterns(settings.keepWhole, option: "keep_whole")
        let exclusive = try ClassPatterns(settings.exclusive, option: "exclusive")
        // With shards, a class is split for every job's slots (every job has the same), so that its groups spread
        // over shards.
        let splitter = MethodSplitter(slots: slotCount * (settings.shard?.count ?? 1), overhead: settings.invocationOverhead,
                                      percentile: settings.percentile / 100)
        var items: [WorkItem] = []
        for spec in destinations {
            guard let catalog = catalogs[spec.name], let history = histories[spec.name] else { continue }
            let whole = settings.estimator.workItems(for: catalog, destination: spec.name, history: history,
                                                     others: Array(histories.values))
            // Exclusive classes run alone on their agent, and whole: their measurements must not share the machine.
            let keep: (SuiteID) -> Bool = { keepWhole.matches($0) || exclusive.matches($0) }
            var mine = settings.splitClasses ? splitter.split(whole, history: history, keepWhole: keep) : whole
            for i in mine.indices {
                if exclusive.matches(mine[i].suite) { mine[i].exclusive = true }
                if keepWhole.matches(mine[i].suite) { mine[i].keepWhole = true }
            }
            items += mine
        }
        var shards: [[WorkItem]]?
        if let shard = settings.shard {
            let all = items
            shards = ShardPlanner.shards(all, count: shard.count)
            items = shards?[shard.index - 1] ?? []
            guard !items.isEmpty else {
                throw FanoutError("shard \(shard) has nothing to run: the \(all.count) work items went to the other shards",
                                  hint: "Use at most \(all.count) shards, or select more tests (`fanout plan --shards N` previews the split).")
            }
            progress(.phase("shard \(shard): \(items.count) of \(all.count) work items"))
        }
        let plan = Scheduler(items: items, options: schedulerOptions).plan(stealing: StealPolicy(overhead: settings.invocationOverhead))
        return Prepared(destinations: destinations, products: products, catalogs: catalogs, items: items, shards: shards, plan: plan,
                        warnings: warnings, slots: slotCount, preparation: (clock.now - start).seconds)
    }

    private var schedulerOptions: SchedulerOptions {
        SchedulerOptions(slots: slotCount, overhead: settings.invocationOverhead)
    }

    /// Each destination's own timing history (estimates, flakiness and baselines never mix destinations).
    private func readHistories(_ destinations: [String], warnings: inout [String]) -> [String: TimingHistory] {
        var out = Dictionary(uniqueKeysWithValues: destinations.map { ($0, TimingHistory.empty($0)) })
        guard FileManager.default.fileExists(atPath: settings.historyPath) else { return out }
        do {
            let (store, notes) = try HistoryStore.open(at: settings.historyPath)
            warnings += notes
            // Other destinations known to the history lend their times to classes never run on these.
            let known = Set(try store.recentRuns(limit: 50).flatMap(\.destinations)).union(destinations)
            for d in known { out[d] = try store.timingHistory(destination: d, window: settings.historyWindow) }
        } catch {
            warnings.append("timing history not used: \(error)")
        }
        return out
    }

    // MARK: - The run

    public func run() async throws(FanoutError) -> RunOutcome {
        let startedAt = Date()
        let runID = Self.makeRunID(startedAt)
        let clock = ContinuousClock()
        let t0 = clock.now
        let now: @Sendable () -> Double = { (clock.now - t0).seconds }

        let reportDirectory = settings.reportDirectory.map { URL(fileURLWithPath: $0) }
            ?? ReportWriter.defaultDirectory(root: settings.reportRoot, runID: runID)
        try Self.checkWritable(reportDirectory)
        _ = try BaselineFile.load(settings.baselinesPath) // a broken baselines file is refused before anything runs
        let prepared = try await prepare()
        for w in prepared.warnings { progress(.warning(w)) }
        progress(.planned(tests: prepared.testCount, items: prepared.items.count, slots: prepared.slots,
                          predicted: prepared.plan.predictedMakespan, lowerBound: prepared.plan.lowerBound))

        let state = RunState(scheduler: Scheduler(items: prepared.items, options: schedulerOptions),
                             items: prepared.items, requeueBudget: settings.requeueBudget, retries: settings.retries,
                             slots: prepared.slots, progress: progress)
        for w in prepared.warnings { await state.warn(w) }

        let (transports, archives) = makeTransports()
        for spec in prepared.destinations where !transports.contains(where: { !served(by: $0, of: [spec]).isEmpty }) {
            await state.warn("no agent serves destination \(spec.name)"
                + (spec.tags.isEmpty ? "" : " (it requires tags \(spec.tags.joined(separator: ", ")))")
                + ": its tests cannot run")
        }
        let (interrupted, usable) = await dispatch(transports: transports, prepared: prepared, runID: runID,
                                                   state: state, now: now)
        await withTaskGroup(of: Void.self) { group in
            for transport in transports { group.addTask { await transport.shutdown() } }
        }
        await archives?.discard()
        if usable.isEmpty {
            await state.warn("no agent was usable: no test could run (see the warnings above for each agent)")
        }
        return await finish(prepared: prepared, state: state, runID: runID, startedAt: startedAt, now: now(),
                            interrupted: interrupted, transports: transports, usable: usable,
                            reportDirectory: reportDirectory)
    }

    /// Deploys to every agent in parallel; each agent's slots start taking work as soon as its own deployment is
    /// done. Returns whether the run was interrupted and the agents that were usable.
    private func dispatch(transports: [any Transport], prepared: Prepared, runID: String, state: RunState,
                          now: @escaping @Sendable () -> Double) async -> (Bool, [String]) {
        let (interrupted, usable) = await withTaskCancellationHandler {
            let usable = await withTaskGroup(of: String?.self) { group in
                for transport in transports {
                    group.addTask { [self] in
                        await serve(transport, prepared: prepared, runID: runID, state: state, now: now)
                            ? transport.name : nil
                    }
                }
                var names: [String] = []
                for await name in group { if let name { names.append(name) } }
                return names
            }
            return (Task.isCancelled, usable)
        } onCancel: {
            Task { await state.stop() }
        }
        return (interrupted, usable)
    }

    /// One agent for the whole run: deploy, run its slots until the queue is drained, and when it is lost, retry
    /// with backoff while work remains (re-admission). Returns whether the agent was ever usable.
    private func serve(_ transport: any Transport, prepared: Prepared, runID: String, state: RunState,
                       now: @escaping @Sendable () -> Double) async -> Bool {
        let mine = served(by: transport, of: prepared.destinations)
        guard !mine.isEmpty else { return false }
        var admitted = false
        var attempts = 0
        let backoff: [Double] = [1, 2, 4, 8, 15, 15]
        while !Task.isCancelled {
            var binaries: [String: String] = [:]
            do {
                progress(.phase(admitted ? "re-admitting \(transport.name)" : "deploying to \(transport.name)"))
                var byProduct: [String: String] = [:]
                for spec in mine {
                    guard let product = prepared.products[spec.name] else { continue }
                    if byProduct[product.binary] == nil {
                        byProduct[product.binary] = try await transport.prepare(product: product, runID: runID)
                    }
                    binaries[spec.name] = byProduct[product.binary]
                }
            } catch {
                guard admitted else {
                    await state.warn("agent \(transport.name) is not usable and is skipped: \(error)")
                    return false
                }
                guard attempts < backoff.count, await state.hasWork else {
                    await state.warn("agent \(transport.name) did not come back (\(error)); the run went on without it")
                    return true
                }
                try? await Task.sleep(for: .seconds(backoff[attempts]))
                attempts += 1
                continue
            }
            for notice in transport.takeNotices() { await state.warn(notice) }
            if admitted { await state.warn("agent \(transport.name) is back and takes work again") }
            let details = transport.details
            if let seconds = details.deploySeconds, let bytes = details.deployedBytes {
                progress(.phase("\(transport.name) ready in \(formatSeconds(seconds)): "
                    + (details.deployCached == true ? "product already in its cache (0 bytes sent)" : "sent \(bytes) bytes")))
            }
            admitted = true
            attempts = 0
            let ready = binaries
            await state.agentReady(transport.name, serves: Set(ready.keys),
                                   hardwareClass: await transport.hardwareClass())
            let lost = await withTaskGroup(of: Bool.self) { slots in
                for index in 0..<transport.slots {
                    let slot = SlotRef(agent: transport.name, index: index)
                    slots.addTask { [self] in
                        while transport.isUsable, let unit = await state.next(for: slot, now: now) {
                            let done = await execute(unit, on: transport, binary: ready[unit.destination] ?? "",
                                                     destination: prepared.spec(unit.destination)?.destination ?? settings.destination,
                                                     slot: slot, state: state, now: now)
                            await state.complete(done)
                            if case .agentLost(let why) = done.ending {
                                await state.warn("agent \(transport.name) was lost (\(why)): its unfinished work goes back to the queue")
                                return true
                            }
                        }
                        return false
                    }
                }
                var lost = false
                for await l in slots where l { lost = true }
                return lost
            }
            await state.agentGone(transport.name)
            guard lost, await state.hasWork else { break }
            await transport.reset()
            try? await Task.sleep(for: .seconds(backoff[0]))
            attempts = 1
        }
        return admitted
    }

    /// Runs one unit on one slot and collects what it produced.
    private func execute(_ unit: WorkUnit, on transport: any Transport, binary: String, destination: Destination,
                         slot: SlotRef, state: RunState, now: @escaping @Sendable () -> Double) async -> FinishedUnit {
        let start = now()
        let runner = Runners.runner(for: unit.framework)
        var collector = UnitCollector(unit: unit, agent: transport.name)
        progress(.unitStarted(unit: unit.id, agent: transport.name, slot: slot.index,
                              suites: Self.describe(unit), estimate: unit.estimate))
        let command: Command
        do {
            command = try runner.command(for: unit, binary: binary, destination: destination)
        } catch {
            let ending = UnitEnding.failedToStart(error.description)
            return FinishedUnit(unit: unit, slot: slot, startedAt: start, endedAt: now(), ending: ending, command: "",
                                log: "", result: collector.finish(ending, diagnostics: ""))
        }
        let parser = runner.makeParser(for: unit)
        let expected = Set(unit.testIDs)

        let stream = transport.run(command, timeout: settings.timeout(forEstimate: unit.estimate))
        // The unit is consumed in a task of its own, so that a twin that finishes first can stop just this unit.
        let consumer = Task { [collector, parser] in
            var collector = collector
            var parser = parser
            var log = LogBuffer()
            var stderrLog = LogBuffer(limit: 16 * 1024)
            var ending = UnitEnding.cancelled
            var handedOver = false
            /// False once the process starts a test that another unit took over: it is stopped right there.
            func collect(_ events: [TestEvent]) async -> Bool {
                for event in events {
                    if case .started(let id) = event, expected.contains(id),
                       await state.testStarted(id, unit: unit.id, now: now()) {
                        withUnsafeCurrentTask { $0?.cancel() } // ends the stream: the transport stops the process
                        return false
                    }
                    if let (id, attempt) = collector.consume(event), expected.contains(id) {
                        await state.recordTestEnded(id, attempt, destination: unit.destination, unit: unit.id)
                    }
                }
                return true
            }
            for await event in stream where !handedOver {
                switch event {
                case .output(.stdout, let bytes):
                    log.append(bytes)
                    handedOver = await !collect(parser.consume(stdout: bytes))
                case .output(.stderr, let bytes):
                    log.append(bytes)
                    stderrLog.append(bytes)
                    handedOver = await !collect(parser.consume(stderr: bytes))
                case .ended(let e):
                    ending = e
                }
            }
            if handedOver {
                ending = .handedOver
            } else {
                _ = await collect(parser.finish())
            }
            return (collector, log, stderrLog, ending)
        }
        await state.setCanceller(unit.id) { consumer.cancel() }
        let (finalCollector, log, stderrLog, ending) = await withTaskCancellationHandler {
            await consumer.value
        } onCancel: {
            consumer.cancel()
        }
        collector = finalCollector
        // Tests other units took over (work stealing) are theirs: not run here, not left over, not missing.
        collector.release(await state.handedOverTests(unit.id))
        let result = collector.finish(ending, diagnostics: stderrLog.text.trimmingTrailingNewlines())
        return FinishedUnit(unit: collector.unit.items.isEmpty ? unit : collector.unit, slot: slot, startedAt: start,
                            endedAt: now(), ending: ending, command: command.description, log: log.text, result: result)
    }

    static func describe(_ unit: WorkUnit) -> [String] {
        unit.items.map { $0.isWholeSuite ? $0.suite.description : "\($0.suite) (\($0.tests.count) tests)" }
    }

    // MARK: - After the run

    private func finish(prepared: Prepared, state: RunState, runID: String, startedAt: Date, now: Double,
                        interrupted: Bool, transports: [any Transport], usable: [String],
                        reportDirectory directory: URL) async -> RunOutcome {
        let reason = interrupted ? "the run was interrupted before this test ran"
            : usable.isEmpty ? "no agent was usable" : "no agent was left to run it"
        let results = await state.results(reasonForMissing: reason)
        let all = await state.finished.sorted { $0.unit.id < $1.unit.id }
        let finished = all.filter { !$0.superseded }
        let overheads = await state.measuredOverheads
        let warnings = await state.warnings
        let measurements = await state.measurements

        let classes = Self.classReports(items: prepared.items, finished: finished, results: results)
        let units = all.map { f in
            UnitReport(id: f.unit.id, destination: f.unit.destination, framework: f.unit.framework, agent: f.slot.agent,
                       slot: f.slot.index, suites: Self.describe(f.unit), testCount: f.unit.testCount,
                       estimate: f.unit.estimate, startedAt: f.startedAt, duration: f.endedAt - f.startedAt,
                       ending: f.superseded ? "stopped: its twin (straggler backup) finished first" : f.ending.description,
                       command: f.command, log: f.log, takenFrom: f.takenFrom, handedOver: f.handedOver > 0 ? f.handedOver : nil)
        }
        let firstStart = all.map(\.startedAt).min() ?? now
        let lastEnd = finished.map(\.endedAt).max() ?? now
        // The honest bound comes from the tests alone; the class-level one (over the pieces scheduled as one: a
        // whole class, or a group of a split class) says how well the chosen units were placed.
        let serving = Dictionary(uniqueKeysWithValues: prepared.destinations.map { spec in
            (spec.name, transports.filter { usable.contains($0.name) && !served(by: $0, of: [spec]).isEmpty }
                .reduce(0) { $0 + $1.slots })
        })
        let testWork = results.flatMap { r in
            r.attempts.map { MeasuredLowerBound.Work(destination: r.destination, seconds: $0.duration) }
        }
        let lowerBound = MeasuredLowerBound.perTest(testWork, slots: prepared.slots, slotsServing: serving)
        let actuals = classes.compactMap(\.actual)
        let longestPiece = finished.flatMap { $0.result.suiteDurations.values }.max() ?? 0
        let classLowerBound = max(lowerBound,
                                  Scheduler.lowerBound(work: actuals.reduce(0, +), longest: longestPiece, slots: prepared.slots))
        let counts = Counts(results.map(\.outcome))
        let infrastructure = counts.notRun > 0 || usable.isEmpty
            || finished.contains { $0.result.problem != nil }
        var exit: ExitCode = interrupted ? interruption.withLock { $0 }
            : counts.failures > 0 ? .testFailures
            : infrastructure ? .infrastructure : .success

        var report = RunReport(
            runID: runID, fanoutVersion: Self.version, startedAt: startedAt.roundedToMilliseconds,
            finishedAt: Date().roundedToMilliseconds,
            interrupted: interrupted,
            product: ProductInfo(package: settings.bundlePath == nil ? settings.packagePath : nil,
                                 bundle: prepared.products.values.map(\.binary).sorted().joined(separator: ", ")),
            destinations: prepared.destinations.map(\.name),
            agents: transports.map { t in
                let d = t.details
                return AgentInfo(name: t.name, transport: t.kind, slots: t.slots, host: d.host,
                                 deployedBytes: d.deployedBytes, deploySeconds: d.deploySeconds,
                                 problem: usable.contains(t.name) ? d.lostReason : "not usable (see warnings)",
                                 overhead: overheads[t.name])
            },
            plan: PlanReport(slots: prepared.slots, lowerBound: prepared.plan.lowerBound,
                             predictedMakespan: prepared.plan.predictedMakespan, totalEstimate: prepared.plan.totalWork),
            units: units, classes: classes, results: results, measurements: measurements, warnings: warnings,
            timing: Timing(wall: now, preparation: firstStart, makespan: max(0, lastEnd - firstStart),
                           lowerBound: lowerBound, classLowerBound: classLowerBound),
            exitCode: exit.rawValue)

        // Measurements judged against the baselines of their own destination and hardware class.
        let steals = await state.steals
        report.steals = steals.isEmpty ? nil : steals
        report.shard = settings.shard
        exit = BaselineFile.judgeFinishedRun(&report, settings: settings, rules: settings.performance, exit: exit)

        // Each measurement's trend is read before the run is recorded (a run is not its own past); a history that
        // does not exist yet has no past, and is not created for it when this run is not recorded.
        let readsTrends = !report.measurements.isEmpty && FileManager.default.fileExists(atPath: settings.historyPath)
        let records = settings.recordHistory && !interrupted
        if readsTrends || records {
            do {
                let (store, notes) = try HistoryStore.open(at: settings.historyPath)
                report.warnings += notes
                if readsTrends {
                    do {
                        try MeasurementTrends.fill(&report, from: store)
                    } catch {
                        report.warnings.append("performance trends were not read from the timing history: \(error)")
                    }
                }
                if records { try store.record(report) }
            } catch {
                report.warnings.append(records ? "the timing history was not updated: \(error)"
                                               : "performance trends were not read from the timing history: \(error)")
            }
        }

        do {
            let files = try ReportWriter().write(report, to: directory)
            if let problem = JobSummary.publish(from: files, environment: ProcessInfo.processInfo.environment) {
                progress(.warning(problem))
            }
            return RunOutcome(report: report, reportDirectory: directory.path, files: files.map(\.path), exitCode: exit)
        } catch {
            report.warnings.append("the report could not be written: \(error)")
            progress(.warning("the report could not be written: \(error)"))
            return RunOutcome(report: report, reportDirectory: nil, files: [],
                              exitCode: exit == .success ? .infrastructure : exit)
        }
    }

    /// Estimate versus actual per class and destination, pieces of split classes merged back into their class;
    /// a class's outcome is its worst test's.
    static func classReports(items: [WorkItem], finished: [FinishedUnit], results: [TestResult]) -> [ClassReport] {
        var byClass: [String: [Outcome]] = [:]
        for r in results { byClass["\(r.destination)|\(r.id.suite)", default: []].append(r.outcome) }
        var order: [String] = []
        var pieces: [String: [WorkItem]] = [:]
        for item in items {
            let key = "\(item.destination)|\(item.suite)"
            if pieces[key] == nil { order.append(key) }
            pieces[key, default: []].append(item)
        }
        return order.compactMap { key -> ClassReport? in
            guard let parts = pieces[key], let first = parts.first else { return nil }
            let mine = finished.filter { $0.unit.destination == first.destination }
            let runs = mine.filter { $0.result.suiteDurations[first.suite] != nil }
            let times = runs.compactMap { $0.result.suiteDurations[first.suite] }
            // Its time teaches the history only when every piece ran normally and together they covered the class.
            let covered = Set(runs.flatMap { $0.unit.items.filter { $0.suite == first.suite }.flatMap(\.tests) })
            let wanted = Set(parts.flatMap(\.tests))
            let complete = !runs.isEmpty && covered == wanted && runs.allSatisfy { $0.result.completeSuites.contains(first.suite) }
            return ClassReport(suite: first.suite, framework: first.framework, destination: first.destination,
                               testCount: wanted.count, estimate: parts.reduce(0) { $0 + $1.estimate },
                               estimateSource: parts.count > 1 ? "\(first.source) · split in \(parts.count)" : first.source.description,
                               actual: times.isEmpty ? nil : times.reduce(0, +),
                               outcome: classOutcome(byClass[key] ?? []), timingIsComplete: complete,
                               agent: runs.last?.slot.agent)
        }.sorted { ($0.destination, $0.suite) < ($1.destination, $1.suite) }
    }

    static func classOutcome(_ outcomes: [Outcome]) -> Outcome {
        if let worst = outcomes.filter({ $0.isFailure || $0 == .notRun }).max() { return worst }
        if !outcomes.isEmpty, outcomes.allSatisfy({ $0 == .skipped }) { return .skipped }
        return outcomes.contains(.flaky) ? .flaky : .passed
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

    /// A run whose report cannot be written is a run wasted: find out before the first test starts.
    static func checkWritable(_ directory: URL) throws(FanoutError) {
        let probe = directory.appendingPathComponent(".fanout-write-check")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data().write(to: probe)
            try FileManager.default.removeItem(at: probe)
        } catch {
            throw FanoutError("cannot write reports to \(directory.path): \(error.localizedDescription)",
                              hint: "Make the folder writable, or choose another with --report-dir (or reports: in the config).")
        }
    }

    static func makeRunID(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyyMMdd-HHmmss"
        let suffix = String(UInt32.random(in: 0..<(1 << 20)), radix: 16)
        return "\(f.string(from: date))-\(suffix)"
    }
}

extension Date {
    /// Reports keep milliseconds: a report read back from report.json equals the one written.
    var roundedToMilliseconds: Date {
        Date(timeIntervalSince1970: (timeIntervalSince1970 * 1000).rounded() / 1000)
    }
}

extension RunOutcome {
    /// The console summary of the report (counts, every failure with its place, slowest classes, timing).
    public func summary(color: Bool) -> String {
        ConsoleSummary(color: color).render(report)
    }
}

extension Coordinator {
    /// A second Ctrl-C: kill every local process group this coordinator started, and (within 2 s) every unit it
    /// started on an agent.
    public static func killEverythingNow() {
        LocalProcess.killAll()
        SSHTransport.emergencyStop(deadline: 2)
    }
}
