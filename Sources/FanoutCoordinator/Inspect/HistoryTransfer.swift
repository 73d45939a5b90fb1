import FanoutCore
import FanoutHistory
import Foundation

/// `fanout history export` and `fanout history import`: the timing history as a file that travels between CI runs
/// and between the shard jobs of one pipeline (docs/history-format.md).
///
/// Every input file is read and checked before the history is opened, and the import is one transaction: a bad file
/// among several (exit 2) leaves the history exactly as it was.
public enum HistoryTransfer {
    /// What an import did, and what it had to leave out.
    public struct ImportResult: Sendable {
        public var summary: ImportSummary
        public var warnings: [String]
    }

    /// Writes the runs of the history at `historyPath` (the newest `runs` of them, when given) to `out`.
    /// - Returns: how many runs were written.
    public static func export(historyPath: String, to out: String, runs: Int?,
                              now: Date = Date()) throws(FanoutError) -> Int {
        guard FileManager.default.fileExists(atPath: historyPath) else {
            throw FanoutError("no timing history at \(historyPath)",
                              hint: "Run `fanout run` first, or point --history at the file.")
        }
        if let runs, runs < 1 {
            throw FanoutError("--runs must be at least 1 (got \(runs))", hint: "Leave it out to export every run.")
        }
        let export: HistoryExport
        do {
            let (store, _) = try HistoryStore.open(at: historyPath)
            let targets = try store.allTargetRuns()
            export = HistoryExport(exportedAt: now, fanoutVersion: Coordinator.version,
                                   runs: try store.exportRuns(limit: runs), targets: targets.isEmpty ? nil : targets)
        } catch {
            throw FanoutError("cannot read the timing history at \(historyPath): \(error)", exitCode: .infrastructure)
        }
        do {
            try export.write(to: out)
        } catch {
            throw FanoutError("\(error)")
        }
        return export.runs.count
    }

    /// Merges exports into the history at `historyPath` (created when missing).
    public static func importExports(_ files: [String], historyPath: String) throws(FanoutError) -> ImportResult {
        var runs: [HistoryRun] = []
        var targets: [TargetRun] = []
        for file in try checked(files) {
            do {
                let export = try HistoryExport.read(from: file)
                runs += export.runs
                targets += export.targets ?? []
            } catch {
                throw FanoutError("\(error)")
            }
        }
        return try store(runs, targets: targets, at: historyPath, warnings: [])
    }

    /// Seeds the history at `historyPath` with the test times of JUnit files, one run per file.
    /// - Parameters:
    ///   - destination: where the times belong; nil: each suite's `destination` property, else `defaultDestination`.
    public static func importJUnit(_ files: [String], historyPath: String, destination: String?,
                                   defaultDestination: String, now: Date = Date()) throws(FanoutError) -> ImportResult {
        let reader = JUnitHistoryReader(destination: destination, defaultDestination: defaultDestination,
                                        fanoutVersion: Coordinator.version, now: now)
        var runs: [HistoryRun] = []
        var warnings: [String] = []
        for file in try checked(files) {
            do {
                let (run, notes) = try reader.read(from: file)
                runs.append(run)
                warnings += notes
            } catch {
                throw FanoutError("\(error)")
            }
        }
        return try store(runs, at: historyPath, warnings: warnings)
    }

    /// The destination JUnit times belong to when `--destination` is not given: the one a `fanout run` with these
    /// settings uses (`local` without a `destinations:` list). With several configured, the user must choose.
    public static func defaultDestination(_ settings: RunSettings) throws(FanoutError) -> String {
        let all = try settings.activeDestinations()
        guard all.count == 1, let only = all.first else {
            throw FanoutError("the config lists several destinations (\(all.map(\.name).joined(separator: ", "))): "
                              + "the JUnit times need one",
                              hint: "Say which one ran these tests with --destination NAME.")
        }
        return only.name
    }

    /// A `--destination` must be one the config runs, or its times would never be used.
    public static func checkDestination(_ name: String, _ settings: RunSettings) throws(FanoutError) {
        guard !settings.destinations.isEmpty, !settings.destinations.contains(where: { $0.name == name }) else { return }
        throw FanoutError("unknown destination '\(name)'",
                          hint: "Configured destinations: \(settings.destinations.map(\.name).joined(separator: ", ")).")
    }

    private static func checked(_ files: [String]) throws(FanoutError) -> [String] {
        guard !files.isEmpty else {
            throw FanoutError("no file to import", hint: "Give one or more files written by `fanout history export` "
                              + "(or JUnit XML files with --junit).")
        }
        return files
    }

    private static func store(_ runs: [HistoryRun], targets: [TargetRun] = [], at historyPath: String,
                              warnings: [String]) throws(FanoutError) -> ImportResult {
        do {
            let (store, notes) = try HistoryStore.open(at: historyPath)
            var summary = try store.importRuns(runs)
            summary.targetVerdicts = try store.importTargetRuns(targets)
            return ImportResult(summary: summary, warnings: warnings + notes)
        } catch {
            throw FanoutError("cannot import into the timing history at \(historyPath): \(error)",
                              exitCode: .infrastructure)
        }
    }
}
