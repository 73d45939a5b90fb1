import FanoutAgents
import FanoutCore
import Foundation

/// `fanout init`: a commented fanout.yml for the package in a folder, written from what the package declares.
///
/// The template is ConfigFile's own format: the file it writes loads without change (a test pins that), names the
/// package's test product and test targets, sets the slots to this machine's cores, and keeps the agents block and
/// the less common keys as comments pointing at config/fanout.example.yml.
public struct ConfigTemplate: Sendable, Equatable {
    /// What `swift package dump-package` says of the package.
    public struct Package: Sendable, Equatable {
        public var name: String
        public var testTargets: [String]

        public init(name: String, testTargets: [String]) {
            self.name = name
            self.testTargets = testTargets
        }

        /// The file `swift build --build-tests` links every test target into, on Linux.
        public var testProduct: String { "\(name)PackageTests.xctest" }
    }

    public var package: Package
    public var slots: Int

    public init(package: Package, slots: Int) {
        self.package = package
        self.slots = slots
    }

    /// Reads the package at `folder` with `swift package dump-package` (which parses the manifest; nothing is built
    /// or fetched).
    public static func inspect(folder: String) async throws(FanoutError) -> Package {
        let path = URL(fileURLWithPath: folder).standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: path + "/Package.swift") else {
            throw FanoutError("no Swift package at \(path) (no Package.swift there)",
                              hint: "Run `fanout init` in your package's folder, or pass --package PATH.")
        }
        guard let swift = ProductBuilder.findSwift() else {
            throw FanoutError("cannot find the `swift` command on PATH", hint: "Install a Swift toolchain (Swift 6).")
        }
        let shell = LocalShell("init")
        let (ending, out, err) = await shell.capture(
            Command(executable: swift, arguments: ["package", "dump-package", "--package-path", path]), timeout: 300)
        guard case .exited(0) = ending else {
            let lines = String(decoding: err, as: UTF8.self).split(separator: "\n").suffix(10).map(String.init)
            throw FanoutError("`swift package dump-package` could not read \(path)/Package.swift (\(ending))",
                              hint: "Fix the manifest so that `swift package dump-package` succeeds, then run `fanout init` again.",
                              details: lines)
        }
        return try parse(manifestJSON: out, folder: path)
    }

    /// The package's name and test targets from `swift package dump-package`'s JSON.
    public static func parse(manifestJSON: [UInt8], folder: String) throws(FanoutError) -> Package {
        struct Manifest: Decodable {
            struct Target: Decodable { var name: String; var type: String }
            var name: String
            var targets: [Target]
        }
        let manifest: Manifest
        do {
            manifest = try JSONDecoder().decode(Manifest.self, from: Data(manifestJSON))
        } catch {
            throw FanoutError("`swift package dump-package` printed something other than a manifest for \(folder)",
                              hint: "Run `swift package dump-package` in the folder to see what it says.")
        }
        let tests = manifest.targets.filter { $0.type == "test" }.map(\.name)
        guard !tests.isEmpty else {
            throw FanoutError("the package \(manifest.name) at \(folder) has no test targets",
                              hint: "Fanout runs a package's tests: add a .testTarget to Package.swift first.")
        }
        return Package(name: manifest.name, testTargets: tests)
    }

    /// Writes `text` as the folder's fanout.yml (in one step) and returns its path; an existing file is replaced only
    /// when `replacing`.
    public static func write(_ text: String, into folder: String, replacing: Bool) throws(FanoutError) -> String {
        let path = URL(fileURLWithPath: folder).appendingPathComponent(ConfigFile.defaultName).standardizedFileURL.path
        if FileManager.default.fileExists(atPath: path), !replacing {
            throw FanoutError("\(path) already exists", hint: "Keep it, or pass --force to replace it (--stdout prints the new one).")
        }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw FanoutError("cannot write \(path): \(error.localizedDescription)", hint: "Check the folder's permissions.")
        }
        return path
    }

    /// The commented fanout.yml.
    public func render() -> String {
        // Names only ever land in comments; a line break in one must not start a line of config.
        func oneLine(_ text: String) -> String { text.split(whereSeparator: \.isNewline).joined(separator: " ") }
        let targets = oneLine(package.testTargets.joined(separator: ", "))
        let firstTarget = package.testTargets.first ?? "MyTests"
        let name = oneLine(package.name), product = oneLine(package.testProduct)
        return """
        # fanout.yml for \(name), written by `fanout init`. Every key and its default: config/fanout.example.yml
        # in Fanout's repository. Flags override this file; unknown keys are errors.
        # Next: `fanout plan` shows how the tests split across the slots; `fanout run` runs them.

        # The package to build (`swift build --build-tests`). Its test targets: \(targets).
        package: .
        # Or a product built beforehand, used as it is (skips the build), e.g. in a CI job after a build step:
        # bundle: .build/debug/\(product)

        build:
          configuration: debug          # debug | release

        # Test processes at once. Default: twice the cores of the machine it runs on (here \(slots)), which suits a CI
        # runner of another size too: computing tests take one free core each, tests that wait fill the other slots.
        # Set it to run more or fewer (tests that wait a lot gain from more).
        # slots: \(slots)

        # Regular expressions over Module.Class; a class runs when it matches any filter (or there are none) and no skip.
        filter: []
        skip: []
        # e.g. skip: ["^\(Self.regexLiteral(firstTarget))\\\\.SlowTests$"]

        # Timing history: every recorded run makes the next plan better. In CI, carry it between jobs with
        # `fanout history export` / `fanout history import` (see README, "In CI").
        history: .fanout/history.sqlite
        reports: .fanout/reports

        # Re-run failed tests up to N times; fail-then-pass is reported flaky.
        retries: 0

        # Classes that must run whole (expensive set-up, tests that depend on each other), as regexes over Module.Class.
        keep_whole: []

        # Tests that share a database, a folder or a port: give each worker its own. Every test process knows who it
        # is (FANOUT_WORKER, unique in the run; FANOUT_SLOT, FANOUT_AGENT, FANOUT_DESTINATION, FANOUT_RUN_ID,
        # FANOUT_WORKERS), `environment:` values may use them, and hooks create and drop what each one uses
        # (see README, "Suites that share a database"):
        # destination:
        #   environment:
        #     DATABASE_URL: postgres://localhost/app_test_${FANOUT_WORKER}
        # hooks:
        #   timeout: 300                  # seconds a hook may take (each may say its own: {command: ..., timeout: 60})
        #   slot:                         # before each slot's first unit, after its last
        #     set_up: createdb "app_test_$FANOUT_WORKER" && psql -q -d "app_test_$FANOUT_WORKER" -f db/schema.sql
        #     tear_down: dropdb --if-exists "app_test_$FANOUT_WORKER"
        #   agent:                        # once per agent, before its first unit and after its last
        #     set_up: ./scripts/start-services.sh
        #     tear_down: ./scripts/stop-services.sh
        #   run:                          # on this machine, before anything is dispatched and at the very end
        #     set_up: ./scripts/prepare.sh
        #     tear_down: ./scripts/clean-up.sh

        # Remote agents over SSH, each with its own slots (host keys are checked strictly; see Agents/README.md):
        # agents:
        #   - name: linux-1
        #     host: build-7.example.net
        #     user: fanout
        #     identity: ~/.ssh/fanout_ed25519
        #     slots: 4
        #     workdir: /srv/fanout

        """
    }

    /// A target name inside a regex written in a YAML comment (target names are identifiers; anything else is dropped).
    static func regexLiteral(_ name: String) -> String {
        String(name.filter { $0.isLetter || $0.isNumber || $0 == "_" })
    }
}
