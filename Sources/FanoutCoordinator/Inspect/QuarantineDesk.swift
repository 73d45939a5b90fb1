import FanoutCore
import FanoutHistory
import FanoutReports
import Foundation

/// What `fanout quarantine add/remove/list` and `fanout history flaky --propose` do to the quarantine file.
public enum QuarantineDesk {
    /// Adds an entry, or replaces the one for the same test and destination. Returns whether it replaced one.
    @discardableResult
    public static func add(_ entry: QuarantineEntry, to path: String, settings: RunSettings) throws(FanoutError) -> Bool {
        guard QuarantineFile.isTestName(entry.test) else {
            throw FanoutError("'\(entry.test)' is not a test name",
                              hint: "Name a test as Module.Class/test, or a whole class as Module.Class (`fanout list --tests` shows them).")
        }
        guard !entry.reason.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw FanoutError("a quarantine needs a reason", hint: "Say why with --reason \"fails one run in ten on CI\".")
        }
        guard entry.owner?.isEmpty == false || entry.issue?.isEmpty == false else {
            throw FanoutError("a quarantine needs an owner or an issue, so that it is not forgotten",
                              hint: "Add --owner @name or --issue https://… (or both).")
        }
        guard QuarantineFile.isDay(entry.expires), entry.expires >= entry.added else {
            throw FanoutError("the expiry \(entry.expires) is not a day on or after \(entry.added)",
                              hint: "Use --expires YYYY-MM-DD, or --days N.")
        }
        if let destination = entry.destination { try checkDestination(destination, settings: settings) }
        var quarantine = try QuarantineFile.load(path)
        let replaced: Bool
        if let i = quarantine.index(of: entry.test, destination: entry.destination) {
            quarantine.entries[i] = entry
            replaced = true
        } else {
            quarantine.entries.append(entry)
            replaced = false
        }
        try QuarantineFile.write(quarantine, to: path)
        return replaced
    }

    /// Removes the entry for the test (and destination); an error names the entries there are when none matches.
    public static func remove(_ test: String, destination: String?, from path: String) throws(FanoutError) -> QuarantineEntry {
        var quarantine = try QuarantineFile.load(path)
        guard let i = quarantine.index(of: test, destination: destination) else {
            let near = quarantine.entries.filter { $0.test == test }.map(\.label)
            throw FanoutError("\(path) has no quarantine entry for \(destination.map { "\(test) on \($0)" } ?? test)",
                              hint: near.isEmpty ? "`fanout quarantine list` shows the entries."
                                  : "Entries for it: \(near.joined(separator: ", ")) (use --destination to pick one).")
        }
        let removed = quarantine.entries.remove(at: i)
        try QuarantineFile.write(quarantine, to: path)
        return removed
    }

    /// `fanout quarantine list`: every entry, with whether it applies today.
    public static func table(path: String, today: String) throws(FanoutError) -> Table {
        let quarantine = try QuarantineFile.load(path)
        let rows = quarantine.entries.sorted { ($0.test, $0.destination ?? "") < ($1.test, $1.destination ?? "") }.map { e in
            [e.test, e.destination ?? "(all)", e.mode.rawValue, e.reason, e.ownership, e.added, e.expires,
             e.isExpired(today: today) ? "EXPIRED: not applied" : "active"]
        }
        return Table(title: "Quarantine (\(path)): \(quarantine.entries.count) entr\(quarantine.entries.count == 1 ? "y" : "ies")",
                     headers: ["test", "destination", "mode", "reason", "owner / issue", "added", "expires", "status"],
                     rows: rows)
    }

    /// An entry's destination must be one the config has: a typo would quarantine nothing.
    static func checkDestination(_ destination: String, settings: RunSettings) throws(FanoutError) {
        let configured = settings.configuredDestinations.map(\.name)
        guard configured.contains(destination) else {
            throw FanoutError("unknown destination '\(destination)'",
                              hint: "Configured destinations: \(configured.joined(separator: ", ")). Leave --destination out to "
                                + "quarantine the test on every destination.")
        }
    }
}

/// `fanout history flaky --propose`: quarantine entries for the tests whose flake score is over a threshold, and
/// releases for muted tests that have passed cleanly for a while.
public struct QuarantineProposal: Sendable {
    /// A test is proposed when its flake rate is at least this (failures per attempt)...
    public var threshold = 0.05
    /// ...with at least this many counted failures (one failure is not yet a pattern).
    public var minimumFailures = 2
    /// Mode and lifetime of a proposed entry.
    public var mode = QuarantineMode.mute
    public var days = 30
    /// A muted test whose final outcome was `passed` (no failed attempt) in each of its last this many runs is
    /// proposed for release.
    public var releaseAfter = 10
    /// Runs of the history the scores are read over.
    public var runs = 20

    public init() {}

    public struct Proposal: Sendable, Hashable {
        public var added: [QuarantineEntry] = []
        public var released: [QuarantineEntry] = []
        /// Flaky tests over the threshold that already have an entry.
        public var alreadyQuarantined: [String] = []
        /// Tests found order-dependent in the runs looked at: never proposed as flaky, their polluters named.
        public var orderDependent: [OrderDependentStat] = []
    }

    /// Reads the history and the quarantine file; writes the file unless `dryRun`.
    public func apply(historyPath: String, quarantinePath: String, settings: RunSettings, today: String,
                      dryRun: Bool) throws(FanoutError) -> Proposal {
        guard FileManager.default.fileExists(atPath: historyPath) else {
            throw FanoutError("no timing history at \(historyPath)", hint: "Run `fanout run` first, or point --history at the file.")
        }
        var quarantine = try QuarantineFile.load(quarantinePath)
        var result = Proposal()
        let store: HistoryStore
        let stats: [FlakyStat]
        do {
            store = try HistoryStore.open(at: historyPath).0
            stats = try store.flakyTests(runs: runs)
            result.orderDependent = try store.orderDependentTests(runs: runs)
        } catch {
            throw FanoutError("cannot read the timing history at \(historyPath): \(error)", exitCode: .infrastructure)
        }
        let oneDestination = settings.configuredDestinations.count == 1
        // An order-dependent test is never muted as flaky, whatever its earlier runs (where other tests happened to
        // precede it or not) say: its polluter is named instead.
        let dependent = Set(result.orderDependent.map { "\($0.destination)|\($0.test)" })
        for stat in stats where stat.score.rate >= threshold && stat.score.failures >= minimumFailures
            && !dependent.contains("\(stat.destination)|\(stat.test)") {
            let destination = oneDestination ? nil : stat.destination
            let covered = quarantine.entries.contains {
                !$0.isExpired(today: today) && $0.matches(stat.test, destination: stat.destination)
            }
            if covered {
                result.alreadyQuarantined.append(stat.test.description)
                continue
            }
            let i = stat.score.interval
            let entry = QuarantineEntry(
                test: stat.test.description, destination: destination, mode: mode,
                reason: "flake rate \(String(format1: stat.score.rate * 100))% (95% interval "
                    + "\(String(format1: i.lowerBound * 100))-\(String(format1: i.upperBound * 100))%): "
                    + "\(stat.score.failures) of \(stat.score.attempts) attempts failed over the last \(runs) runs",
                owner: "fanout history flaky --propose", added: today, expires: QuarantineFile.day(plus: days, from: today))
            quarantine.entries.append(entry)
            result.added.append(entry)
        }
        for entry in quarantine.entries where entry.mode == .mute && !result.added.contains(entry) {
            let parts = entry.test.split(separator: "/", maxSplits: 1).map(String.init)
            let suite = parts[0]
            guard let dot = suite.firstIndex(of: ".") else { continue }
            let recent: [[Outcome]]
            do {
                recent = try store.recentOutcomes(module: String(suite[..<dot]), suite: String(suite[suite.index(after: dot)...]),
                                                  name: parts.count > 1 ? parts[1] : nil, destination: entry.destination,
                                                  runs: releaseAfter)
            } catch {
                throw FanoutError("cannot read the timing history at \(historyPath): \(error)", exitCode: .infrastructure)
            }
            if recent.count >= releaseAfter, recent.allSatisfy({ $0.allSatisfy { $0 == .passed } }) {
                result.released.append(entry)
            }
        }
        quarantine.entries.removeAll { result.released.contains($0) }
        if !dryRun, !result.added.isEmpty || !result.released.isEmpty {
            try QuarantineFile.write(quarantine, to: quarantinePath)
        }
        return result
    }
}
