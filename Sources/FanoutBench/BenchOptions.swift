import ArgumentParser
import Foundation

// The options that several commands share, each declared once (name, default and help).

/// Options every command that runs things for real shares.
struct CommonBenchOptions: ParsableArguments {
    @Option(help: "Scratch folder for generated suites, histories, reports and fleets (never the repo).")
    var dir = "/tmp/fanout-bench"
    @Option(help: "The fanout executable (e.g. `$(swift build -c release --show-bin-path)/fanout`).")
    var fanout: String
    @Option(help: "The Fanout repository (for Agents/local-fleet).")
    var repo = FileManager.default.currentDirectoryPath
}

/// `--shape` (or `--kind`): the generated suite.
struct SuiteShapeOption: ParsableArguments {
    @Option(name: [.customLong("shape"), .customLong("kind")], help: SuiteShape.help)
    var shape: SuiteShape
}

/// `--seed` of a generated suite.
struct SuiteSeedOption: ParsableArguments {
    @Option(help: "The seed of the generated suite.")
    var seed: UInt64 = 1
}

/// `--json`: where a benchmark writes its results.
struct ResultsFileOption: ParsableArguments {
    @Option(help: "Where to write the results (JSON).")
    var json: String?

    /// Writes `results` to the --json file, when one is given.
    func write(_ results: some Encodable) throws {
        if let json { try JSONFiles.write(results, to: json) }
    }
}

/// `--repo`: the repository whose commit a results page names.
struct RepositoryOption: ParsableArguments {
    @Option(help: "The Fanout repository (for the commit).")
    var repo = FileManager.default.currentDirectoryPath
}
