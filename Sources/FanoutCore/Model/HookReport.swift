/// One hook that ran (or was due and could not run): the command of `hooks:` in fanout.yml, where and for whom it
/// ran, how it ended and what it printed. A report lists every one, set-ups and teardowns alike.
public struct HookReport: Codable, Sendable, Hashable {
    /// Whose hook: the run's (on the coordinator), an agent's (once per admission), or a slot's.
    public enum Scope: String, Codable, Sendable, CaseIterable {
        case run, agent, slot
    }

    public enum Phase: String, Codable, Sendable {
        case setUp = "set_up"
        case tearDown = "tear_down"
    }

    public enum Status: String, Codable, Sendable {
        /// Exit status 0.
        case passed
        /// Another exit status, or killed by a signal.
        case failed
        /// Still running at its deadline: its process group was killed.
        case timedOut = "timed_out"
        /// Due, but it could not start (its agent was lost and did not come back).
        case notRun = "not_run"
    }

    public var scope: Scope
    public var phase: Phase
    /// The agent it ran on (nil for the run's hooks, which run on the coordinator).
    public var agent: String?
    /// The slot's index on its agent, and its worker index across the run (slot hooks).
    public var slot: Int?
    public var worker: Int?
    public var command: String
    public var status: Status
    /// How it ended in words: `exit 3`, `killed by signal 9`, `no answer within 120 s`, why it could not run.
    public var detail: String
    /// Seconds since the run started, and how long it ran.
    public var startedAt: Double
    public var duration: Double
    /// What it wrote (standard output then standard error), its last 16 KiB.
    public var output: String

    public init(scope: Scope, phase: Phase, agent: String? = nil, slot: Int? = nil, worker: Int? = nil, command: String,
                status: Status, detail: String, startedAt: Double, duration: Double, output: String) {
        self.scope = scope
        self.phase = phase
        self.agent = agent
        self.slot = slot
        self.worker = worker
        self.command = command
        self.status = status
        self.detail = detail
        self.startedAt = startedAt
        self.duration = duration
        self.output = output
    }

    /// `slot 3 (worker 5) of agent-2 set-up`, `run teardown`: how messages name it.
    public var title: String {
        let whose = switch scope {
        case .run: "run"
        case .agent: "agent \(agent ?? "?")"
        case .slot: "slot \(slot ?? 0)\(worker.map { " (worker \($0))" } ?? "") of \(agent ?? "?")"
        }
        return whose + (phase == .setUp ? " set-up" : " teardown")
    }

    /// The warning a hook that did not pass leaves in the report: what happened, its output's last lines, and
    /// what it means for the run (a set-up takes its scope out; a teardown never changes a verdict). Nil: passed.
    public var warning: String? {
        guard status != .passed else { return nil }
        let what = status == .notRun ? "did not run (\(detail))" : "failed (\(detail))"
        let tail = outputTail.isEmpty ? "" : ": \(outputTail)"
        let meaning = switch (scope, phase) {
        case (_, .setUp) where status == .notRun: "nothing runs there until it has run"
        case (.slot, .setUp): "this slot takes no work; the run goes on on the others"
        case (.agent, .setUp): "this agent takes no work; the run goes on on the others"
        case (.run, .setUp): "no test runs"
        case (_, .tearDown): "what it cleans up may be left behind (the verdicts stand)"
        }
        return "hook \(title) \(what)\(tail): \(meaning)"
    }

    /// The last lines of its output, for a one-line message (a warning, the console).
    public var outputTail: String {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: true).suffix(3)
        let tail = lines.joined(separator: " | ")
        return tail.count > 300 ? "…" + String(tail.suffix(300)) : tail
    }
}
