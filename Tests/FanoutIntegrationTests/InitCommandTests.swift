import FanoutCoordinator
import FanoutCore
import Foundation
import Testing

/// `fanout init`: a fanout.yml for the package in a folder that Fanout itself loads as it is.
@Suite(.timeLimit(.minutes(3))) struct InitCommandTests {
    /// A folder with the demo suite's manifest (dump-package reads only the manifest).
    func demoManifest(_ dir: TempDir) throws -> String {
        let pkg = dir.file("pkg")
        try FileManager.default.createDirectory(atPath: pkg, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: repositoryRoot.appendingPathComponent("Tests/Fixtures/DemoSuite/Package.swift").path,
                                         toPath: pkg + "/Package.swift")
        return pkg
    }

    @Test func writesAConfigThatLoadsAndNamesThePackagesTestProduct() async throws {
        let dir = try TempDir()
        let pkg = try demoManifest(dir)
        let (code, out, err) = try await runCLI(["init"], cwd: pkg)
        #expect(code == 0, "\(err)")
        #expect(out.contains("test targets: DemoKitTests, IntegrationTests"), "\(out)")
        let text = try String(contentsOfFile: pkg + "/fanout.yml", encoding: .utf8)
        #expect(text.contains("# bundle: .build/debug/DemoSuitePackageTests.xctest"))
        #expect(text.contains("# agents:"), "the agents block is there, commented out")
        var settings = RunSettings()
        try ConfigFile.load(pkg + "/fanout.yml", into: &settings)
        #expect(settings.packagePath == ".")
        #expect(settings.configuration == "debug")

        // The commented-out lines are real config too: uncommented, they load.
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            for key in ["# bundle:", "# slots:"] where line.hasPrefix(key) { return line.dropFirst(2) }
            return line
        }.joined(separator: "\n")
        var full = RunSettings()
        try ConfigFile.parse(uncommented, file: "fanout.yml", into: &full)
        #expect(full.bundlePath == ".build/debug/DemoSuitePackageTests.xctest")
        #expect(full.slots == RunSettings.defaultSlots)
    }

    @Test func neverOverwritesWithoutForce() async throws {
        let dir = try TempDir()
        let pkg = try demoManifest(dir)
        try "slots: 3\n".write(toFile: pkg + "/fanout.yml", atomically: true, encoding: .utf8)
        let (code, _, err) = try await runCLI(["init"], cwd: pkg)
        #expect(code == 2)
        #expect(err.contains("fanout.yml already exists") && err.contains("--force"), "\(err)")
        #expect(try String(contentsOfFile: pkg + "/fanout.yml", encoding: .utf8) == "slots: 3\n", "left as it was")
        let (forced, _, ferr) = try await runCLI(["init", "--force", "--package", pkg])
        #expect(forced == 0, "\(ferr)")
        #expect(try String(contentsOfFile: pkg + "/fanout.yml", encoding: .utf8).contains("written by `fanout init`"))
        let (printed, out, _) = try await runCLI(["init", "--stdout", "--package", pkg])
        #expect(printed == 0 && out.contains("package: ."))
    }

    @Test func saysWhatIsWrongWithAFolderThatIsNotATestablePackage() async throws {
        let dir = try TempDir()
        let (none, _, noneErr) = try await runCLI(["init", "--package", dir.file("nothing")])
        #expect(none == 2)
        #expect(noneErr.contains("no Swift package at") && noneErr.contains("--package"), "\(noneErr)")

        let lib = dir.file("lib")
        try FileManager.default.createDirectory(atPath: lib, withIntermediateDirectories: true)
        try """
        // swift-tools-version: 6.0
        import PackageDescription
        let package = Package(name: "NoTests", targets: [.target(name: "A")])
        """.write(toFile: lib + "/Package.swift", atomically: true, encoding: .utf8)
        let (noTests, _, noTestsErr) = try await runCLI(["init"], cwd: lib)
        #expect(noTests == 2)
        #expect(noTestsErr.contains("has no test targets"), "\(noTestsErr)")
        #expect(!FileManager.default.fileExists(atPath: lib + "/fanout.yml"))

        try "let package = (".write(toFile: lib + "/Package.swift", atomically: true, encoding: .utf8)
        let (broken, _, brokenErr) = try await runCLI(["init"], cwd: lib)
        #expect(broken == 2)
        #expect(brokenErr.contains("could not read") && brokenErr.contains("dump-package"), "\(brokenErr)")
    }

    @Test func namesOnlyEverLandInComments() throws {
        let text = ConfigTemplate(package: .init(name: "P\nslots: 99", testTargets: ["A\nretries: 7", "B"]), slots: 2).render()
        var settings = RunSettings()
        try ConfigFile.parse(text, file: "fanout.yml", into: &settings)
        #expect(settings.slots != 99 && settings.retries == 0, "a line break in a name started no line of config")
        #expect(text.contains("Its test targets: A retries: 7, B."))
    }

    @Test func theDatabaseRecipeIsWrittenCommentedAndLoadsOnceUncommented() throws {
        let text = ConfigTemplate(package: .init(name: "App", testTargets: ["AppTests"]), slots: 4).render()
        var settings = RunSettings()
        try ConfigFile.parse(text, file: "fanout.yml", into: &settings)
        #expect(settings.hooks.isEmpty, "commented: no hook runs until the user means it")
        // Uncommented as a user would (the block from `# destination:` to the run hooks), it is valid config.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("# destination:") })
        let end = try #require(lines.firstIndex { $0.hasPrefix("#     tear_down: ./scripts/clean-up.sh") })
        let recipe = lines[start...end].map { String($0.dropFirst(2)) }.joined(separator: "\n")
        var uncommented = RunSettings()
        try ConfigFile.parse(recipe, file: "fanout.yml", into: &uncommented)
        #expect(uncommented.destination.environment["DATABASE_URL"] == "postgres://localhost/app_test_${FANOUT_WORKER}")
        #expect(uncommented.hooks[.slot, .setUp]?.line.contains(#"createdb "app_test_$FANOUT_WORKER""#) == true)
        #expect(uncommented.hooks.inOrder.count == 6 && uncommented.hooks[.slot, .tearDown]?.timeout == 300)
    }
}
