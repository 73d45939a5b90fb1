import FanoutCore
import FanoutSSH
import Foundation
import Synchronization

/// SSH transports with an open run, for the emergency stop of a second Ctrl-C.
private let liveTransports = Mutex<[ObjectIdentifier: SSHTransport]>([:])

/// A remote machine reached over SSH: one connection for the whole run, one channel per running unit.
///
/// Every unit runs in its own process group inside the run's folder on the agent; a time-out or a cancel kills
/// that group over a second channel (libssh2 1.10 cannot send signals). After the run, nothing of ours is left
/// running and the run's folder is gone (unless `keepRemote`).
///
/// What units consume: while any runs, one command every ``ProcessEvent/remoteUsageInterval`` samples all of them
/// (``RemoteLayout/usageSample``) and each unit's stream gets its `.usage`; when a unit's test ends by itself, its
/// shell has written the test's exact CPU time (``RemoteLayout/unitWrapper``), read with one more command before
/// `.ended`. A unit killed by a time-out or a cancel has no such file: its last sample is its total. A sample that
/// fails is skipped; it never marks the agent lost.
public final class SSHTransport: Transport {
    public let spec: SSHAgentSpec
    public let settings: SSHSettings
    private let archives: ProductArchives?
    private let state = Mutex(State())

    private struct State {
        var route: SSHRoute?
        /// The route's bastion connections count this agent as a user (released at shutdown).
        var acquired = false
        var connection: SSHConnection?
        var connecting: Task<SSHConnection, any Error>?
        var layout: RemoteLayout?
        var lost: String?
        var nextUnit = 0
        var deploy: DeployStats?
        /// Renews the run's lease on the agent while the connection lives.
        var renewal: Task<Void, Never>?
        /// Samples what the running units consume while the connection lives.
        var sampler: Task<Void, Never>?
        /// The units running now: where their samples go, and the latest sample of each.
        var running: [Int: UnitStream] = [:]
        /// Things worth telling the user, from preparing the agent (stale runs reaped).
        var notices: [String] = []
        /// The run's agent side got ready ahead (`warmUp`): taken by the first `prepare` of that run.
        var warming: (runID: String, task: Task<Ready, any Error>)?
        /// Deployments started ahead (`deployAhead`), by product binary: each taken by the first `prepare` of it.
        var ahead: [String: Task<String, any Error>] = [:]
        /// The machine's hardware class and resources, read once per run (ahead, by `warmUp`).
        var hardware: Task<String?, Never>?
        var machine: Task<AgentResources?, Never>?
    }

    /// What `prepare` does before it needs the product: the connection, and the run's layout on the agent, its
    /// folders made and checked and its lease taken.
    typealias Ready = (connection: SSHConnection, layout: RemoteLayout)

    struct UnitStream {
        let events: AsyncStream<ProcessEvent>.Continuation
        var usage: ResourceUsage?
    }

    /// What deployment cost on this agent.
    public struct DeployStats: Sendable, Hashable {
        public var bytesSent: Int
        public var seconds: Double
        public var cached: Bool
    }

    public var name: String { spec.name }
    public var kind: TransportKind { .ssh }
    public var slots: Int { spec.slots }

    /// `archives` packs each product once for every agent of the run. `route`: already resolved (else resolved on
    /// first use).
    public init(spec: SSHAgentSpec, settings: SSHSettings, archives: ProductArchives?, route: SSHRoute? = nil) {
        self.spec = spec
        self.settings = settings
        self.archives = archives
        state.withLock { $0.route = route }
    }

    public var isUsable: Bool { state.withLock { $0.lost == nil } }

    public var serving: AgentServing { AgentServing(tags: spec.tags, destinations: spec.destinations) }
    public var environment: [String: String] { spec.environment }

    public var details: AgentDetails {
        let (stats, lost) = state.withLock { ($0.deploy, $0.lost) }
        return AgentDetails(host: "\(endpoint)", deployedBytes: stats?.bytesSent, deploySeconds: stats?.seconds,
                            deployCached: stats?.cached, lostReason: lost)
    }

    // MARK: - Connection

    /// Where the agent is, once its route is resolved (before: `host:` as written).
    public var endpoint: SSHEndpoint {
        state.withLock { $0.route?.target.endpoint }
            ?? SSHEndpoint(host: spec.host, port: spec.port ?? 22, user: spec.user ?? "")
    }

    /// The agent's route, resolved once through OpenSSH's client config (`OpenSSHResolver`).
    public func route() async throws -> SSHRoute {
        if let route = state.withLock({ $0.route }) { return route }
        let route = try await OpenSSHResolver(settings: settings).resolve(spec, settings: settings)
        state.withLock { $0.route = route }
        return route
    }

    /// Connects and authenticates once (through the route's bastions, whose connections agents share); later calls
    /// share the same connection. A failure names the agent, its route and the hop that failed.
    public func connection() async throws -> SSHConnection {
        let route = try await self.route()
        let task: Task<SSHConnection, any Error> = state.withLock { s in
            if let c = s.connection { return Task { c } }
            if let t = s.connecting { return t }
            if !s.acquired {
                BastionPool.shared.acquire(route.jumps)
                s.acquired = true
            }
            let t = Task { [settings] in
                do {
                    let via = route.jumps.isEmpty ? nil
                        : try await BastionPool.shared.connection(route.jumps[...], settings: settings)
                    return try await BastionPool.connect(hop: route.target, index: route.jumps.count, via: via,
                                                         settings: settings)
                } catch let failure as HopFailure {
                    throw AgentError.unreachable(agent: spec.name, route: route.description,
                                                 hop: route.describeHop(failure.index), reason: "\(failure.error)")
                }
            }
            s.connecting = t
            return t
        }
        do {
            let c = try await task.value
            state.withLock { $0.connection = c; $0.connecting = nil }
            return c
        } catch {
            state.withLock { $0.connecting = nil }
            throw error
        }
    }

    /// Why the agent was lost: its bastion, when a bastion on its route is the connection that died.
    private func lossReason(_ error: SSHError) -> String {
        guard let route = state.withLock({ $0.route }), let dead = BastionPool.shared.deadHop(route.jumps) else {
            return error.description
        }
        return "lost \(route.describeHop(dead)) on the way to it: \(error)"
    }

    /// Runs a short command on the agent and fails unless it succeeds.
    @discardableResult
    func check(_ command: String, on c: SSHConnection, what: String, timeout: Double = 120) async throws -> SSHCommandResult {
        let r = try await c.run(command, timeout: timeout)
        guard r.succeeded else {
            let why = r.stderrText.trimmingCharacters(in: .whitespacesAndNewlines)
            if r.status == RemoteLayout.untrustedStatus, why.hasPrefix("fanout: ") {
                // The agent-side ownership checks say exactly what is wrong and how to fix it.
                throw AgentError.deployFailed(agent: name, reason: String(why.dropFirst("fanout: ".count)))
            }
            throw AgentError.deployFailed(agent: name, reason: "\(what) failed (exit \(r.status)\(r.signal.map { ", signal \($0)" } ?? "")): \(why)")
        }
        return r
    }

    // MARK: - Transport

    public func deployAhead(product: TestProduct, runID: String) {
        state.withLock { s in
            guard s.ahead[product.binary] == nil else { return }
            s.ahead[product.binary] = Task { try await self.deploy(product: product, runID: runID) }
        }
    }

    public func prepare(product: TestProduct, runID: String) async throws -> String {
        if let ahead = state.withLock({ $0.ahead.removeValue(forKey: product.binary) }) { return try await ahead.value }
        return try await deploy(product: product, runID: runID)
    }

    private func deploy(product: TestProduct, runID: String) async throws -> String {
        do {
            return try await prepareOnce(product: product, runID: runID)
        } catch {
            // Our lease lapsed while we were preparing (this process was suspended): the agent removed the run's
            // folder under our feet. Prepare again from the start, once.
            guard let c = try? await connection(), let layout = state.withLock({ $0.layout }),
                  await reapedBecauseLeaseLapsed(layout, on: c) != nil else { throw error }
            return try await prepareOnce(product: product, runID: runID)
        }
    }

    /// Gets the agent ready for the run `runID` while the coordinator builds and plans: connects, makes and checks
    /// the run's folders, takes its lease, and reads the machine's hardware class and resources. The run's first
    /// `prepare` takes it over, and reports its failure as its own; `shutdown` waits for it.
    public func warmUp(runID: String) {
        state.withLock { s in
            guard s.warming == nil, s.connection == nil, s.connecting == nil else { return }
            s.warming = (runID, Task { try await self.getReady(runID: runID) })
        }
    }

    /// The run's agent side, ready: the one `warmUp` got (once, and only while its connection lives), else got now.
    private func ready(runID: String) async throws -> Ready {
        let warm = state.withLock { s -> Task<Ready, any Error>? in
            defer { s.warming = nil }
            return s.warming?.runID == runID ? s.warming?.task : nil
        }
        if let warm {
            let ready = try await warm.value
            if ready.connection.isAlive { return ready }
            // It died while the product was built: connect afresh.
            state.withLock { if $0.connection === ready.connection { $0.connection = nil } }
        }
        return try await getReady(runID: runID)
    }

    private func getReady(runID: String) async throws -> Ready {
        let c = try await connection()
        let layout = try RemoteLayout(workdir: spec.workdir, runID: runID)
        state.withLock { $0.layout = layout }
        liveTransports.withLock { $0[ObjectIdentifier(self)] = self }
        // Read while the rest gets ready (and the coordinator plans): the first slot waits for both.
        startProbes(on: c)
        // One command (each costs the agent a shell): the run's folders, checked; what this run left running there
        // before the connection died (on re-admission); runs whose lease lapsed, reaped; the lease, taken.
        let seconds = settings.leaseSeconds
        let reaped = try await check(layout.readyRun(leaseSeconds: seconds), on: c, what: "getting \(layout.runDir) ready")
        let notices = reaped.stdoutText.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: " ")
            guard parts.count == 2 else { return nil }
            return "reaped run \(parts[0]) on \(name): its coordinator stopped renewing its lease (killed or cut off)"
                + " over \(seconds) s ago; \(parts[1]) unit process group(s) of it were killed and its folder removed"
        }
        keepLease(layout, on: c, notices: notices)
        return (c, layout)
    }

    private func prepareOnce(product: TestProduct, runID: String) async throws -> String {
        let start = ContinuousClock.now
        guard let archives else { throw AgentError.deployFailed(agent: name, reason: "no product to deploy") }
        // Packed (once for every agent) while this agent gets ready.
        async let packing = archives.pack(product)
        let (c, layout) = try await ready(runID: runID)
        let packed = try await packing
        // Old bundles are evicted while this one is looked for (on a channel of its own): eviction keeps the
        // current bundle whether it is installed yet or not.
        async let evicted = check(layout.evict(keep: settings.bundlesKept, current: packed.sha256, leaseSeconds: settings.leaseSeconds),
                                  on: c, what: "evicting old bundles")
        let ready = try await check(layout.bundleReady(packed.sha256), on: c, what: "looking for the cached bundle")
        var sent = 0
        let cached = ready.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "yes"
        if !cached {
            // Unique even when one agent is listed twice: two uploads never write into one file.
            let remoteArchive = layout.incoming + "/\(packed.sha256).\(runID).\(UUID().uuidString.prefix(8)).tar"
            sent = try await c.upload(packed.archive, to: remoteArchive, mode: 0o600)
            try await check(layout.install(sha: packed.sha256, archive: remoteArchive), on: c,
                            what: "installing the bundle \(packed.sha256.prefix(12))")
            // Whoever won a concurrent install, the bundle in place passes the same checks as a cached one.
            let installed = try await check(layout.bundleReady(packed.sha256), on: c, what: "checking the installed bundle")
            guard installed.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "yes" else {
                throw AgentError.deployFailed(agent: name, reason: "the bundle \(packed.sha256.prefix(12)) is not in place after installing it")
            }
        }
        _ = try await evicted
        let elapsed = ContinuousClock.now - start
        let seconds = elapsed.seconds
        // Several products (one per build setting) add up.
        state.withLock { s in
            let before = s.deploy ?? DeployStats(bytesSent: 0, seconds: 0, cached: true)
            s.deploy = DeployStats(bytesSent: before.bytesSent + sent, seconds: before.seconds + seconds,
                                   cached: before.cached && cached)
        }
        return layout.bundle(packed.sha256) + "/" + packed.binaryName
    }

    /// The lease is taken (its watchdog runs on the agent): it is renewed over this connection from now on, and the
    /// running units' usage sampled.
    private func keepLease(_ layout: RemoteLayout, on c: SSHConnection, notices: [String]) {
        let seconds = settings.leaseSeconds
        let every = max(1, Double(seconds) / 6)
        let renewal = Task.detached { [renewLease = layout.renewLease] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(every))
                if Task.isCancelled || !c.isAlive { return }
                _ = try? await c.run(renewLease, timeout: every * 2)
            }
        }
        // Its own task, not the renewal's: a slow sample must never delay the lease.
        let sampler = Task.detached { [weak self, sample = layout.usageSample] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(ProcessEvent.remoteUsageInterval))
                guard !Task.isCancelled, c.isAlive, let self else { return }
                guard self.state.withLock({ !$0.running.isEmpty }) else { continue }
                guard let r = try? await c.run(sample, timeout: 10), r.succeeded else { continue }
                self.deliver(RemoteUsage.parseUsageSample(r.stdoutText))
            }
        }
        let old = state.withLock { s in
            s.notices += notices
            defer { s.renewal = renewal; s.sampler = sampler }
            return [s.renewal, s.sampler]
        }
        old.forEach { $0?.cancel() }
    }

    /// Hands each running unit its sample (a unit that ended meanwhile is no longer listed: nothing follows `.ended`).
    private func deliver(_ samples: [Int: ResourceUsage]) {
        state.withLock { s in
            for (unit, sample) in samples {
                guard var running = s.running[unit] else { continue }
                let usage = sample.atLeast(running.usage)
                running.usage = usage
                s.running[unit] = running
                running.events.yield(.usage(usage))
            }
        }
    }

    public func takeNotices() -> [String] {
        state.withLock { s in
            defer { s.notices = [] }
            return s.notices
        }
    }

    public func run(_ command: Command, timeout: Double?) -> AsyncStream<ProcessEvent> {
        let (stream, continuation) = AsyncStream<ProcessEvent>.makeStream(bufferingPolicy: .unbounded)
        let (unit, layout, connection, lost) = state.withLock { s -> (Int, RemoteLayout?, SSHConnection?, String?) in
            s.nextUnit += 1
            if s.layout != nil, s.connection != nil, s.lost == nil {
                s.running[s.nextUnit] = UnitStream(events: continuation)
            }
            return (s.nextUnit, s.layout, s.connection, s.lost)
        }
        guard let layout, let connection, lost == nil else {
            continuation.yield(.ended(.agentLost(lost ?? "agent \(name) is not prepared")))
            continuation.finish()
            return stream
        }
        // The agent's own limit is a backstop, later than ours: our timer reports the time-out when we are alive.
        let remote = layout.unitCommand(command, unit: unit, workingDirectory: layout.runDir,
                                        limit: timeout.map { $0 * 1.1 + 30 })
        let timedOut = TimeOutMark()
        let task = Task {
            let timer = timeout.map { limit in
                Task {
                    try await Task.sleep(for: .seconds(limit))
                    timedOut.set()
                    _ = try? await connection.run(layout.killUnit(unit), timeout: 30)
                }
            }
            var ending = UnitEnding.agentLost("the channel closed without an exit status")
            for await event in connection.execute(remote) {
                switch event {
                case .stdout(let bytes): continuation.yield(.output(.stdout, bytes))
                case .stderr(let bytes): continuation.yield(.output(.stderr, bytes))
                case .exited(let status, let signal):
                    ending = signal.map { .signaled(Self.signalNumber($0)) } ?? .exited(status)
                case .failed(let error):
                    let why = self.lossReason(error)
                    ending = .agentLost(why)
                    self.markLost(why)
                }
            }
            timer?.cancel()
            if timedOut.isSet, !Task.isCancelled { ending = .timedOut(limit: timeout ?? 0) }
            if Task.isCancelled { ending = .cancelled }
            var usage = self.state.withLock { $0.running.removeValue(forKey: unit)?.usage }
            if Self.endedByItself(ending), connection.isAlive,
               let r = try? await connection.run(layout.takeUsage(unit), timeout: 30),
               let cpu = RemoteUsage.parseTimes(r.stdoutText) {
                usage = ResourceUsage(cpuSeconds: cpu).atLeast(usage)
            }
            // An unusual ending (a signal, an exit code tests do not use): if the run's folder is gone, the agent's
            // watchdog reaped the run because our lease lapsed (this process was suspended, a laptop lid closed): the
            // unit was killed, or could not even start, and no test crashed.
            if Self.mayBeReaped(ending), let reaped = await self.reapedBecauseLeaseLapsed(layout, on: connection) {
                ending = .agentLost(reaped)
                self.markLost(reaped)
            }
            if let usage { continuation.yield(.usage(usage)) }
            continuation.yield(.ended(ending))
            continuation.finish()
        }
        continuation.onTermination = { reason in
            guard case .cancelled = reason else { return }
            task.cancel()
            Task.detached { _ = try? await connection.run(layout.killUnit(unit), timeout: 30) }
        }
        return stream
    }

    /// The test ended by itself (an exit status, or a signal no time-out or cancel of ours sent): its shell lived on
    /// to write what it consumed.
    static func endedByItself(_ ending: UnitEnding) -> Bool {
        switch ending {
        case .exited, .signaled: true
        default: false
        }
    }

    static func mayBeReaped(_ ending: UnitEnding) -> Bool {
        switch ending {
        case .exited(0), .exited(1), .timedOut, .cancelled, .agentLost, .handedOver: false
        default: true
        }
    }

    /// Why the run was reaped on the agent, when its folder is gone; nil when it is still there (or unknown).
    private func reapedBecauseLeaseLapsed(_ layout: RemoteLayout, on c: SSHConnection) async -> String? {
        guard let r = try? await c.run("[ -d \(ShellQuote.quote(layout.runDir)) ] && echo here || echo gone", timeout: 30),
              r.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "gone" else { return nil }
        return "the agent reaped this run: its lease was not renewed for over \(settings.leaseSeconds) s "
            + "(was this process suspended?); its tests go back to the queue"
    }

    private func markLost(_ why: String) {
        state.withLock { if $0.lost == nil { $0.lost = why } }
    }

    public func hardwareClass() async -> String? {
        if let read = state.withLock({ $0.hardware }), let known = await read.value { return known }
        guard let c = try? await connection() else { return nil }
        return await Self.readHardwareClass(on: c)
    }

    /// The agent machine's cores, memory and identity, with one command (``AgentResourcesProbe``).
    public func resources() async -> AgentResources? {
        if let read = state.withLock({ $0.machine }), let known = await read.value { return known }
        guard let c = try? await connection() else { return nil }
        return await Self.readResources(on: c)
    }

    /// Starts reading the hardware class and the resources over `c`, unless they are read already.
    private func startProbes(on c: SSHConnection) {
        state.withLock { s in
            if s.hardware == nil { s.hardware = Task { await Self.readHardwareClass(on: c) } }
            if s.machine == nil { s.machine = Task { await Self.readResources(on: c) } }
        }
    }

    private static func readHardwareClass(on c: SSHConnection) async -> String? {
        guard let r = try? await c.run(HardwareClass.probe, timeout: 10) else { return nil }
        return HardwareClass.parse(r.stdoutText)
    }

    private static func readResources(on c: SSHConnection) async -> AgentResources? {
        guard let r = try? await c.run(AgentResourcesProbe.command, timeout: 10), r.succeeded else { return nil }
        return AgentResourcesProbe.parse(r.stdoutText)
    }

    /// Appended to the run's list the watchdog runs when it reaps the run (``RemoteLayout/runIfCoordinatorGone(_:)``),
    /// over the open connection. Best effort, and never a wait: a lost agent, or one with no connection or run folder
    /// yet, has nothing to reap.
    public func runIfCoordinatorGone(_ command: Command) async {
        guard let (layout, c) = state.withLock({ s -> (RemoteLayout, SSHConnection)? in
            guard s.lost == nil, let layout = s.layout, let c = s.connection else { return nil }
            return (layout, c)
        }) else { return }
        _ = try? await c.run(layout.runIfCoordinatorGone(command), timeout: 30)
    }

    public func reset() async {
        let old = state.withLock { s -> SSHConnection? in
            let c = s.connection
            s.connection = nil
            s.connecting = nil
            s.lost = nil
            return c
        }
        if let old { await Task.detached { await old.close() }.value }
    }

    public func shutdown() async {
        // A warm-up still under way ends first: what it started on the agent is cleaned up with the rest.
        if let warm = state.withLock({ s -> Task<Ready, any Error>? in defer { s.warming = nil }; return s.warming?.task }) {
            _ = try? await warm.value
        }
        // So does a deployment started ahead that no slot took (the run ended before dispatching).
        for ahead in state.withLock({ s -> [Task<String, any Error>] in defer { s.ahead = [:] }; return Array(s.ahead.values) }) {
            _ = try? await ahead.value
        }
        let (connection, layout, renewal, sampler) = state.withLock { ($0.connection, $0.layout, $0.renewal, $0.sampler) }
        renewal?.cancel()
        sampler?.cancel()
        guard let connection else {
            await releaseBastions()
            return
        }
        let cleanup = settings.keepRemote ? layout.map { $0.killAll + "; " + $0.releaseLease } : layout?.cleanup
        // Detached: shutdown often runs in a cancelled task (Ctrl-C), and a cancelled caller would abort the very
        // command that stops what we started on the agent.
        await Task.detached {
            if let cleanup, connection.isAlive { _ = try? await connection.run(cleanup, timeout: 30) }
            await connection.close()
        }.value
        state.withLock { $0.connection = nil }
        liveTransports.withLock { $0[ObjectIdentifier(self)] = nil }
        await releaseBastions()
    }

    /// Lets go of the route's bastion connections (closed when no agent uses them any more).
    private func releaseBastions() async {
        let route = state.withLock { s -> SSHRoute? in
            defer { s.acquired = false }
            return s.acquired ? s.route : nil
        }
        if let route { await BastionPool.shared.release(route.jumps) }
    }

    /// Kills every unit this process started on any agent, waiting at most `deadline` seconds: the last thing a
    /// coordinator does when told to quit at once (remote processes outlive a dropped SSH session).
    public static func emergencyStop(deadline: Double = 2) {
        let targets = liveTransports.withLock { Array($0.values) }
        let done = DispatchSemaphore(value: 0)
        for t in targets {
            let (connection, layout) = t.state.withLock { ($0.connection, $0.layout) }
            guard let connection, let layout else { done.signal(); continue }
            Task.detached {
                _ = try? await connection.run(layout.killAll, timeout: deadline)
                done.signal()
            }
        }
        let end = DispatchTime.now() + deadline
        for _ in targets { _ = done.wait(timeout: end) }
    }

    /// OpenSSH reports signals by name (`KILL`, `SEGV`).
    static func signalNumber(_ name: String) -> Int32 {
        let table: [String: Int32] = ["HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "TRAP": 5, "ABRT": 6, "BUS": 7, "FPE": 8,
                                      "KILL": 9, "USR1": 10, "SEGV": 11, "USR2": 12, "PIPE": 13, "ALRM": 14, "TERM": 15]
        var n = name.uppercased()
        if n.hasPrefix("SIG") { n.removeFirst(3) }
        return table[n] ?? 0
    }
}

/// Marks that a unit's backstop timer fired (set by the timer's task, read by the task that ends the unit).
final class TimeOutMark: Sendable {
    private let value = Mutex(false)

    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
