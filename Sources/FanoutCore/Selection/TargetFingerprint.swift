import struct Foundation.Date

/// Everything one test target can depend on, on one destination, hashed: what selective testing compares with the
/// inputs of earlier full passes (docs/selective.md).
///
/// Each input keeps its own digest in `parts` (its name, e.g. `files of Leaf`, `Package.resolved`, `toolchain`), so
/// a target that must run can say which inputs changed; `digest` is the SHA-256 over all of them.
public struct TargetFingerprint: Codable, Sendable, Hashable {
    /// The test target's name, as Package.swift spells it.
    public var target: String
    /// Its module name (the target's c99name): the `Module` of `Module.Class` in the catalog.
    public var module: String
    public var destination: String
    public var digest: String
    public var parts: [String: String]

    public init(target: String, module: String, destination: String, parts: [String: String]) {
        self.target = target
        self.module = module
        self.destination = destination
        self.parts = parts
        digest = Self.digest(of: parts)
    }

    /// The digest of a set of parts: each `name` and digest on a line of its own, in name order.
    public static func digest(of parts: [String: String]) -> String {
        var hash = SHA256()
        for (name, value) in parts.sorted(by: { $0.key < $1.key }) { hash.update("\(name)\u{0}\(value)\n") }
        return hash.hex()
    }

    /// The run-time inputs observed: paths of the package (files, folders, absent paths) and products (`built
    /// math`: an executable or resource bundle, by the targets it is built from); nil when they were not observed
    /// (the safe rule: every file of the package counted).
    public var observedInputs: [String]? { Self.observedInputs(in: parts) }

    public static func observedInputs(in parts: [String: String]) -> [String]? {
        guard parts[runTimeKey] == "observed" else { return nil }
        return parts.keys.compactMap { key in
            if key.hasPrefix(observedPrefix) { return String(key.dropFirst(observedPrefix.count)) }
            return key.hasPrefix(builtPrefix) ? key : nil
        }.sorted()
    }

    /// The input that says how a target's run-time inputs are known: `assumed` (the safe rule: every file of the
    /// package but the sources of other test targets) or `observed` (what its processes named while it passed).
    public static let runTimeKey = "run-time inputs"
    /// A file, folder or absent path observed at run time, by its path relative to the package: `observed <path>`.
    public static let observedPrefix = "observed "
    /// A product of the package the tests executed or read (`built math`), by the targets it is built from.
    public static let builtPrefix = "built "

    /// The first 12 digits, for people.
    public var short: String { String(digest.prefix(12)) }

    /// The inputs that differ from `earlier` (changed, added or gone), by name.
    public func changed(since earlier: [String: String]) -> [String] {
        Set(parts.keys).union(earlier.keys).filter { parts[$0] != earlier[$0] }.sorted()
    }
}

/// How a run ended for one test target on one destination, as the history keeps it.
public enum TargetVerdict: String, Codable, Sendable, Hashable {
    /// Every test of the target ran and passed (or was skipped by the framework itself): a full pass, the only
    /// verdict a later run may be skipped on.
    case passed
    /// Only some of its tests ran (a filter, a shard, quarantine), and none of those failed: says nothing either way.
    case partial
    /// A test failed, crashed, timed out, was not run, passed only on a retry, or the run was interrupted: until a
    /// full pass comes after it, the target always runs.
    case failed
}

/// One row of the history's record of test targets: what one run did with one target on one destination, under
/// which inputs.
public struct TargetRun: Codable, Sendable, Hashable {
    public var target: String
    public var destination: String
    /// ``TargetFingerprint/digest`` of the run's inputs.
    public var fingerprint: String
    public var parts: [String: String]
    public var verdict: TargetVerdict
    /// Why it is not a full pass, in words; nil for a pass.
    public var reason: String?
    public var runID: String
    /// The package's git commit at the time, when it is a git checkout.
    public var commit: String?
    public var recordedAt: Date

    public init(target: String, destination: String, fingerprint: String, parts: [String: String],
                verdict: TargetVerdict, reason: String? = nil, runID: String, commit: String?, recordedAt: Date) {
        self.target = target
        self.destination = destination
        self.fingerprint = fingerprint
        self.parts = parts
        self.verdict = verdict
        self.reason = reason
        self.runID = runID
        self.commit = commit
        self.recordedAt = recordedAt
    }

    /// The run-time inputs this run observed (``TargetFingerprint/observedInputs(in:)``).
    public var observedInputs: [String]? { TargetFingerprint.observedInputs(in: parts) }

    /// `run 20261126-101500-3f2a1 at commit 1a2b3c4d5e6f` (or `with inputs <digest>` outside git).
    public var label: String {
        "run \(runID) " + (commit.map { "at commit \($0.prefix(12))" } ?? "with inputs \(fingerprint.prefix(12))")
    }
}

/// Why a test target runs, or that it is skipped.
public enum SelectiveCause: String, Codable, Sendable, Hashable {
    /// Skipped: a full pass with the same inputs is on record, and nothing failed since.
    case unchanged
    /// Its inputs differ from those of its last full pass.
    case changed
    /// Its last verdict is a failure (failed, crashed, timed out, not run, flaky, interrupted).
    case lastFailed = "last-failed"
    /// No full pass is on record for it on this destination.
    case noPass = "no-pass"
    /// `always_run` names it.
    case alwaysRun = "always-run"
}

/// Whether one test target runs on one destination under `--selective`, and why.
public struct SelectiveDecision: Codable, Sendable, Hashable {
    public var target: String
    public var module: String
    public var destination: String
    /// True: not run, because a full pass with the same inputs is on record.
    public var skipped: Bool
    public var cause: SelectiveCause
    /// Why, in words: `unchanged since run … at commit …`, `changed since …: files of Leaf`, `its last run failed …`.
    public var reason: String
    /// The digest of its inputs in this run.
    public var fingerprint: String
    /// A skip's evidence: the run whose full pass had these inputs.
    public var since: String?
    public var sinceCommit: String?
    public var sinceAt: Date?
    /// The inputs that changed since its last full pass, when it runs because of them.
    public var changed: [String]?
    /// The run-time inputs observed by the full pass this decision compared with (paths relative to the package);
    /// nil when that pass observed nothing (then every file of the package counted).
    public var observed: [String]?

    public init(target: String, module: String, destination: String, cause: SelectiveCause, reason: String,
                fingerprint: String) {
        self.target = target
        self.module = module
        self.destination = destination
        self.cause = cause
        skipped = cause == .unchanged
        self.reason = reason
        self.fingerprint = fingerprint
    }
}

extension SelectiveDecision {
    /// `observed: Golden/shout.txt, built greeter`, the first few of them; `assumed: every file of the package` when
    /// nothing was observed; empty without a pass to compare with.
    public static func observedSummary(_ observed: [String]?, limit: Int = 4) -> String {
        guard let observed else { return "assumed: every file of the package" }
        if observed.isEmpty { return "observed: nothing beyond its targets" }
        let shown = observed.prefix(limit).joined(separator: ", ")
        return "observed: " + shown + (observed.count > limit ? " and \(observed.count - limit) more" : "")
    }
}

/// What selective testing did in a run (report.json's `selective`): every test target's decision, and what the run
/// recorded for the next one.
public struct SelectiveReport: Codable, Sendable, Hashable {
    public var decisions: [SelectiveDecision]
    /// The verdicts this run leaves in the history (empty when it records none, e.g. `--no-history`).
    public var verdicts: [TargetRun]
    /// `feedback_first`: targets that changed and recently failed tests were started first.
    public var feedbackFirst: Bool
    /// What selective testing could not cover in this run (an xcodebuild destination, a `--bundle` run).
    public var notes: [String]
    /// Seconds it took to decide (the toolchain's answers, hashing, reading the history), of which hashing; the
    /// files hashed. Absent when nothing was hashed.
    public var seconds: Double?
    public var hashSeconds: Double?
    public var filesHashed: Int?
    /// How the run-time inputs of the targets that ran were known: observed (and how), or why not.
    public var observation: String?

    public init(decisions: [SelectiveDecision] = [], verdicts: [TargetRun] = [], feedbackFirst: Bool = false,
                notes: [String] = []) {
        self.decisions = decisions
        self.verdicts = verdicts
        self.feedbackFirst = feedbackFirst
        self.notes = notes
    }

    public var skipped: [SelectiveDecision] { decisions.filter(\.skipped) }
    public var ran: [SelectiveDecision] { decisions.filter { !$0.skipped } }
}
