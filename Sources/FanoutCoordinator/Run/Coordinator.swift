import FanoutAgents
import FanoutCore
import FanoutHistory
import FanoutReports
import Foundation
import Synchronization

/// Runs the whole job: config → build → discover → estimate → plan (`RunPreparation`) → the agents (`AgentFleet`),
/// each deployed to and served by an `AgentServer` whose slots (`SlotLoop`) share one `Dispatcher` → report
/// (`RunReportAssembly`, in Core) → baselines, history → files. Time is the `RunClock` made from the clock it is handed.
public final class Coordinator: Sendable {
    public static let version = "0.1.0"

    public let settings: RunSettings
    private let injected: [any Transport]?
    private let discover: Discover
    private let progress: ProgressHandler
    /// What the run keeps time with (`ContinuousClock`; tests hand in a virtual clock).
    private let clock: any Clock<Duration>
    private let interruption = Mutex(RunExitCode.interrupted)
    /// Said in the console and kept in the report's warnings (queue mode's fallback to a static shard).
    private let notes: [String]
    /// The run's one session with its timing history, from preparation to recording.
    let history: HistorySession

    /// Says why the run is about to be cancelled (SIGTERM rather than SIGINT): the report's exit code follows it.
    public func noteInterruption(_ code: RunExitCode) {
        interruption.withLock { $0 = code }
    }

    /// Without transports: the config's SSH agents, or the embedded default of `settings.slots` local slots.
    public convenience init(settings: RunSettings, transports: [any Transport]? = nil,
                            progress: @escaping ProgressHandler = { _ in }) {
        let discovery = Discovery(historyPath: settings.historyPath)
        self.init(settings: settings, transports: transports, discover: { product, spec throws(FanoutError) in
            try await discovery.catalog(of: product, destination: spec.destination, frameworks: spec.frameworks,
                                        testsList: spec.testsList)
        }, progress: progress)
    }

    /// `discover` lists a product's tests for a destination: tests hand a catalog in instead of running a binary.
    init(settings: RunSettings, transports: [any Transport]?, discover: @escaping Discover,
         clock: any Clock<Duration> = ContinuousClock(), notes: [String] = [], progress: @escaping ProgressHandler) {
        self.settings = settings
        history = HistorySession(path: settings.historyPath)
        self.notes = notes
        self.clock = clock
        self.injected = transports
        self.discover = discover
        self.progress = progress
    }

    private var slotCount: Int {
        if let injected { return injected.reduce(0) { $0 + $1.slots } }
        return settings.agents.isEmpty ? settings.slots : settings.agents.reduce(0) { $0 + $1.slots }
    }

    private var preparation: RunPreparation {
        RunPreparation(settings: settings, slotCount: slotCount, discover: discover, history: history, progress: progress)
    }

    /// The agents of this run (`AgentFleet`: the config's SSH agents, else local slots), or those handed in.
    private func makeFleet(routes: AgentFleet.Routes) -> AgentFleet {
        if let injected { return AgentFleet(transports: injected) }
        return AgentFleet(agents: settings.agents, ssh: settings.ssh, routes: routes, localSlots: settings.slots)
    }

    /// Every agent's route resolves (its ~/.ssh/config alias, ProxyJump, keys): a mistake there is bad input (exit 2),
    /// refused before anything is built. A route that resolves but cannot be reached is an unusable agent instead.
    private func resolveRoutes() async throws(FanoutError) -> AgentFleet.Routes {
        guard injected == nil else { return .none }
        do {
            return try await AgentFleet.resolveRoutes(of: settings.agents, ssh: settings.ssh)
        } catch {
            throw FanoutError("\(error)", hint: "fix the agent in fanout.yml or its Host block in the ssh config; "
                + "`fanout agents check` shows how each agent is reached")
        }
    }

    /// Build, discover, estimate, split and plan, without running anything.
    public func prepare() async throws(FanoutError) -> PreparedRun {
        defer { history.close() }
        return try await preparation.prepare()
    }

    // MARK: - The run

    public func run() async throws(FanoutError) -> FinishedRun {
        let clock = RunClock(self.clock)
        var timeline = PhaseTimeline()
        // Queue mode with the queue out of reach at the start: the job runs its static shard instead (every job of
        // the build does the same), or fails when it has none, rather than run tests another job runs too.
        if let job = settings.queue, let problem = await QueueFeed.probe(job) {
            guard let shard = job.fallbackShard else {
                throw FanoutError("\(problem)", hint: "Start the queue's server, or give this job a static shard to fall back to "
                    + "(--shard I/N, FANOUT_SHARD, or the CI's parallel-job variables).", exitCode: .infrastructure)
            }
            var fallback = settings
            fallback.queue = nil
            fallback.shard = shard
            // The probe that failed counts as the fall-back run's start-up (its clock starts after it).
            fallback.startUpSeconds = (settings.startUpSeconds ?? 0) + clock.now()
            let note = "QUEUE MODE FELL BACK TO STATIC SHARD \(shard): \(problem). This job ran shard \(shard) of the "
                + "history's split instead; the build's results are its jobs' reports (fanout report merge), not the queue's"
            progress(.warning(note))
            return try await Coordinator(settings: fallback, transports: injected, discover: discover, clock: self.clock,
                                         notes: notes + [note], progress: progress).run()
        }
        if settings.queue != nil { timeline.end("queue", at: clock.now()) }
        let startedAt = Date()
        let runID = Self.makeRunID(startedAt)

        let reportDirectory = settings.reportDirectory.map { URL(fileURLWithPath: $0) }
            ?? ReportWriter.defaultDirectory(root: settings.reportRoot, runID: runID)
        try Self.checkWritable(reportDirectory)
        let routes = try await resolveRoutes()
        _ = try BaselineFile.load(settings.baselinesPath) // a broken baselines file is refused before anything runs
        // The run's history session is closed when the run ends, whichever way (`HistorySession.close`).
        defer { history.close() }
        timeline.end("checks", at: clock.now())
        // The agents get ready while the product is built (an SSH agent connects, makes the run's folders, takes its
        // lease), and the product is deployed to them while the tests are listed and planned: the first unit waits
        // only for what is left of that. Whatever happens next, `fleet.shutdown()` undoes it.
        let fleet = makeFleet(routes: routes)
        let sideline = PreparationSideline(willRun: { fleet.warmUp(runID: runID) }, built: { destinations, products in
            for transport in fleet.transports {
                let mine = Set(transport.served(of: destinations).compactMap { products[$0.name] })
                for product in mine { transport.deployAhead(product: product, runID: runID) }
            }
        })
        let prepared: PreparedRun
        do {
            prepared = try await preparation.prepare(timeline: timeline, runClock: clock, sideline: sideline)
        } catch {
            await fleet.shutdown()
            throw error
        }
        timeline = prepared.timeline
        // The product's identity for the history's flake evidence, read while the tests run.
        let products = Set(prepared.products.values)
        let digest = Task { products.count == 1 ? await ProductDigest.sha256(of: products.first!) : nil }
        for w in prepared.warnings { progress(.warning(w)) }
        progress(.planned(tests: prepared.testCount, items: prepared.items.count, slots: prepared.slots,
                          predicted: prepared.plan.predictedMakespan, lowerBound: prepared.plan.lowerBound))

        // Queue mode: the plan seeds the build's queue (when this job is the first), and the work comes from there.
        let feed: QueueFeed?
        if let job = settings.queue {
            do {
                feed = try await QueueFeed.join(job, items: Scheduler(items: prepared.items, options: preparation.schedulerOptions).queuedItems,
                                                retries: settings.isRepeating ? 0 : settings.retries, progress: progress)
            } catch {
                await fleet.shutdown()
                throw error
            }
        } else {
            feed = nil
        }
        let planned = feed == nil ? prepared.items : []
        let dispatcher = Dispatcher(scheduler: Scheduler(items: planned, options: preparation.schedulerOptions),
                               items: planned, requeueBudget: settings.requeueBudget,
                               // In queue mode failed tests go back to the queue, for another job, instead.
                               retries: settings.isRepeating || feed != nil ? 0 : settings.retries, slots: prepared.slots,
                               agents: injected?.count ?? max(1, settings.agents.count), clock: clock,
                               deviceClasses: prepared.destinations.reduce(into: [:]) { $0[$1.name] = $1.destination.deviceClass },
                               capacity: settings.cpuPacking ? CapacityPolicy() : nil, runSeed: prepared.seed,
                               untilFailure: settings.untilFailure, bisectBudget: settings.bisectBudget,
                               progress: progress)
        for w in prepared.warnings + notes { await dispatcher.warn(w) }

        // Selective testing may leave nothing to run: then no agent is started, and the report says why.
        let nothingToRun = prepared.items.isEmpty && prepared.selective != nil
        let transports = nothingToRun ? [] : fleet.transports
        var unserved: [String: String] = [:]
        for spec in prepared.destinations where !nothingToRun && !transports.contains(where: { !$0.served(of: [spec]).isEmpty }) {
            let why = "no agent serves destination \(spec.name)"
                + (spec.tags.isEmpty ? "" : " (it requires tags \(spec.tags.joined(separator: ", ")))")
            unserved[spec.name] = why
            await dispatcher.warn(why + ": its tests cannot run")
        }
        let execution = UnitExecution(prepared: prepared, dispatcher: dispatcher, progress: progress,
                                      attachments: AttachmentWriter(directory: reportDirectory))
        let hooks = HookRunner(hooks: settings.hooks, runID: runID, transports: transports, clock: clock,
                               destinations: prepared.destinations.reduce(into: [:]) { $0[$1.name] = $1.destination.environment })
        let server = AgentServer(settings: settings, prepared: prepared, runID: runID, dispatcher: dispatcher, progress: progress,
                                 execution: execution, hooks: hooks)
        // The run's set-up, before anything is dispatched: when it fails, nothing runs (every test is not run, exit 3).
        let setUp = nothingToRun ? nil : await hooks.runOnCoordinator(.setUp)
        let ready = await dispatcher.hookEnded(setUp)
        if feed != nil, ready {
            let servedBy = Dictionary(uniqueKeysWithValues: prepared.destinations.map { spec in
                (spec.name, Set(transports.filter { !$0.served(of: [spec]).isEmpty }.map(\.name)))
            })
            await dispatcher.openFeed(unserved: unserved, servedBy: servedBy)
        }
        let feeding = ready ? feed.map { f in Task { await f.run(dispatcher) } } : nil
        let (interrupted, usable) = ready ? await dispatch(transports: transports, server: server) : (Task.isCancelled, [])
        let dispatched = clock.now()
        feeding?.cancel()
        let fed = await feeding?.value
        // The fleet stops (on the agents: what is left killed, the run's folder removed) while the report is assembled
        // and written, unless the run's teardown hook comes after it; the run ends once it has stopped, either way.
        let stopping: Task<Void, Never>
        if hooks.has(.run, .tearDown), !nothingToRun {
            await fleet.shutdown()
            stopping = Task {}
        } else {
            stopping = Task { await fleet.shutdown() }
        }
        // The run's teardown, at the very end (whether its set-up passed or not; interrupted or not).
        if !nothingToRun { await dispatcher.hookEnded(await hooks.runOnCoordinator(.tearDown)) }
        if usable.isEmpty, !nothingToRun, ready {
            await dispatcher.warn("no agent was usable: no test could run (see the warnings above for each agent)")
        }
        var report = await assemble(prepared: prepared, dispatcher: dispatcher, runID: runID, startedAt: startedAt, now: clock.now(),
                                    interrupted: interrupted, transports: transports, usable: usable, setUp: ready)
        // From the plan to the first unit's start: the agents (queue mode: joining the queue; connect, deploy, probe,
        // set-up hooks), to the end of dispatching when no unit ran; then the tests (the makespan); then stopping the
        // fleet and the teardowns, up to the report's `wall`.
        if report.units.isEmpty {
            timeline.end("agents", at: dispatched)
        } else {
            timeline.end("agents", at: report.timing.preparation)
            timeline.end("tests", at: report.timing.preparation + report.timing.makespan)
        }
        timeline.end("wind-down", at: report.timing.wall)
        report.product.sha256 = await digest.value
        if let fed { QueueFeed.account(fed, in: &report, build: settings.queue?.build ?? "") }
        timeline.end("assemble", at: clock.now())
        var finished = finish(&report, interrupted: interrupted, reportDirectory: reportDirectory, timeline: timeline,
                              clock: clock)
        let written = clock.now()
        await stopping.value
        // What stopping the agents took beyond writing the reports (named for `--timings`; the files are written).
        if !hooks.has(.run, .tearDown) || nothingToRun {
            finished.phases.append(PhaseTime("stopping", seconds: max(0, clock.now() - written)))
        }
        await feed?.keep(finished.report)
        return finished
    }

    /// Deploys to every agent in parallel; each agent's slots start taking work as soon as its own deployment is
    /// done. Returns whether the run was interrupted and the agents that were usable.
    private func dispatch(transports: [any Transport], server: AgentServer) async -> (Bool, [String]) {
        let (interrupted, usable) = await withTaskCancellationHandler {
            let usable = await withTaskGroup(of: String?.self) { group in
                for transport in transports {
                    group.addTask {
                        let usable = await server.serve(transport)
                        await server.dispatcher.agentRetired(transport.name)
                        return usable ? transport.name : nil
                    }
                }
                var names: [String] = []
                for await name in group { if let name { names.append(name) } }
                return names
            }
            return (Task.isCancelled, usable)
        } onCancel: {
            Task { await server.dispatcher.stop() }
        }
        return (interrupted, usable)
    }

    // MARK: - After the run

    /// Gathers what the run left behind and has Core assemble the report from it.
    private func assemble(prepared: PreparedRun, dispatcher: Dispatcher, runID: String, startedAt: Date, now: Double,
                          interrupted: Bool, transports: [any Transport], usable: [String], setUp: Bool) async -> RunReport {
        let failedSetUps = await dispatcher.failedSetUps
        let reason = interrupted ? "the run was interrupted before this test ran"
            : !setUp ? "the run's set-up hook did not pass, so nothing was dispatched (see hooks)"
            : usable.isEmpty && !failedSetUps.isEmpty
                ? "no slot was left to run it: \(failedSetUps.count) set-up hook\(failedSetUps.count == 1 ? "" : "s") failed (see hooks)"
            : usable.isEmpty ? "no agent was usable" : "no agent was left to run it"
        let ledger = await dispatcher.ledger
        let overheads = ledger.measuredOverheads
        let resources = await dispatcher.resources
        // Only usable agents' slots serve a destination (not those a failed set-up took out): the measured lower
        // bound of each destination uses them.
        let out = Dictionary(grouping: ledger.hooks.filter { $0.scope == .slot && $0.phase == .setUp
            && [.failed, .timedOut].contains($0.status) }, by: { $0.agent ?? "" }).mapValues { Set($0.compactMap(\.slot)).count }
        let serving = Dictionary(uniqueKeysWithValues: prepared.destinations.map { spec in
            (spec.name, transports.filter { usable.contains($0.name) && !$0.served(of: [spec]).isEmpty }
                .reduce(0) { $0 + max(0, $1.slots - (out[$1.name] ?? 0)) })
        })
        var assembly = RunReportAssembly(
            runID: runID, fanoutVersion: Self.version, startedAt: startedAt, finishedAt: Date(),
            interruption: interrupted ? interruption.withLock { $0 } : nil,
            product: ProductInfo(package: settings.bundlePath == nil ? settings.packagePath : nil,
                                 bundle: prepared.products.values.map(\.binary).sorted().joined(separator: ", ")),
            destinations: prepared.destinations.map(\.name),
            agents: transports.map { t in
                let d = t.details
                var info = AgentInfo(name: t.name, transport: t.kind.rawValue, slots: t.slots, host: d.host,
                                     deployedBytes: d.deployedBytes, deploySeconds: d.deploySeconds,
                                     problem: usable.contains(t.name) ? d.lostReason : "not usable (see warnings)",
                                     overhead: overheads[t.name])
                if let r = resources[t.name] {
                    info.cores = r.cores
                    info.memoryBytes = r.memoryBytes
                    info.machine = r.machine
                }
                return info
            },
            anyAgentUsable: !usable.isEmpty || (prepared.items.isEmpty && prepared.selective != nil),
            plan: PlanReport(slots: prepared.slots, lowerBound: prepared.plan.lowerBound,
                             predictedMakespan: prepared.plan.predictedMakespan, totalEstimate: prepared.plan.totalWork,
                             cpuPacking: settings.cpuPacking),
            slotsServing: serving, items: settings.queue == nil ? prepared.items : await dispatcher.queueTaken,
            units: ledger.finished,
            results: OrderHunt.analyse(prepared.quarantine.apply(to: await dispatcher.results(reasonForMissing: reason))),
            measurements: ledger.measurements,
            warnings: ledger.warnings, steals: await dispatcher.steals, shard: settings.shard, wall: now)
        if settings.isRepeating {
            assembly.repeatRun = RepeatReport(repetitions: settings.repetitions, untilFailure: settings.untilFailure,
                                              seed: prepared.seed ?? 0)
        }
        var report = assembly.report
        report.shuffleSeed = settings.shuffle
        if !settings.hooks.isEmpty { report.hooks = ledger.hooks.sorted { $0.startedAt < $1.startedAt } }
        if let plan = prepared.selective {
            var selective = plan.report
            // `--no-record`: nothing is left for later runs, and the report says so by listing no verdicts.
            if settings.recordHistory {
                selective.verdicts = SelectivePolicy.verdicts(fingerprints: await plan.recordedFingerprints(), catalog: plan.catalog,
                                                              results: report.results, interrupted: interrupted,
                                                              runID: runID, commit: plan.commit, at: report.finishedAt)
                // Observing, yet some targets are recorded under the safe rule: say which, and why that happens.
                let unobserved = selective.verdicts.filter { $0.observedInputs == nil }.map(\.target)
                if plan.observing != nil, !unobserved.isEmpty {
                    selective.observation = (selective.observation ?? "") + "; recorded under the safe rule, since some of "
                        + "their tests ran where nothing is observed (an SSH agent, a class measuring performance): "
                        + Array(Set(unobserved)).sorted().joined(separator: ", ")
                }
            }
            report.selective = selective
        }
        return report
    }

    /// Judges measurements against the baselines, reads trends and records the run in the history, and writes the
    /// report files. Returns the outcome with the final exit code.
    /// `timeline` (on `clock`): the run's phases so far; judging and recording are added, and the report keeps them
    /// all (`timing.phases`); the finished run has the report files' writing too.
    private func finish(_ report: inout RunReport, interrupted: Bool, reportDirectory directory: URL,
                        timeline: PhaseTimeline, clock: RunClock) -> FinishedRun {
        var timeline = timeline
        // Measurements judged against the baselines of their own destination and hardware class.
        var exit = RunExitCode(rawValue: report.exitCode) ?? .infrastructure
        exit = BaselineJudge.judgeFinishedRun(&report, settings: settings, rules: settings.performance, exit: exit)
        timeline.end("judge", at: clock.now())

        record(&report, interrupted: interrupted)
        timeline.end("record", at: clock.now())
        let startUp = settings.startUpSeconds.map { [PhaseTime("start-up", seconds: $0)] } ?? []
        report.timing.phases = startUp + timeline.phases

        var finished: FinishedRun
        do {
            let written = try ReportWriter().writeTimed(report, to: directory)
            finished = FinishedRun(report: report, reportDirectory: directory.path, files: written.files.map(\.path),
                                   exitCode: exit)
            finished.reportFiles = written.formats
            if let problem = JobSummary.publish(from: written.files, environment: ProcessInfo.processInfo.environment) {
                progress(.warning(problem))
            }
        } catch {
            report.warnings.append("the report could not be written: \(error)")
            progress(.warning("the report could not be written: \(error)"))
            finished = FinishedRun(report: report, reportDirectory: nil, files: [],
                                   exitCode: exit == .success ? .infrastructure : exit)
        }
        timeline.end("reports", at: clock.now())
        finished.phases = startUp + timeline.phases
        return finished
    }

    /// Record: the run into its history session (unless interrupted or `--no-record`), reading each measurement's
    /// trend before and the flake scores after; selective testing's verdicts are kept even for an interrupted run.
    private func record(_ report: inout RunReport, interrupted: Bool) {
        // Each measurement's trend is read before the run is recorded (a run is not its own past); a history that
        // does not exist yet has no past, and is not created for it when this run is not recorded.
        let historyExists = FileManager.default.fileExists(atPath: settings.historyPath)
        let readsTrends = !report.measurements.isEmpty && historyExists
        let records = settings.recordHistory && !interrupted
        // Selective testing's verdicts are kept even for an interrupted run (not recorded for timing): a target it
        // stopped must run next time, whatever passed before.
        let verdicts = report.selective?.verdicts ?? []
        if historyExists || records || !verdicts.isEmpty {
            do {
                let store = try history.store()
                report.warnings += history.takeNotes()
                if readsTrends {
                    do {
                        try MeasurementTrends.fill(&report, from: store)
                    } catch {
                        report.warnings.append("performance trends were not read from the timing history: \(error)")
                    }
                }
                if records { try store.record(report) }
                try store.recordTargets(verdicts)
                // Flake scores count this run's verdicts: read once it is recorded.
                do {
                    try FlakeScores.fill(&report, from: store)
                } catch {
                    report.warnings.append("flake scores were not read from the timing history: \(error)")
                }
            } catch {
                report.warnings.append(records ? "the timing history was not updated: \(error)"
                                               : "the timing history could not be read (no trends, no flake scores): \(error)")
            }
        }
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

extension Coordinator {
    /// A second Ctrl-C: kill every local process group this coordinator started, and (within 2 s) every unit it
    /// started on an agent.
    public static func killEverythingNow() {
        AgentFleet.emergencyStop(deadline: 2)
    }
}
