import FanoutAgents
@testable import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// A copy of a fixture package of Tests/Fixtures in a fresh folder, without build output.
func fixtureCopy(_ name: String, _ dir: TempDir) throws -> String {
    let package = dir.file(name)
    try FileManager.default.copyItem(atPath: repositoryRoot.appendingPathComponent("Tests/Fixtures/\(name)").path, toPath: package)
    for leftover in [".build", ".swiftpm", ".fanout", "Vendor/Tally/.build", "Package.resolved"] {
        try? FileManager.default.removeItem(atPath: package + "/" + leftover)
    }
    return package
}

/// A copy of the Diamond fixture (Tests/Fixtures/Diamond) in a fresh folder, without build output.
func diamondCopy(_ dir: TempDir) throws -> String { try fixtureCopy("Diamond", dir) }

/// Selective testing's inputs, mutated one by one on the Diamond fixture (a leaf with a resource, two libraries on
/// it, one of them using a local package's product; three test targets): each change must change the inputs of
/// exactly the test targets that can see it. The expected sets are computed here, independently, from SwiftPM's
/// own dump of the manifest.
@Suite("Selective testing: what each input change re-runs", .serialized, .timeLimit(.minutes(5)))
struct SelectiveInputsTests {
    /// The manifest as `swift package dump-package` prints it: targets, their folders and dependencies.
    struct Manifest {
        var targets: [String: (type: String, path: String, deps: [String], usesProducts: Bool)] = [:]

        init(package: String) async throws {
            let (ending, out, err) = await LocalTransport(slots: 1).capture(
                Command(executable: "/usr/bin/env", arguments: ["swift", "package", "--package-path", package, "dump-package"]))
            guard case .exited(0) = ending else { throw TestFailure("dump-package failed: \(String(decoding: err, as: UTF8.self))") }
            let json = try JSONSerialization.jsonObject(with: Data(out)) as? [String: Any] ?? [:]
            for t in json["targets"] as? [[String: Any]] ?? [] {
                let name = t["name"] as? String ?? ""
                let type = t["type"] as? String ?? ""
                let path = t["path"] as? String ?? ((type == "test" ? "Tests/" : "Sources/") + name)
                var deps: [String] = []
                var products = false
                for d in t["dependencies"] as? [[String: Any]] ?? [] {
                    if let byName = d["byName"] as? [Any], let n = byName.first as? String { deps.append(n) }
                    if let target = d["target"] as? [Any], let n = target.first as? String { deps.append(n) }
                    if d["product"] != nil { products = true }
                }
                targets[name] = (type, path, deps, products)
            }
        }

        var testTargets: Set<String> { Set(targets.filter { $0.value.type == "test" }.keys) }

        func closure(_ name: String) -> Set<String> {
            var seen: Set<String> = [name], stack = [name]
            while let n = stack.popLast() {
                for d in targets[n]?.deps ?? [] where targets[d] != nil && seen.insert(d).inserted { stack.append(d) }
            }
            return seen
        }

        /// Under the safe rule (nothing observed): every test target, but for a Swift source of a test target, which
        /// only the targets whose graph holds it can see.
        func assumedAffected(by file: String) -> Set<String> {
            let testFolder = targets.first { $0.value.type == "test" && file.hasPrefix($0.value.path + "/") }
            return testFolder != nil && file.hasSuffix(".swift") ? affected(by: file) : testTargets
        }

        /// The test targets that can see a file: those whose closure holds the target whose folder has it.
        func affected(by file: String) -> Set<String> {
            if file.hasPrefix("Package") && file.hasSuffix(".swift") && !file.contains("/") { return testTargets }
            if file.hasPrefix("Vendor/") || file == "Package.resolved" {
                return testTargets.filter { closure($0).contains { targets[$0]?.usesProducts == true } }
            }
            guard let owner = targets.first(where: { file.hasPrefix($0.value.path + "/") })?.key else { return [] }
            return testTargets.filter { closure($0).contains(owner) }
        }
    }

    /// Each target's digest under the safe rule, or (`observed`) as a record whose tests were seen to use nothing
    /// at run time beyond their graph.
    func fingerprints(_ package: String, _ settings: RunSettings, toolchain: String = "Swift 6.x",
                      destinations: [DestinationSpec]? = nil, observed: Bool = false) async throws -> [String: String] {
        let swift = try #require(ProductBuilder.findSwift())
        let graph = try await PackageGraph.describe(package: package, swift: swift)
        let f = InputFingerprinter(package: package, graph: graph, toolchain: toolchain, settings: settings)
        var folders = FolderDigests(root: package)
        return Dictionary(uniqueKeysWithValues: try f.fingerprints(for: destinations ?? settings.configuredDestinations)
            .map { fp in
                let digest = observed ? try f.observed(fp, paths: [], productFolders: [], folders: &folders).digest : fp.digest
                return ("\(fp.destination) \(fp.target)", digest)
            })
    }

    static func changed(_ before: [String: String], _ after: [String: String]) -> Set<String> {
        Set(before.keys.filter { before[$0] != after[$0] }.map { String($0.split(separator: " ").last ?? "") })
    }

    static func mutate(_ path: String) throws -> Data {
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        try (original + Data("\n// mutated\n".utf8)).write(to: URL(fileURLWithPath: path))
        return original
    }

    @Test func underTheSafeRuleEveryFileButAnotherTestTargetsSourcesReRunsEveryTarget() async throws {
        let dir = try TempDir()
        let package = try diamondCopy(dir)
        var settings = RunSettings()
        settings.packagePath = package
        let manifest = try await Manifest(package: package)
        #expect(manifest.testTargets == ["LeafTests", "LeftTests", "BothTests"])
        let base = try await fingerprints(package, settings)
        #expect(base.count == 3)
        let files = FileWalk.files(under: package)
        #expect(files.count >= 12, "every source, resource, manifest and fixture file: \(files)")
        var checked = 0
        for file in files {
            let path = package + "/" + file
            let original = try Self.mutate(path)
            let after = try await fingerprints(package, settings)
            try original.write(to: URL(fileURLWithPath: path))
            #expect(Self.changed(base, after) == manifest.assumedAffected(by: file), "changing \(file)")
            checked += 1
        }
        #expect(checked == files.count)
        #expect(try await fingerprints(package, settings) == base, "restored: the same inputs again")

        // A new file anywhere is a change of every target; a new test source only of its own target's.
        let added = package + "/Sources/Left/Extra.swift"
        try Data("let extra = 1\n".utf8).write(to: URL(fileURLWithPath: added))
        #expect(Self.changed(base, try await fingerprints(package, settings)) == manifest.testTargets)
        try FileManager.default.removeItem(atPath: added)
        let test = package + "/Tests/LeftTests/Extra.swift"
        try Data("let extra = 1\n".utf8).write(to: URL(fileURLWithPath: test))
        #expect(Self.changed(base, try await fingerprints(package, settings)) == ["LeftTests"])
        try FileManager.default.removeItem(atPath: test)

        // Package.resolved: every target under the safe rule (an executable a test runs may use the package).
        let resolved = package + "/Package.resolved"
        try Data(#"{"pins":[],"version":3}"#.utf8).write(to: URL(fileURLWithPath: resolved))
        #expect(Self.changed(base, try await fingerprints(package, settings)) == manifest.testTargets)
    }

    /// Observed run-time inputs narrow the safe rule to the graph plus what the tests were seen to use: LeafTests
    /// read Fixtures/expected.txt (outside every target folder) and looked for a file that is not there; every file
    /// of the package, mutated, changes exactly the targets whose graph holds it, and the fixture LeafTests too.
    @Test func observedInputsNarrowTheSafeRuleToTheGraphAndWhatWasUsed() async throws {
        let dir = try TempDir()
        let package = try diamondCopy(dir)
        var settings = RunSettings()
        settings.packagePath = package
        let manifest = try await Manifest(package: package)
        let swift = try #require(ProductBuilder.findSwift())
        let graph = try await PackageGraph.describe(package: package, swift: swift)
        let f = InputFingerprinter(package: package, graph: graph, toolchain: "Swift 6.x", settings: settings)
        let seen: [String: Set<String>] = [
            "LeafTests": [package + "/Fixtures/expected.txt", package + "/Fixtures/absent.txt", "/usr/lib/libc.so.6",
                          package + "/.build/debug/DiamondPackageTests.xctest", package + "/Tests/LeafTests/LeafTests.swift"],
            "LeftTests": [], "BothTests": [],
        ]
        func observed() throws -> [String: (TargetFingerprint, TargetRun)] {
            var folders = FolderDigests(root: package)
            var out: [String: (TargetFingerprint, TargetRun)] = [:]
            for fp in try f.fingerprints(for: settings.configuredDestinations) {
                let o = try f.observed(fp, paths: seen[fp.target] ?? [], productFolders: [], folders: &folders)
                out[fp.target] = (fp, TargetRun(target: fp.target, destination: fp.destination, fingerprint: o.digest,
                                                parts: o.parts, verdict: .passed, runID: "r", commit: nil, recordedAt: Date()))
            }
            return out
        }
        let recorded = try observed()
        #expect(recorded["LeafTests"]?.1.observedInputs == ["Fixtures/absent.txt", "Fixtures/expected.txt"])
        #expect(recorded["LeftTests"]?.1.observedInputs == [])
        func changed() throws -> Set<String> {
            var folders = FolderDigests(root: package)
            var out: Set<String> = []
            for fp in try f.fingerprints(for: settings.configuredDestinations) {
                let row = try #require(recorded[fp.target]?.1)
                if try f.current(fp, against: row, folders: &folders).digest != row.fingerprint { out.insert(fp.target) }
            }
            return out
        }
        #expect(try changed().isEmpty, "nothing changed: every observed record matches")
        for file in FileWalk.files(under: package) {
            let path = package + "/" + file
            let original = try Self.mutate(path)
            let now = try changed()
            try original.write(to: URL(fileURLWithPath: path))
            let expected = manifest.affected(by: file).union(file == "Fixtures/expected.txt" ? ["LeafTests"] : [])
            #expect(now == expected, "changing \(file)")
        }
        // The file LeafTests looked for and did not find appears: a change of LeafTests alone.
        try Data("x".utf8).write(to: URL(fileURLWithPath: package + "/Fixtures/absent.txt"))
        #expect(try changed() == ["LeafTests"])
        try FileManager.default.removeItem(atPath: package + "/Fixtures/absent.txt")
        // A file nobody used appears outside the targets: nothing runs.
        try Data("x".utf8).write(to: URL(fileURLWithPath: package + "/NOTES.md"))
        #expect(try changed().isEmpty)
        // The fixture LeafTests read is deleted: LeafTests runs.
        let fixture = try Data(contentsOf: URL(fileURLWithPath: package + "/Fixtures/expected.txt"))
        try FileManager.default.removeItem(atPath: package + "/Fixtures/expected.txt")
        #expect(try changed() == ["LeafTests"])
        try fixture.write(to: URL(fileURLWithPath: package + "/Fixtures/expected.txt"))
        #expect(try changed().isEmpty)
    }

    /// A package whose Package.resolved is not there yet (a library that does not commit it, a fresh clone): the
    /// build would resolve, perhaps to newer versions than any pass ran on, so selective testing resolves first and
    /// compares the pins the tests will run on; and what a run records is read after its build.
    @Test func missingPinsAreResolvedBeforeTheyAreCompared() async throws {
        let dir = try TempDir()
        let package = dir.file("Pinned")
        try FileManager.default.createDirectory(atPath: package + "/Sources/Lib", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: package + "/Tests/LibTests", withIntermediateDirectories: true)
        try """
            // swift-tools-version: 6.0
            import PackageDescription
            let package = Package(name: "Pinned",
                dependencies: [.package(url: "https://github.com/mxcl/Version", from: "2.2.1")],
                targets: [.target(name: "Lib", dependencies: ["Version"]), .testTarget(name: "LibTests", dependencies: ["Lib"])])

            """.write(toFile: package + "/Package.swift", atomically: true, encoding: .utf8)
        try "public let one = 1\n".write(toFile: package + "/Sources/Lib/Lib.swift", atomically: true, encoding: .utf8)
        try "import Lib\n".write(toFile: package + "/Tests/LibTests/LibTests.swift", atomically: true, encoding: .utf8)
        var settings = RunSettings()
        settings.packagePath = package
        settings.historyPath = dir.file("h.sqlite")
        settings.selective.enabled = true
        var plan = try await SelectivePlan.make(settings: settings, destinations: settings.configuredDestinations) { _ in }
        #expect(plan.notes.isEmpty, "\(plan.notes)")
        #expect(FileManager.default.fileExists(atPath: package + "/Package.resolved"), "resolved before hashing")
        let pinned = try #require(plan.fingerprints.first?.parts["Package.resolved"])
        #expect(pinned == (try await SelectivePlan.make(settings: settings, destinations: settings.configuredDestinations) { _ in })
            .fingerprints.first?.parts["Package.resolved"], "the next run compares the same pins")

        // The pins change while the run builds (a manifest's new requirement): the run records the pins it ran on.
        try #"{"pins":[],"version":3}"#.write(toFile: package + "/Package.resolved", atomically: true, encoding: .utf8)
        plan.observing = nil
        let recorded = await plan.recordedFingerprints()
        #expect(recorded.first?.parts["Package.resolved"] != pinned)
        #expect(recorded.first?.digest == (try await SelectivePlan.make(settings: settings, destinations: settings.configuredDestinations) { _ in })
            .fingerprints.first?.digest)
    }

    /// A fixture folder that is a symbolic link to a folder outside the package: the test opened it through the
    /// link, so a change behind the link is a change of the target.
    @Test func aFixtureBehindASymbolicLinkIsSeenThroughIt() async throws {
        let dir = try TempDir()
        let package = try diamondCopy(dir)
        try FileManager.default.createDirectory(atPath: dir.file("shared"), withIntermediateDirectories: true)
        try Data("1".utf8).write(to: URL(fileURLWithPath: dir.file("shared/data.txt")))
        try FileManager.default.createSymbolicLink(atPath: package + "/Fixtures/linked", withDestinationPath: dir.file("shared"))
        var settings = RunSettings()
        settings.packagePath = package
        let swift = try #require(ProductBuilder.findSwift())
        let f = InputFingerprinter(package: package, graph: try await PackageGraph.describe(package: package, swift: swift),
                                   toolchain: "Swift 6.x", settings: settings)
        var folders = FolderDigests(root: package)
        let leaf = try #require(try f.fingerprints(for: settings.configuredDestinations).first { $0.target == "LeafTests" })
        // What strace reports for an open through the link: the path asked for, and the path it resolved to.
        let o = try f.observed(leaf, paths: [package + "/Fixtures/linked/data.txt", dir.file("shared/data.txt")],
                               productFolders: [], folders: &folders)
        #expect(o.observedInputs == ["Fixtures/linked/data.txt"])
        let row = TargetRun(target: "LeafTests", destination: leaf.destination, fingerprint: o.digest, parts: o.parts,
                            verdict: .passed, runID: "r", commit: nil, recordedAt: Date())
        try Data("2".utf8).write(to: URL(fileURLWithPath: dir.file("shared/data.txt")))
        var now = FolderDigests(root: package)
        let current = try f.current(try #require(try f.fingerprints(for: settings.configuredDestinations).first { $0.target == "LeafTests" }),
                                    against: row, folders: &now)
        #expect(current.digest != row.fingerprint)
        #expect(current.changed(since: row.parts) == ["observed Fixtures/linked/data.txt"])
    }

    @Test func buildFlagsToolchainAndADestinationsEnvironmentReRunTheirTargets() async throws {
        let dir = try TempDir()
        let package = try diamondCopy(dir)
        var settings = RunSettings()
        settings.packagePath = package
        settings.destinations = [DestinationSpec(destination: Destination(name: "a", environment: ["MODE": "1"])),
                                 DestinationSpec(destination: Destination(name: "b", environment: ["MODE": "1"]))]
        let base = try await fingerprints(package, settings)
        #expect(base.count == 6)

        var flags = settings
        flags.buildFlags = ["-Xswiftc", "-DEXTRA"]
        #expect(Set(try await fingerprints(package, flags).filter { base[$0.key] != $0.value }.keys) == Set(base.keys))
        var release = settings
        release.configuration = "release"
        #expect(Set(try await fingerprints(package, release).filter { base[$0.key] != $0.value }.keys) == Set(base.keys))

        let otherToolchain = try await fingerprints(package, settings, toolchain: "Swift 6.y")
        #expect(Set(otherToolchain.filter { base[$0.key] != $0.value }.keys) == Set(base.keys))

        var env = settings
        env.destinations[1].destination.environment["MODE"] = "2"
        let changed = Set(try await fingerprints(package, env).filter { base[$0.key] != $0.value }.keys)
        #expect(changed == ["b LeafTests", "b LeftTests", "b BothTests"], "only destination b's targets")
        var args = settings
        args.destinations[0].destination.arguments = ["--verbose"]
        #expect(Set(try await fingerprints(package, args).filter { base[$0.key] != $0.value }.keys)
                == ["a LeafTests", "a LeftTests", "a BothTests"])
    }

    @Test func declaredInputsReRunTheTargetsTheyAreDeclaredFor() async throws {
        let dir = try TempDir()
        let package = try diamondCopy(dir)
        let fixture = package + "/Fixtures/expected.txt"
        var settings = RunSettings()
        settings.packagePath = package

        // Where observation saw nothing (a file a server outside the tests read, say), an undeclared fixture is
        // invisible: nothing re-runs (why `inputs:` exists). The safe rule, without observation, sees it.
        #expect(Self.changed(try await fingerprints(package, settings), try await { () async throws -> [String: String] in
            let original = try Self.mutate(fixture)
            defer { try? original.write(to: URL(fileURLWithPath: fixture)) }
            return try await fingerprints(package, settings)
        }()) == ["LeafTests", "LeftTests", "BothTests"])
        let plain = try await fingerprints(package, settings, observed: true)
        var original = try Self.mutate(fixture)
        #expect(Self.changed(plain, try await fingerprints(package, settings, observed: true)).isEmpty)
        try original.write(to: URL(fileURLWithPath: fixture))

        var everyone = settings
        everyone.selective.inputs = ["Fixtures/**"]
        let declared = try await fingerprints(package, everyone, observed: true)
        #expect(Self.changed(plain, declared) == ["LeafTests", "LeftTests", "BothTests"], "declaring inputs is a change")
        original = try Self.mutate(fixture)
        #expect(Self.changed(declared, try await fingerprints(package, everyone, observed: true)) == ["LeafTests", "LeftTests", "BothTests"])
        try original.write(to: URL(fileURLWithPath: fixture))

        var leafOnly = settings
        leafOnly.selective.targetInputs = ["LeafTests": ["Fixtures/*.txt"]]
        let own = try await fingerprints(package, leafOnly, observed: true)
        original = try Self.mutate(fixture)
        #expect(Self.changed(own, try await fingerprints(package, leafOnly, observed: true)) == ["LeafTests"])
        try original.write(to: URL(fileURLWithPath: fixture))
        // A file the pattern does not match changes nothing.
        try Data("x".utf8).write(to: URL(fileURLWithPath: package + "/Fixtures/other.json"))
        #expect(Self.changed(own, try await fingerprints(package, leafOnly, observed: true)).isEmpty)
    }

    /// What selective testing cannot cover runs everything and says so: an xcodebuild destination, a given product.
    @Test func xcodebuildDestinationsAndGivenProductsAreSaidToRunEverything() async throws {
        var s = RunSettings()
        s.selective.enabled = true
        let ios = DestinationSpec(destination: Destination(name: "ios"), frameworks: [.xcodebuild])
        let plan = try await SelectivePlan.make(settings: s, destinations: [ios], progress: { _ in })
        #expect(plan.notes == ["ios runs xcodebuild: selective testing covers Swift packages only (not Xcode projects "
                               + "yet), so all of its tests run"])
        #expect(plan.decisions.isEmpty && !plan.skipsEverything)
        s.bundlePath = "/tmp/Some.xctest"
        let given = try await SelectivePlan.make(settings: s, destinations: s.configuredDestinations, progress: { _ in })
        #expect(given.notes.first?.contains("runs a given product (--bundle)") == true)
    }

    /// The walk sees what the build reads: files behind symbolic links (to files and to folders), never loops on a
    /// link back up the tree, and leaves build output out.
    @Test func theWalkFollowsLinksAndLeavesBuildOutputOut() throws {
        let dir = try TempDir()
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir.file("t/sub"), withIntermediateDirectories: true)
        try fm.createDirectory(atPath: dir.file("t/.build/debug"), withIntermediateDirectories: true)
        try fm.createDirectory(atPath: dir.file("t/.fanout/reports"), withIntermediateDirectories: true)
        try fm.createDirectory(atPath: dir.file("elsewhere"), withIntermediateDirectories: true)
        for file in ["t/a.swift", "t/sub/b.json", "t/.build/debug/x.o", "t/.fanout/history.sqlite", "elsewhere/c.swift",
                     "outside.txt"] {
            try Data(file.utf8).write(to: URL(fileURLWithPath: dir.file(file)))
        }
        try fm.createSymbolicLink(atPath: dir.file("t/linked"), withDestinationPath: dir.file("elsewhere"))
        try fm.createSymbolicLink(atPath: dir.file("t/file-link.txt"), withDestinationPath: dir.file("outside.txt"))
        try fm.createSymbolicLink(atPath: dir.file("t/sub/up"), withDestinationPath: dir.file("t"))
        #expect(FileWalk.files(under: dir.file("t")) == ["a.swift", "file-link.txt", "linked/c.swift", "sub/b.json"])
        #expect(FileWalk.files(under: dir.file("missing")).isEmpty)
        // A link that points nowhere is reported, not passed over: what it pointed to cannot be hashed.
        try fm.createSymbolicLink(atPath: dir.file("t/sub/gone"), withDestinationPath: dir.file("nowhere"))
        var broken: [String] = []
        #expect(FileWalk.files(under: dir.file("t"), broken: &broken).count == 4)
        #expect(broken == ["sub/gone"])
    }

    @Test func globsMatchAsDocumented() {
        // A pattern that does not compile is a failure here, never "no match".
        func matches(_ glob: String, _ path: String) -> Bool {
            do {
                return try Regex(DeclaredInputs.regex(glob)).wholeMatch(in: path) != nil
            } catch {
                Issue.record("\(glob) gives a pattern that does not compile: \(DeclaredInputs.regex(glob)): \(error)")
                return false
            }
        }
        #expect(matches("Fixtures/**", "Fixtures/a/b.json"))
        #expect(matches("**/*.json", "a.json"))
        #expect(matches("**/*.json", "x/y/a.json"))
        #expect(!matches("*.json", "x/a.json"), "* stays within a folder")
        #expect(matches("data?.txt", "data1.txt"))
        #expect(!matches("data?.txt", "data/.txt"))
        #expect(matches("a+b(1).txt", "a+b(1).txt"), "regex characters are literal")
    }
}

/// The toolchain's answers are remembered between runs only while what they depend on stays the same.
@Suite("Selective testing: the cache of the toolchain's answers", .timeLimit(.minutes(1)))
struct SelectiveCacheTests {
    @Test func answersAreAskedAgainWhenTheirInputsChange() async throws {
        let dir = try TempDir()
        let history = dir.file("h/history.sqlite")
        let package = dir.file("pkg")
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: true)
        try Data("// v1".utf8).write(to: URL(fileURLWithPath: package + "/Package.swift"))
        let swift = dir.file("swift")
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: swift))
        var asked = 0
        var cache = SelectiveCache(historyPath: history)
        #expect(await cache.toolchain(swift) { asked += 1; return "Swift 1" } == "Swift 1")
        _ = try await cache.graph(package: package, toolchain: "Swift 1") { () async throws(FanoutError) -> Data in asked += 1; return Data("{}".utf8) }
        cache.save()
        #expect(asked == 2)

        var again = SelectiveCache(historyPath: history)
        #expect(await again.toolchain(swift) { asked += 1; return "other" } == "Swift 1", "the same executable: remembered")
        _ = try await again.graph(package: package, toolchain: "Swift 1") { () async throws(FanoutError) -> Data in asked += 1; return Data("{}".utf8) }
        #expect(asked == 2)

        // A changed manifest, new pins, or another toolchain: asked again.
        try Data("// v2".utf8).write(to: URL(fileURLWithPath: package + "/Package.swift"))
        _ = try await again.graph(package: package, toolchain: "Swift 1") { () async throws(FanoutError) -> Data in asked += 1; return Data("{}".utf8) }
        #expect(asked == 3)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: package + "/Package.resolved"))
        _ = try await again.graph(package: package, toolchain: "Swift 1") { () async throws(FanoutError) -> Data in asked += 1; return Data("{}".utf8) }
        #expect(asked == 4)
        _ = try await again.graph(package: package, toolchain: "Swift 2") { () async throws(FanoutError) -> Data in asked += 1; return Data("{}".utf8) }
        #expect(asked == 5)
        // A new swift executable (another file in its place): asked again.
        try FileManager.default.removeItem(atPath: swift)
        try Data("#!/bin/sh\n# another toolchain\n".utf8).write(to: URL(fileURLWithPath: swift))
        #expect(await again.toolchain(swift) { asked += 1; return "Swift 2" } == "Swift 2")
        #expect(asked == 6)
    }
}
