import FanoutCore

/// `hooks:` of fanout.yml: commands that set up and tear down what tests share, per run (on the coordinator), per
/// agent (once per admission, before any unit there) and per slot (before its first unit, after its last). Each is
/// a POSIX shell line, run by `/bin/sh -c` where its scope lives, with the worker identity in its environment.
public struct HookSettings: Sendable, Hashable {
    /// One hook: the shell line and how long it may take.
    public struct Command: Sendable, Hashable {
        public var line: String
        /// Seconds; past them its process group is killed and the hook failed.
        public var timeout: Double

        public init(line: String, timeout: Double) {
            self.line = line
            self.timeout = timeout
        }
    }

    public struct Key: Sendable, Hashable {
        public var scope: HookReport.Scope
        public var phase: HookReport.Phase

        public init(_ scope: HookReport.Scope, _ phase: HookReport.Phase) {
            self.scope = scope
            self.phase = phase
        }
    }

    /// A hook's deadline when it names none (`hooks.timeout`).
    public static let defaultTimeout: Double = 300

    public var commands: [Key: Command] = [:]

    public init(commands: [Key: Command] = [:]) {
        self.commands = commands
    }

    public subscript(scope: HookReport.Scope, phase: HookReport.Phase) -> Command? {
        get { commands[Key(scope, phase)] }
        set { commands[Key(scope, phase)] = newValue }
    }

    public var isEmpty: Bool { commands.isEmpty }

    /// The hooks in the order a run meets them: run, agent, slot set-ups, then teardowns the other way round.
    public var inOrder: [(Key, Command)] {
        let order: [Key] = [Key(.run, .setUp), Key(.agent, .setUp), Key(.slot, .setUp),
                            Key(.slot, .tearDown), Key(.agent, .tearDown), Key(.run, .tearDown)]
        return order.compactMap { key in commands[key].map { (key, $0) } }
    }
}
