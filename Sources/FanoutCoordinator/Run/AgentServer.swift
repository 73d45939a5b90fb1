import FanoutAgents
import FanoutCore
import FanoutRunners
import Foundation

/// Serves one agent for the whole run: admission (deploys the product to it, and re-admits the agent with back-off
/// when it is lost and comes back) and the slot loops (each slot asks the dispatcher for a unit and has
/// `UnitExecution` run it, until the dispatcher has nothing left for it).
struct AgentServer: Sendable {
    let settings: RunSettings
    let prepared: PreparedRun
    let runID: String
    let state: Dispatcher
    let progress: ProgressHandler
    /// Runs each unit a slot is given.
    let execution: UnitExecution

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
                await state.clock.pause(for: .seconds(backoff[attempts]))
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
            await state.agentReady(transport.name, serves: Set(binaries.keys),
                                   hardwareClass: await transport.hardwareClass(), resources: await transport.resources())
            let (lost, left) = await SlotLoop(settings: settings, prepared: prepared, runID: runID, state: state,
                                              execution: execution, transport: transport, binaries: binaries).run()
            stale += left
            await state.agentGone(transport.name)
            guard lost, await state.hasWork else { break }
            await transport.reset()
            await state.clock.pause(for: .seconds(backoff[0]))
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
}

extension Transport {
    /// The destinations this agent serves (local slots serve them all).
    func served(of destinations: [DestinationSpec]) -> [DestinationSpec] {
        let serving = serving
        return destinations.filter { serving.serves(name: $0.name, requiredTags: $0.tags) }
    }
}
