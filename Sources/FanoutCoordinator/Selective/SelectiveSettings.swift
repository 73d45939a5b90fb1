/// `--selective` and the `selective:` section of fanout.yml (docs/selective.md).
public struct SelectiveSettings: Sendable, Hashable {
    /// Skip each test target whose inputs equal those of a full pass on record (`--selective`, `selective: true`).
    public var enabled = false
    /// Files every test target reads at run time though no target holds them (fixtures, golden files): globs
    /// relative to the package (`**` spans folders), or absolute paths.
    public var inputs: [String] = []
    /// The same, for one test target each: its name → globs.
    public var targetInputs: [String: [String]] = [:]
    /// Regexes over a test target's name, or over `Module.Class` of any class it holds: such targets always run
    /// (tests that read the network, the clock, or a service no hash sees).
    public var alwaysRun: [String] = []
    /// Start first what a change most likely broke: targets whose inputs changed, and classes that failed recently.
    public var feedbackFirst = false
    /// Observe what the tests of each target use at run time (local slots) and record it with a full pass;
    /// off: every test target counts every file of the package as its input (the safe rule).
    public var observe = true
    /// How (`selective.observe: preload` or `strace`; `true` takes the first that works here).
    public var observer = ObserverChoice.any

    public init() {}
}

/// The ways run-time inputs may be observed (RunTimeObserver).
public enum ObserverChoice: String, Sendable, Hashable {
    /// The preloaded library, else strace.
    case any
    /// libFanoutObserve preloaded into the test processes only.
    case preload
    /// strace only.
    case strace
}
