import ArgumentParser
import FanoutCoordinator
import Foundation

/// Flags shared by `run`, `plan` and `list`. Flags override the config file.
struct CommonOptions: ParsableArguments {
    @Option(help: "The config file (default: ./fanout.yml when it exists).")
    var config: String?

    @Option(help: "The Swift package to build and test.")
    var package: String?

    @Option(help: "A built test product (<Package>PackageTests.xctest) to use as is: skips the build.")
    var bundle: String?

    @Option(name: [.customShort("c"), .long], help: "Build configuration: debug or release.")
    var configuration: String?

    @Option(help: "Build folder for `swift build --scratch-path`.")
    var scratchPath: String?

    @Option(name: .customLong("Xbuild"), parsing: .unconditionalSingleValue,
            help: "An extra argument for `swift build` (repeatable).")
    var buildFlags: [String] = []

    @Option(help: "Run only classes whose Module.Class matches this regex (repeatable).")
    var filter: [String] = []

    @Option(help: "Leave out classes whose Module.Class matches this regex (repeatable).")
    var skip: [String] = []

    @Option(help: "Run only this configured destination (repeatable; default: all).")
    var destination: [String] = []

    @Option(help: "Never split classes matching this regex by methods nor let idle slots take over their tests (repeatable).")
    var keepWhole: [String] = []

    @Flag(help: "Never split long classes by methods.")
    var noSplit = false

    @Option(help: "Local worker slots (default: twice the number of cores; computing work takes one free core each, waiting work fills the rest).")
    var slots: Int?

    @Option(help: "The timing history database (default: .fanout/history.sqlite).")
    var history: String?

    @Option(help: "The quarantine file: muted and skipped tests (default: fanout-quarantine.yml when it exists).")
    var quarantine: String?

    @Flag(inversion: .prefixedNo, exclusivity: .chooseLast,
          help: "Skip the test targets whose every input equals that of a full pass on record, saying why (docs/selective.md); --no-selective runs all.")
    var selective: Bool?

    @Flag(help: "Start first the work a change most likely broke: test targets whose inputs changed or whose last run failed, and classes that failed in the last 5 runs (with or without --selective).")
    var feedbackFirst = false

    /// Merges the config file and these flags into settings.
    func settings() throws -> RunSettings {
        var settings = try Self.fileSettings(config: config)
        if let package { settings.packagePath = package }
        if let bundle { settings.bundlePath = bundle }
        if let configuration { settings.configuration = configuration }
        if let scratchPath { settings.scratchPath = scratchPath }
        if !buildFlags.isEmpty { settings.buildFlags = buildFlags }
        if !filter.isEmpty { settings.filters = filter }
        if !skip.isEmpty { settings.skips = skip }
        if let slots { settings.slots = slots }
        if !keepWhole.isEmpty { settings.keepWhole = keepWhole }
        if !destination.isEmpty { settings.selectedDestinations = destination }
        if noSplit { settings.splitClasses = false }
        if let history { settings.historyPath = history }
        if let quarantine { settings.quarantinePath = quarantine }
        if let selective { settings.selective.enabled = selective }
        if feedbackFirst { settings.selective.feedbackFirst = true }
        try settings.validate()
        return settings
    }

    /// The config file's settings: `config`, else ./fanout.yml when it exists, else the defaults.
    static func fileSettings(config: String?) throws -> RunSettings {
        var settings = RunSettings()
        if let config {
            try ConfigFile.load(config, into: &settings)
        } else if FileManager.default.fileExists(atPath: ConfigFile.defaultName) {
            try ConfigFile.load(ConfigFile.defaultName, into: &settings)
        }
        return settings
    }
}
