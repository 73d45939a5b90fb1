import FanoutAgents
import FanoutCore
import FanoutReports
import FanoutRunners
import Foundation

/// Runs one unit on one slot: the runner's command on the transport, its output through the runner's parser into
/// the unit's collector, live test ends to the dispatcher, the unit's `ProgressWatch` (a test that makes no progress
/// is stopped), stealing's hand-over, and the files tests attached kept beside the report.
struct UnitExecution: Sendable {
    let prepared: PreparedRun
    let dispatcher: Dispatcher
    let progress: ProgressHandler
    /// Where files tests attached are kept (the report folder); nil: not kept.
    let attachments: AttachmentWriter?
    var clock: RunClock { dispatcher.clock }
    private func now() -> Double { clock.now() }

    /// Runs one unit on one slot and collects what it produced. The process gets the slot's worker identity, and
    /// the destination's and agent's `environment:` expanded with it.
    func run(_ unit: WorkUnit, on transport: any Transport, binary: String, destination: Destination,
             slot: SlotRef, identity: WorkerIdentity) async -> UnitRecord {
        let start = clock.now()
        let runner = Runners.runner(for: unit.framework)
        let collector = UnitCollector(unit: unit, agent: transport.name)
        progress(.unitStarted(unit: unit.id, agent: transport.name, slot: slot.index,
                              suites: unit.suiteDescriptions, estimate: unit.estimate))
        var command: Command
        // `--repeat` / `--seed`: the unit's FANOUT_SEED, for tests that draw random input (and replay it from the report).
        var destination = destination
        destination.environment = identity.environment(configured: destination.environment.merging(transport.environment) { $1 })
        if let seed = prepared.seed {
            destination.environment["FANOUT_SEED"] = String(unit.seed(run: seed))
        }
        do {
            command = try runner.command(for: unit, binary: binary, destination: destination)
        } catch {
            let ending = UnitEnding.failedToStart(error.description)
            return UnitRecord(unit: unit, agent: slot.agent, slot: slot.index, startedAt: start, endedAt: now(),
                              ending: ending, result: collector.finish(ending, diagnostics: ""))
        }
        // Selective testing records what the tests used at run time: observed on local slots; a unit that ran
        // anywhere else leaves its targets under the safe rule, and so does one that measures performance (its
        // file calls would be slowed while it measures them).
        let observing = prepared.selective?.observing.flatMap { $0.destinations.contains(unit.destination) ? $0 : nil }
        var traces: String?
        if let observing, transport.kind == .local, !unit.items.contains(where: \.exclusive) {
            (command, traces) = observing.observer.observing(command)
        }
        let finished = await run(unit, command: command, runner: runner, collector: collector, on: transport, slot: slot,
                                 start: start)
        if let observing {
            await observing.inputs.unitEnded(modules: Set(unit.testIDs.map(\.suite.module)), destination: unit.destination,
                                             traces: traces, productFolder: (binary as NSString).deletingLastPathComponent)
        }
        return finished
    }

    /// Keeps the files tests attached in the report folder (`AttachmentWriter`); returns their paths by test.
    private func save(_ files: [TestID: [AttachedFile]], unit: WorkUnit) -> [TestID: [String]] {
        guard !files.isEmpty, let attachments else { return [:] }
        let (paths, skipped) = attachments.save(files, destination: unit.destination, unit: unit.id)
        for text in skipped { progress(.warning(text)) }
        return paths
    }

    /// A unit that could not start (its slot has no simulator): all of its tests go back to the queue.
    func notStarted(_ unit: WorkUnit, slot: SlotRef, reason: String) -> UnitRecord {
        let ending = UnitEnding.failedToStart(reason)
        let collector = UnitCollector(unit: unit, agent: slot.agent)
        let t = now()
        return UnitRecord(unit: unit, agent: slot.agent, slot: slot.index, startedAt: t, endedAt: t, ending: ending,
                          result: collector.finish(ending, diagnostics: ""))
    }

    private func run(_ unit: WorkUnit, command: Command, runner: any TestRunner, collector: UnitCollector,
                     on transport: any Transport, slot: SlotRef, start: Double) async -> UnitRecord {
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
                try? await clock.sleep(for: .milliseconds(Self.watchInterval))
                feed.yield(.tick)
            }
        }
        // The unit is consumed in a task of its own, so that a twin that finishes first can stop just this unit.
        let consumer = Task { [collector, parser, dispatcher, clock] in
            let now = clock.now
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
                       await dispatcher.testStarted(id, unit: unit.id, now: now()) {
                        forwarder.cancel()
                        return false
                    }
                    switch event {
                    case .started(let id): watch.started(id, at: now())
                    case .ended(let id, _, _, _): watch.ended(id, at: now())
                    case .measured(let m): await dispatcher.unitMeasured(unit.id, test: m.test, now: now())
                    default: break
                    }
                    if let (id, attempt) = collector.consume(event), expected.contains(id) {
                        await dispatcher.recordTestEnded(id, attempt, destination: unit.destination, unit: unit.id)
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
                        await dispatcher.unitUsage(unit.id, u, at: t)
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
        await dispatcher.setCanceller(unit.id) { consumer.cancel() }
        let run = await withTaskCancellationHandler {
            await consumer.value
        } onCancel: {
            consumer.cancel()
        }
        collector = run.collector
        // Tests other units took over (work stealing) are theirs: not run here, not left over, not missing.
        collector.release(await dispatcher.handedOverTests(unit.id))
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
        return UnitRecord(unit: collector.unit.items.isEmpty ? unit : collector.unit, agent: slot.agent, slot: slot.index,
                          startedAt: start, endedAt: now(), ending: run.ending, command: command.description,
                          log: run.log.text, result: result, usage: run.usage)
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
