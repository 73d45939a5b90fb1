import FanoutCore
import Foundation

/// Which stream a chunk of output came from.
public enum OutputStreamKind: Sendable, Hashable {
    case stdout, stderr
}

/// What a running process reports: output as it is written, what its process group consumed so far (sampled
/// every ``ProcessEvent/usageInterval`` on local slots and every ``ProcessEvent/remoteUsageInterval`` on SSH
/// agents, and once more right before the end), then exactly one ending.
public enum ProcessEvent: Sendable, Hashable {
    case output(OutputStreamKind, [UInt8])
    /// Cumulative for the unit: each sample replaces the one before (neither field ever decreases). The last one
    /// before `.ended` is the unit's total.
    case usage(ResourceUsage)
    case ended(UnitEnding)

    /// Seconds between two `.usage` samples of a unit on local slots (Linux; Darwin reports only the final one).
    /// A sample reads /proc, about a millisecond for every unit at once; once a second keeps that negligible next to
    /// the tests and is still far finer than any stall window worth having.
    public static let usageInterval: Double = 1

    /// Seconds between two `.usage` samples of a unit on an SSH agent: one command per agent samples all its
    /// running units (a few processes and a round trip on the agent each time, hence less often than locally).
    /// A stall window should span several of these.
    public static let remoteUsageInterval: Double = 2
}

extension ResourceUsage {
    /// The later of two samples of one unit (`self` the later): each cumulative field is the larger (a process that
    /// exited takes its CPU time, memory and waits out of the next sample; what it consumed still counts); the
    /// threads ready to run are the later sample's.
    func atLeast(_ other: ResourceUsage?) -> ResourceUsage {
        guard let other else { return self }
        func larger<T: Comparable>(_ a: T?, _ b: T?) -> T? { a.map { max($0, b ?? $0) } ?? b }
        return ResourceUsage(cpuSeconds: max(cpuSeconds, other.cpuSeconds),
                             peakMemoryBytes: larger(peakMemoryBytes, other.peakMemoryBytes),
                             cpuWaitSeconds: larger(cpuWaitSeconds, other.cpuWaitSeconds), readyThreads: readyThreads)
    }
}

/// What kind of agent a transport is. A value type with named instances rather than a closed enum, so that a test
/// double can be a kind of its own without the product knowing of it.
public struct TransportKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Processes on this machine.
    public static let local = TransportKind(rawValue: "local")
    /// Processes on an SSH agent.
    public static let ssh = TransportKind(rawValue: "ssh")
}

/// An agent: somewhere with slots that runs test processes. Local slots and SSH machines are the two kinds.
///
/// Every process a transport starts runs in its own process group, so a time-out or a cancel kills the test and
/// everything it started. Cancelling the task that consumes `run`'s stream kills the process group too.
public protocol Transport: Sendable {
    /// A name for reports: `local`, `agent-1`, ...
    var name: String { get }
    /// `.local` or `.ssh` (report.json's `agents[].transport`).
    var kind: TransportKind { get }
    var slots: Int { get }

    /// Starts getting ready for the run `runID` while the coordinator builds and plans, and returns at once: what
    /// `prepare` does before it needs the product (an SSH agent connects, makes the run's folders, takes its lease
    /// and reads what the machine is). The first `prepare` takes it over and reports its failure; `shutdown`
    /// waits for it and undoes it. Local slots have nothing to do ahead.
    func warmUp(runID: String)

    /// Starts `prepare(product:runID:)` and returns at once: the product is built, and deploying it goes on while
    /// the coordinator lists the tests and plans (an upload of a new build with it). The run's first `prepare` of
    /// that product takes it over, with its result or its error; `shutdown` waits for it. Local slots have nothing
    /// to deploy.
    func deployAhead(product: TestProduct, runID: String)

    /// Makes the product available on the agent for the run `runID` and returns the path of the test binary there.
    func prepare(product: TestProduct, runID: String) async throws -> String

    /// Starts `command`; the stream yields its output as it arrives and ends with `.ended`. Past `timeout`
    /// seconds the process group is killed and the ending is `.timedOut`.
    func run(_ command: Command, timeout: Double?) -> AsyncStream<ProcessEvent>

    /// Stops everything this transport started and releases its resources.
    func shutdown() async

    /// Forgets a lost connection, so that the next `prepare` connects afresh (re-admitting the agent).
    func reset() async

    /// False once the agent is known to be lost: its slots stop taking work.
    var isUsable: Bool { get }

    /// The machine's hardware class (CPU model × count), read once per run: performance baselines apply per class.
    func hardwareClass() async -> String?

    /// What preparing the agent found worth telling the user (e.g. stale runs reaped), each said once.
    func takeNotices() -> [String]

    /// Which destinations this agent may run: all of them for local slots.
    var serving: AgentServing { get }

    /// The agent's own `environment:` for its test processes and hooks (over the destination's; values may be
    /// templated with the worker identity). Empty for local slots.
    var environment: [String: String] { get }

    /// Where the agent is, what deploying to it cost, and why it was lost: for the report.
    var details: AgentDetails { get }

    /// The machine's cores and memory (read once per run): capacities for planning and the CPU lower bound.
    /// Nil when the agent cannot tell.
    func resources() async -> AgentResources?

    /// Keeps `command` for the agent to run should the coordinator die before the run ends (an SSH agent's
    /// watchdog runs it as it reaps the run; e.g. deleting a simulator the run created). Local slots keep nothing:
    /// there the coordinator's own machine is the agent.
    func runIfCoordinatorGone(_ command: Command) async

    /// `fanout agents check`: reaches the agent and reports what a run would need of it (toolchain, disk, cores,
    /// dispatch latency over `latencyRuns` no-op commands), without deploying anything.
    func probe(latencyRuns: Int) async -> AgentProbe

    /// Kills every process any transport of this kind started, at once (a second Ctrl-C), waiting at most
    /// `deadline` seconds. Synchronous: it runs while the coordinator is about to exit.
    static func emergencyStop(deadline: Double)
}

/// The destinations an agent serves: those it names, else those whose required tags it has.
public struct AgentServing: Sendable, Hashable {
    /// Tags the agent has (`linux`, `gpu`).
    public var tags: [String]
    /// The destinations it serves by name; nil: every destination whose tags it has.
    public var destinations: [String]?

    public static let everything = AgentServing(tags: [], destinations: nil, all: true)
    /// Local slots serve every destination, whatever tags it requires.
    let all: Bool

    public init(tags: [String], destinations: [String]?) {
        self.init(tags: tags, destinations: destinations, all: false)
    }

    private init(tags: [String], destinations: [String]?, all: Bool) {
        self.tags = tags
        self.destinations = destinations
        self.all = all
    }

    public func serves(name: String, requiredTags: [String]) -> Bool {
        if all { return true }
        if let destinations { return destinations.contains(name) }
        return Set(requiredTags).isSubset(of: Set(tags))
    }
}

/// What the report says of an agent beyond its name, kind and slots.
public struct AgentDetails: Sendable, Hashable {
    /// `host:port` for a remote agent.
    public var host: String?
    /// What deploying the product cost this run (nil: nothing was deployed, e.g. local slots).
    public var deployedBytes: Int?
    public var deploySeconds: Double?
    /// True when the agent's cache already held the product.
    public var deployCached: Bool?
    /// Why the agent was lost, if it was.
    public var lostReason: String?

    public init(host: String? = nil, deployedBytes: Int? = nil, deploySeconds: Double? = nil, deployCached: Bool? = nil,
                lostReason: String? = nil) {
        self.host = host
        self.deployedBytes = deployedBytes
        self.deploySeconds = deploySeconds
        self.deployCached = deployCached
        self.lostReason = lostReason
    }
}

extension Transport {
    public func warmUp(runID: String) {}
    public func deployAhead(product: TestProduct, runID: String) {}
    public func reset() async {}
    public var isUsable: Bool { true }
    public func takeNotices() -> [String] { [] }
    public var serving: AgentServing { .everything }
    public var environment: [String: String] { [:] }
    public var details: AgentDetails { AgentDetails() }
    public func resources() async -> AgentResources? { nil }
    public func runIfCoordinatorGone(_ command: Command) async {}
    public func probe(latencyRuns: Int) async -> AgentProbe {
        AgentProbe(failure: "a \(kind) agent cannot be probed")
    }
    public static func emergencyStop(deadline: Double) {}
}

/// `Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz × 8` from the output of `HardwareClass.probe`.
public enum HardwareClass {
    /// A POSIX shell line that prints the CPU model and the number of CPUs (Linux and macOS). The fallback sits
    /// before the pipe: a pipeline's status is its last command's, so `grep … | cut … || sysctl …` never reached
    /// sysctl on macOS, where /proc/cpuinfo does not exist. (`cut` passes sysctl's line, which has no colon, whole.)
    public static let probe = "(grep -m1 'model name' /proc/cpuinfo 2>/dev/null || sysctl -n machdep.cpu.brand_string "
        + "2>/dev/null) | cut -d: -f2-; (getconf _NPROCESSORS_ONLN 2>/dev/null || sysctl -n hw.ncpu)"

    public static func parse(_ output: String) -> String? {
        let lines = output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard lines.count >= 2, let count = Int(lines[lines.count - 1]) else { return nil }
        let model = lines[0..<(lines.count - 1)].joined(separator: " ").split(separator: " ").joined(separator: " ")
        return "\(model) × \(count)"
    }
}

extension Transport {
    /// Runs a command to its end and returns everything it wrote (for listing tests, checking a toolchain).
    public func capture(_ command: Command, timeout: Double? = nil) async -> (UnitEnding, stdout: [UInt8], stderr: [UInt8]) {
        var out: [UInt8] = [], err: [UInt8] = []
        var ending = UnitEnding.failedToStart("no ending reported")
        for await event in run(command, timeout: timeout) {
            switch event {
            case .output(.stdout, let bytes): out += bytes
            case .output(.stderr, let bytes): err += bytes
            case .ended(let e): ending = e
            case .usage: break
            }
        }
        return (ending, out, err)
    }
}
