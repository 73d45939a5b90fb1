import FanoutAgents
import FanoutCore
import FanoutRunners
import Foundation

/// Serves one agent for the whole run: deploys the product to it, runs units on its slots while the run state has
/// work for them, and re-admits the agent when it is lost and comes back.
struct AgentServer: Sendable {
    let settings: RunSettings
    let prepared: Prepared
    let runID: String
    let state: RunState
    let progress: ProgressHandler
    /// Seconds since the run started.
    let now: @Sendable () -> Double
    /// Where the run's reports go: files tests attached are kept there too.
    var reportDirectory: URL? = nil

    /// One agent for the whole run: deploy, run its slots until the queue is drained, and when it is lost, retry
    /// with backoff while work remains (re-admission). Returns whether the agent was ever usable.
    func serve(_ transport: any Transport) async -> Bool {
        // Simulators of slots whose agent was lost: deleted once it is back, else here at the end.
        var stale: [SlotSimulators] = []
        let admitted = await serve(transport, stale: &stale)
        if !stale.isEmpty {
            stale = await Self.delete(stale)
            if !stale.isEmpty {
                await state.warn("agent \(transport.name) was lost with simulators of this run on it: delete them there "
                    + "(xcrun simctl list devices | grep 'fanout \(runID) ')")
            }
        }
        return admitted
    }

    private func serve(_ transport: any Transport, stale: inout [SlotSimulators]) async -> Bool {
        let mine = transport.served(of: prepared.destinations)
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
            stale = await Self.delete(stale)
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
                                   hardwareClass: await transport.hardwareClass(), resources: await transport.resources())
            let lost = await withTaskGroup(of: (Bool, SlotSimulators).self) { slots in
                for index in 0..<transport.slots {
                    let slot = SlotRef(agent: transport.name, index: index)
                    slots.addTask {
                        var simulators = SlotSimulators(transport: transport, runID: runID, slot: slot)
                        var lost = false
                        while transport.isUsable, let unit = await state.next(for: slot, now: now) {
                            let configured = prepared.spec(unit.destination)?.destination ?? settings.destination
                            let done: FinishedUnit
                            do throws(RunnerError) {
                                let destination = try await simulators.place(configured, retry: unit.items.contains { $0.retry > 0 })
                                done = await execute(unit, on: transport, binary: ready[unit.destination] ?? "",
                                                     destination: destination, slot: slot)
                            } catch {
                                // No simulator, no unit: its tests go back to the queue (within the re-queue budget)
                                // and this slot stops, while other slots and agents go on.
                                done = notStarted(unit, slot: slot, reason: error.description)
                                await state.complete(done)
                                await state.warn("slot \(slot.index) of \(transport.name) stops: \(error)")
                                break
                            }
                            await state.complete(done)
                            if case .agentLost(let why) = done.ending {
                                await state.warn("agent \(transport.name) was lost (\(why)): its unfinished work goes back to the queue")
                                lost = true
                                break
                            }
                        }
                        if !lost { await simulators.deleteAll() }
                        return (lost, simulators)
                    }
                }
                var lost = false
                for await (l, simulators) in slots {
                    if l { lost = true }
                    if !simulators.isEmpty { stale.append(simulators) }
                }
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

    /// Deletes what it can of these slots' simulators; returns those still there.
    private static func delete(_ simulators: [SlotSimulators]) async -> [SlotSimulators] {
        var left: [SlotSimulators] = []
        for var s in simulators {
            await s.deleteAll()
            if !s.isEmpty { left.append(s) }
        }
        return left
    }

    /// Runs one unit on one slot and collects what it produced.
    private func execute(_ unit: WorkUnit, on transport: any Transport, binary: String, destination: Destination,
                         slot: SlotRef) async -> FinishedUnit {
        let start = now()
        let runner = Runners.runner(for: unit.framework)
        let collector = UnitCollector(unit: unit, agent: transport.name)
        progress(.unitStarted(unit: unit.id, agent: transport.name, slot: slot.index,
                              suites: unit.suiteDescriptions, estimate: unit.estimate))
        let command: Command
        // `--repeat` / `--seed`: the unit's FANOUT_SEED, for tests that draw random input (and replay it from the report).
        var destination = destination
        if let seed = prepared.seed {
            destination.environment["FANOUT_SEED"] = String(unit.seed(run: seed))
        }
        do {
            command = try runner.command(for: unit, binary: binary, destination: destination)
        } catch {
            let ending = UnitEnding.failedToStart(error.description)
            return FinishedUnit(unit: unit, slot: slot, startedAt: start, endedAt: now(), ending: ending, command: "",
                                log: "", result: collector.finish(ending, diagnostics: ""))
        }
        return await execute(unit, command: command, runner: runner, collector: collector, on: transport, slot: slot,
                             start: start)
    }

    /// Writes the files tests attached into the report folder (`attachments/<destination>/<Module.Class>/<test>/`),
    /// and returns their paths relative to it, by test. A file that cannot be written is left out, with a warning.
    private func save(_ files: [TestID: [AttachedFile]], unit: WorkUnit) -> [TestID: [String]] {
        guard !files.isEmpty, let root = reportDirectory else { return [:] }
        var out: [TestID: [String]] = [:]
        // Screenshots often share a name (`Failure screenshot`), and two tests' names may clean up to one folder:
        // a path already taken gets `-2`, and so on.
        var used: Set<String> = []
        for (id, list) in files.sorted(by: { $0.key < $1.key }) {
            let folder = ["attachments", unit.destination, id.suite.description, id.name].map(AttachedFile.safeName)
                .joined(separator: "/")
            for file in list {
                var name = file.name
                var n = 1
                while !used.insert(folder + "/" + name).inserted {
                    n += 1
                    let dot = file.name.lastIndex(of: ".") ?? file.name.endIndex
                    name = file.name[..<dot] + "-\(n)" + file.name[dot...]
                }
                let relative = folder + "/unit\(unit.id)-" + name
                let url = root.appendingPathComponent(relative)
                do {
                    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try Data(file.bytes).write(to: url)
                    out[id, default: []].append(relative)
                } catch {
                    progress(.warning("attachment \(file.name) of \(id) not kept: \(error.localizedDescription)"))
                }
            }
        }
        return out
    }

    /// A unit that could not start (its slot has no simulator): all of its tests go back to the queue.
    private func notStarted(_ unit: WorkUnit, slot: SlotRef, reason: String) -> FinishedUnit {
        let ending = UnitEnding.failedToStart(reason)
        let collector = UnitCollector(unit: unit, agent: slot.agent)
        let t = now()
        return FinishedUnit(unit: unit, slot: slot, startedAt: t, endedAt: t, ending: ending, command: "", log: "",
                            result: collector.finish(ending, diagnostics: ""))
    }

    private func execute(_ unit: WorkUnit, command: Command, runner: any TestRunner, collector: UnitCollector,
                         on transport: any Transport, slot: SlotRef, start: Double) async -> FinishedUnit {
        var collector = collector
        let parser = runner.makeParser(for: unit)
        let expected = Set(unit.testIDs)
        let (limits, between) = prepared.timeLimits.limits(of: unit)
        let watch = ProgressWatch(start: start, limits: limits, fallback: between)

        // The transport's own limit is only a backstop (the coordinator's watch below stops a test that stopped
        // making progress): every test at its ceiling, one after the other.
        let stream = transport.run(command, timeout: prepared.timeLimits.backstop(of: unit))
        let (watched, feed) = AsyncStream<Watched>.makeStream(bufferingPolicy: .unbounded)
        // Cancelling the forwarder ends its iteration of the transport's stream, and with it the process group.
        let forwarder = Task {
            for await event in stream { feed.yield(.event(event)) }
            feed.finish()
        }
        // The watch is a matter of time, not only of events: a hung test says nothing.
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(Self.watchInterval))
                feed.yield(.tick)
            }
        }
        // The unit is consumed in a task of its own, so that a twin that finishes first can stop just this unit.
        let consumer = Task { [collector, parser, state, now] in
            var collector = collector
            var parser = parser
            var watch = watch
            var log = LogBuffer()
            var stderrLog = LogBuffer(limit: 16 * 1024)
            var ending = UnitEnding.cancelled
            var usage: ResourceUsage?
            var handedOver = false
            var limitHit: TimeLimitHit?
            /// False once the process starts a test that another unit took over: it is stopped right there.
            func collect(_ events: [TestEvent]) async -> Bool {
                for event in events {
                    if case .started(let id) = event, expected.contains(id),
                       await state.testStarted(id, unit: unit.id, now: now()) {
                        forwarder.cancel()
                        return false
                    }
                    switch event {
                    case .started(let id): watch.started(id, at: now())
                    case .ended(let id, _, _, _): watch.ended(id, at: now())
                    default: break
                    }
                    if let (id, attempt) = collector.consume(event), expected.contains(id) {
                        await state.recordTestEnded(id, attempt, destination: unit.destination, unit: unit.id)
                    }
                }
                return true
            }
            await withTaskCancellationHandler {
                for await item in watched where !handedOver && limitHit == nil {
                    switch item {
                    case .event(.output(.stdout, let bytes)):
                        watch.output(at: now())
                        let events = parser.consume(stdout: bytes)
                        // What a person reads of it (an xcodebuild unit's result bundle and attachments are left out).
                        log.append(parser.takeLog() ?? bytes)
                        handedOver = await !collect(events)
                    case .event(.output(.stderr, let bytes)):
                        watch.output(at: now())
                        log.append(bytes)
                        stderrLog.append(bytes)
                        handedOver = await !collect(parser.consume(stderr: bytes))
                    case .event(.usage(let u)):
                        usage = u
                        let t = now()
                        watch.cpu(u.cpuSeconds, waiting: u.cpuWaitSeconds, ready: u.readyThreads, at: t)
                        await state.unitUsage(unit.id, u, at: t)
                    case .event(.ended(let e)):
                        ending = e
                    case .tick:
                        if let hit = watch.check(at: now()) {
                            limitHit = hit
                            forwarder.cancel()
                        }
                    }
                }
            } onCancel: {
                forwarder.cancel()
            }
            ticker.cancel()
            forwarder.cancel()
            var runningFor: [TestID: Double] = [:]
            if handedOver {
                ending = .handedOver
            } else {
                if let limitHit {
                    ending = .timedOut(limitHit)
                    let t = now()
                    for (id, since) in watch.runningTests { runningFor[id] = t - since }
                }
                let events = parser.finish()
                if let rest = parser.takeLog() { log.append(rest) }
                _ = await collect(events)
            }
            return UnitRun(collector: collector, log: log, stderrLog: stderrLog, ending: ending,
                           attached: parser.takeAttachments(), usage: usage, runningFor: runningFor,
                           cpuByTest: watch.measuresCPU ? watch.cpuByTest : [:])
        }
        await state.setCanceller(unit.id) { consumer.cancel() }
        let run = await withTaskCancellationHandler {
            await consumer.value
        } onCancel: {
            consumer.cancel()
        }
        collector = run.collector
        // Tests other units took over (work stealing) are theirs: not run here, not left over, not missing.
        collector.release(await state.handedOverTests(unit.id))
        var result = collector.finish(run.ending, diagnostics: run.stderrLog.text.trimmingTrailingNewlines(),
                                      runningFor: run.runningFor)
        for (id, paths) in save(run.attached, unit: unit) where result.attempts[id] != nil {
            result.attempts[id]?.attachments = paths
        }
        if let usage = run.usage {
            // One test alone in its process gets all of it; otherwise each its sampled share.
            if result.attempts.count == 1, let id = result.attempts.keys.first {
                result.attempts[id]?.cpuSeconds = usage.cpuSeconds
            } else {
                for id in result.attempts.keys { result.attempts[id]?.cpuSeconds = run.cpuByTest[id] ?? 0 }
            }
        }
        return FinishedUnit(unit: collector.unit.items.isEmpty ? unit : collector.unit, slot: slot, startedAt: start,
                            endedAt: now(), ending: run.ending, command: command.description, log: run.log.text,
                            result: result, usage: run.usage)
    }

    /// How often a running unit's watch looks at the clock, in milliseconds.
    static let watchInterval = 500

    /// What the consumer of a unit sees: the transport's events, and the watch's ticks.
    private enum Watched: Sendable {
        case event(ProcessEvent)
        case tick
    }

    /// What consuming a unit's stream produced.
    private struct UnitRun: Sendable {
        var collector: UnitCollector
        var log: LogBuffer
        var stderrLog: LogBuffer
        var ending: UnitEnding
        var attached: [TestID: [AttachedFile]]
        var usage: ResourceUsage?
        var runningFor: [TestID: Double]
        var cpuByTest: [TestID: Double]
    }
}

extension Transport {
    /// The destinations this agent serves (local slots serve them all).
    func served(of destinations: [DestinationSpec]) -> [DestinationSpec] {
        let serving = serving
        return destinations.filter { serving.serves(name: $0.name, requiredTags: $0.tags) }
    }
}
