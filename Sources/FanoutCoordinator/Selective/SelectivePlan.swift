import FanoutAgents
import FanoutCore
import FanoutHistory
import Foundation

/// What `--selective` decided before anything was built: every test target's inputs on each destination, and
/// whether it runs. Made by ``make(settings:destinations:progress:)``; applied to the work items by the preparation.
struct SelectivePlan: Sendable {
    var fingerprints: [TargetFingerprint] = []
    var decisions: [SelectiveDecision] = []
    var commit: String?
    /// Destinations selective testing cannot cover (xcodebuild, `--bundle`), with why.
    var notes: [String] = []
    /// Every test of each destination's product by module, before filters and quarantine (filled after discovery):
    /// a run of part of a target is not a full pass.
    var catalog: [String: [String: Set<TestID>]] = [:]
    var feedbackFirst = false
    /// Seconds spent deciding (the toolchain's answers, hashing, the history), and hashing alone; files hashed.
    var seconds = 0.0
    var hashSeconds = 0.0
    var files = 0
    /// Hashes the inputs again after the run, with what the tests were seen to use; nil when the package could not
    /// be read (then nothing is recorded).
    var fingerprinter: InputFingerprinter?
    /// Watches what the units of this run touch (local slots: a preloaded library, or strace); nil when the run records nothing or cannot
    /// observe (then `observation` says why, and the safe rule holds for every target that ran).
    var observing: RunTimeObservation?
    /// How run-time inputs are known in this run, in words.
    var observation: String?

    /// Whether the work of a module on a destination is skipped: one lookup per work item (a suite may have
    /// 100,000 of them), in a set made once.
    var skips: (_ module: String, _ destination: String) -> Bool {
        let keys = Set(decisions.filter(\.skipped).map { "\($0.destination)\u{0}\($0.module)" })
        return { module, destination in keys.contains("\(destination)\u{0}\(module)") }
    }

    /// True when every test target of every covered destination is skipped, and no destination is out of reach:
    /// then nothing needs to be built.
    var skipsEverything: Bool { notes.isEmpty && !decisions.isEmpty && decisions.allSatisfy(\.skipped) }

    /// Targets whose inputs changed since their last full pass, or whose last run failed: what `feedback_first`
    /// starts first.
    var likelyToFail: (_ module: String, _ destination: String) -> Bool {
        let keys = Set(decisions.filter { !$0.skipped && [.changed, .lastFailed].contains($0.cause) }
            .map { "\($0.destination)\u{0}\($0.module)" })
        return { module, destination in keys.contains("\(destination)\u{0}\(module)") }
    }

    /// `always_run` over the classes found: a target holding a matching class runs after all.
    mutating func applyAlwaysRun(_ patterns: [String], catalogs: [String: Catalog]) throws(FanoutError) {
        guard !patterns.isEmpty else { return }
        let classes = try ClassPatterns(patterns, option: "selective.always_run")
        for i in decisions.indices where decisions[i].skipped {
            let d = decisions[i]
            guard let hit = catalogs[d.destination]?.suites.first(where: { $0.id.module == d.module && classes.matches($0.id) })
            else { continue }
            decisions[i].skipped = false
            decisions[i].cause = .alwaysRun
            decisions[i].reason = "always runs (always_run matches \(hit.id))"
            decisions[i].since = nil
            decisions[i].sinceCommit = nil
            decisions[i].sinceAt = nil
        }
    }

    var report: SelectiveReport {
        var report = SelectiveReport(decisions: decisions, verdicts: [], feedbackFirst: feedbackFirst, notes: notes)
        report.seconds = seconds
        report.hashSeconds = hashSeconds
        report.filesHashed = files
        report.observation = observation
        return report
    }

    /// The fingerprints this run's verdicts are recorded under: a target each of whose units ran observed keeps
    /// the paths its processes named; any other, the safe rule (every file of the package). The pins are read
    /// again: the build may have written Package.resolved (a first build resolves), and the tests ran on those.
    func recordedFingerprints() async -> [TargetFingerprint] {
        guard let fingerprinter else { return fingerprints }
        if let observing {
            let observer = observing.observer
            await observing.inputs.resolve { observer.paths(in: $0) }
            try? FileManager.default.removeItem(atPath: observer.folder)
        }
        var folders = FolderDigests(root: fingerprinter.package)
        let pins = try? fingerprinter.externalDigest(&folders)
        let products = await observing?.inputs.productFolders ?? []
        var out: [TargetFingerprint] = []
        for var fp in fingerprints {
            if let pins, fp.parts["Package.resolved"] != nil, fp.parts["Package.resolved"] != pins {
                fp = TargetFingerprint(target: fp.target, module: fp.module, destination: fp.destination,
                                       parts: fp.parts.merging(["Package.resolved": pins]) { $1 })
            }
            if let paths = await observing?.inputs.observed(destination: fp.destination, module: fp.module),
               let observed = try? fingerprinter.observed(fp, paths: paths, productFolders: products, folders: &folders) {
                out.append(observed)
            } else {
                out.append(fp)
            }
        }
        return out
    }

    /// Reads the package's graph, hashes every test target's inputs on each destination it can cover, and decides
    /// from the history which ones run.
    static func make(settings: RunSettings, destinations: [DestinationSpec], history: HistorySession? = nil,
                     progress: ProgressHandler) async throws(FanoutError) -> SelectivePlan {
        let clock = ContinuousClock()
        let start = clock.now
        var plan = SelectivePlan()
        plan.feedbackFirst = settings.selective.feedbackFirst
        var covered: [DestinationSpec] = []
        for spec in destinations {
            if spec.frameworks.contains(.xcodebuild) {
                plan.notes.append("\(spec.name) runs xcodebuild: selective testing covers Swift packages only (not Xcode "
                                  + "projects yet), so all of its tests run")
            } else if (spec.bundlePath ?? settings.bundlePath) != nil {
                plan.notes.append("\(spec.name) runs a given product (--bundle): selective testing needs the package's "
                                  + "sources and build settings, so all of its tests run")
            } else {
                covered.append(spec)
            }
        }
        guard !covered.isEmpty else { return plan }
        do {
            try await plan.decide(settings: settings, covered: covered,
                                  history: history ?? HistorySession(path: settings.historyPath), progress: progress)
        } catch where error.exitCode == .usage {
            throw error
        } catch {
            // What cannot be read cannot vouch for a skip: everything runs, and the report says why.
            plan.fingerprints = []
            plan.decisions = []
            plan.fingerprinter = nil
            plan.observing = nil
            plan.notes.append("selective testing could not decide, so every test target runs: \(error.message)"
                              + (error.hint.map { " (\($0))" } ?? ""))
        }
        plan.seconds = (clock.now - start).seconds
        return plan
    }

    /// Reads the graph, hashes each covered destination's test targets and decides each one from the history.
    private mutating func decide(settings: RunSettings, covered: [DestinationSpec], history: HistorySession,
                                 progress: ProgressHandler) async throws(FanoutError) {
        var plan = self
        defer { self = plan }
        let (package, swift) = try ProductBuilder.packageAndSwift(settings.packagePath)
        progress(.phase("selective: reading the targets of \(package) and hashing their inputs"))
        async let commit = Self.output(Command(executable: "/usr/bin/env",
                                               arguments: ["git", "-C", package, "rev-parse", "HEAD"]))
        var cache = SelectiveCache(historyPath: settings.historyPath)
        let version = await cache.toolchain(swift) { await Self.output(Command(executable: swift, arguments: ["--version"])) }
        guard let version, !version.isEmpty else {
            throw FanoutError("selective testing could not read `swift --version`",
                              hint: "Check the toolchain, or run without --selective.", exitCode: .infrastructure)
        }
        let json = try await cache.graph(package: package, toolchain: version) { () async throws(FanoutError) -> Data in
            try await PackageGraph.describeJSON(package: package, swift: swift)
        }
        let graph = try PackageGraph.decode(json, package: package)
        cache.save()
        let head = await commit
        plan.commit = head.flatMap { $0.count == 40 && $0.allSatisfy(\.isHexDigit) ? $0 : nil }
        // Without Package.resolved, the build resolves the dependencies first, perhaps to newer versions than any
        // pass ran on: resolve now, so that the pins the tests will run on are the ones compared.
        if graph.dependencies.contains(where: { $0.type != "fileSystem" }),
           !FileManager.default.fileExists(atPath: package + "/Package.resolved") {
            progress(.phase("selective: resolving the dependencies of \(package) (no Package.resolved yet)"))
            let (ending, out, err) = await LocalShell("selective").capture(
                Command(executable: swift, arguments: ["package", "--package-path", package, "resolve"]), timeout: 900)
            guard case .exited(0) = ending else {
                let text = String(decoding: err + out, as: UTF8.self).split(separator: "\n").suffix(5).joined(separator: "\n")
                throw FanoutError("`swift package resolve` failed (\(ending)): \(text)",
                                  hint: "Run it in \(package) to see why.", exitCode: .infrastructure)
            }
        }
        let fingerprinter = InputFingerprinter(package: package, graph: graph, toolchain: version, settings: settings)
        let clock = ContinuousClock()
        let hashing = clock.now
        var folders = FolderDigests(root: package)
        plan.fingerprints = try fingerprinter.measure(covered, folders: &folders)
        plan.fingerprinter = fingerprinter
        let unknown = Set(settings.selective.targetInputs.keys).subtracting(graph.testTargets.map(\.name))
        if let name = unknown.sorted().first {
            throw FanoutError("selective.target_inputs names '\(name)', which is not a test target of \(graph.name)",
                              hint: "Test targets: \(graph.testTargets.map(\.name).joined(separator: ", ")).")
        }

        let runs = Self.readHistory(history, destinations: covered.map(\.name), notes: &plan.notes)
        let byName = try ClassPatterns(settings.selective.alwaysRun, option: "selective.always_run")
        for fp in plan.fingerprints {
            let rows = runs[fp.destination]?[fp.target] ?? []
            // A pass whose run-time inputs were observed is compared on those paths as they are now.
            var now: [String: TargetFingerprint] = [:]
            // Only the rows the policy reads: those newer than the newest failure.
            for row in rows.prefix(while: { $0.verdict != .failed }) where row.verdict == .passed && now[row.runID] == nil {
                now[row.runID] = (try? fingerprinter.current(fp, against: row, folders: &folders)) ?? fp
            }
            plan.decisions.append(SelectivePolicy.decide(fp, history: rows, alwaysRun: byName.firstMatch(fp.target),
                                                         current: { now[$0.runID] ?? fp }))
        }
        plan.hashSeconds = (clock.now - hashing).seconds
        plan.files = folders.files
        // Nothing to observe when every target is skipped (and `always_run` cannot bring one back after discovery).
        let anythingRuns = plan.decisions.contains { !$0.skipped } || !settings.selective.alwaysRun.isEmpty || !settings.isSelective
        if settings.selective.observe && settings.recordHistory && anythingRuns {
            let (observer, why) = await RunTimeObserver.find(
                folder: NSTemporaryDirectory() + "fanout-observe-\(UUID().uuidString.prefix(8))", choice: settings.selective.observer)
            if let observer {
                plan.observing = RunTimeObservation(observer: observer, destinations: Set(covered.map(\.name)))
                plan.observation = "run-time inputs observed on local slots (\(observer.name)): each target that ran is "
                    + "recorded with the files, folders and products its processes used"
            } else {
                plan.observation = "run-time inputs not observed: \(why ?? "unavailable"); each target that ran is "
                    + "recorded under the safe rule (every file of the package is its input)"
            }
        } else if !settings.selective.observe {
            plan.observation = "run-time inputs not observed (selective.observe: false): each target that ran is "
                + "recorded under the safe rule (every file of the package is its input)"
        }
        if !settings.isSelective {
            // `--feedback-first` without `--selective`: every target runs; what would have been skipped says so.
            for i in plan.decisions.indices where plan.decisions[i].skipped {
                plan.decisions[i].skipped = false
                plan.decisions[i].reason = "runs (selective skipping is off); would be skipped: \(plan.decisions[i].reason)"
            }
        }
    }

    private static func readHistory(_ history: HistorySession, destinations: [String],
                                    notes: inout [String]) -> [String: [String: [TargetRun]]] {
        do {
            guard let store = try history.existing() else { return [:] }
            return try store.targetRuns(destinations: destinations)
        } catch {
            notes.append("selective testing could not read the history (\(error)): every test target runs")
            return [:]
        }
    }

    /// A command's standard output, trimmed; nil when it failed.
    private static func output(_ command: Command) async -> String? {
        let (ending, out, _) = await LocalShell("selective").capture(command, timeout: 60)
        guard case .exited(0) = ending else { return nil }
        return String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
