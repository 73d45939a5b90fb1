import FanoutCoordinator
import FanoutCore
import FanoutHistory
import Foundation
import Testing

/// `fanout history export` / `import` / `import --junit` as CI uses them: the real binary, real files, the real demo
/// suite's plan.
@Suite(.timeLimit(.minutes(10))) struct HistoryTransferCLITests {
    let captured = repositoryRoot.appendingPathComponent("Tests/Fixtures/Captured")
    var xctestJUnit: String { captured.appendingPathComponent("swift-test-xunit.xml").path }
    var swiftTestingJUnit: String { captured.appendingPathComponent("swift-test-xunit-swift-testing.xml").path }

    /// The first CI run on a fresh machine: `swift test --xunit-output` times imported, then `fanout plan` estimates
    /// every class of the demo suite from them instead of guessing from test counts.
    @Test func aJUnitImportPlansTheNextRunFromHistory() async throws {
        let bundle = try await DemoSuite.shared.bundle()
        let dir = try TempDir()
        var settings = demoSettings(bundle: bundle, dir: dir)
        settings.splitClasses = false  // whole classes, so each estimate is its class's own sample

        let guessed = try await Coordinator(settings: settings).prepare()
        #expect(guessed.items.allSatisfy { if case .noHistory = $0.source { true } else { false } })

        let outcome = try HistoryTransfer.importJUnit([xctestJUnit, swiftTestingJUnit],
                                                      historyPath: settings.historyPath, destination: nil,
                                                      defaultDestination: try HistoryTransfer.defaultDestination(settings))
        #expect(outcome.summary.imported.count == 2)
        let planned = try await Coordinator(settings: settings).prepare()
        #expect(planned.items.count == 56, "50 XCTest classes; 6 Swift Testing suites with the nested one and free functions")
        for item in planned.items {
            #expect(item.source == .history(samples: 1), "\(item.suite): \(item.source)")
        }
        let (store, _) = try HistoryStore.open(at: settings.historyPath)
        let classes = try store.timingHistory(destination: "local").classes
        let migration = try #require(planned.items.first { $0.suite.name == "DatabaseMigrationTests" })
        #expect(migration.estimate == classes[migration.suite]?.first?.duration)
        #expect(migration.estimate > 5, "8 s in the captured run; a guess would say 0.8 s")
    }

    @Test func exportImportAndJUnitThroughTheCLI() async throws {
        let dir = try TempDir()
        let seeded = dir.file("seeded.sqlite"), merged = dir.file("merged.sqlite"), export = dir.file("h.json")

        var (code, out, err) = try await runCLI(["history", "import", "--junit", xctestJUnit, swiftTestingJUnit,
                                                 "--history", seeded])
        #expect(code == 0, "\(err)")
        #expect(out.contains("imported 2 runs, 0 already present"), "\(out)")
        (code, out, _) = try await runCLI(["history", "import", "--junit", xctestJUnit, "--history", seeded])
        #expect(code == 0 && out.contains("imported 0 runs, 1 already present"), "\(out)")

        (code, out, err) = try await runCLI(["history", "export", "--out", export, "--history", seeded])
        #expect(code == 0, "\(err)")
        #expect(out.contains("exported 2 runs"), "\(out)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
                == ["h.json", "seeded.sqlite", "seeded.sqlite-shm", "seeded.sqlite-wal"].filter {
                    FileManager.default.fileExists(atPath: dir.file($0))
                }, "no temporary file left beside the export")

        // Four shard jobs uploading the same starting history: each run once.
        (code, out, err) = try await runCLI(["history", "import", export, export, export, export, "--history", merged])
        #expect(code == 0, "\(err)")
        #expect(out.contains("imported 2 runs, 6 already present"), "\(out)")
        (code, out, _) = try await runCLI(["history", "show", "--history", merged])
        #expect(code == 0 && out.contains("IntegrationTests.DatabaseMigrationTests"), "\(out)")

        // Bad input: exit 2, a message that says what to do, and the history untouched even when good files came first.
        let truncated = dir.file("truncated.json")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: export))
        try bytes.prefix(bytes.count / 3).write(to: URL(fileURLWithPath: truncated))
        let fresh = dir.file("fresh.sqlite")
        (code, _, err) = try await runCLI(["history", "import", export, truncated, "--history", fresh])
        #expect(code == 2)
        #expect(err.contains("truncated.json is not a history export: not valid JSON"), "\(err)")
        #expect(!FileManager.default.fileExists(atPath: fresh), "nothing was imported, not even the good file")

        for (args, expected) in [
            (["history", "import", dir.file("missing.json")], "no such file"),
            (["history", "import", xctestJUnit], "JUnit files are imported with --junit"),
            (["history", "import", "--junit", export], "it is JSON"),
            (["history", "import"], "no file to import"),
            (["history", "import", export, "--destination", "x"], "--destination applies to --junit only"),
            (["history", "export", "--out", dir.file("x.json"), "--history", dir.file("none.sqlite")], "no timing history"),
            (["history", "export", "--out", dir.file("no/such/folder/x.json"), "--history", seeded], "cannot write"),
        ] {
            (code, _, err) = try await runCLI(args + (args.contains("--history") ? [] : ["--history", merged]))
            #expect(code == 2, "\(args): \(code) \(err)")
            #expect(err.contains(expected), "\(args): \(err)")
        }
        (code, out, _) = try await runCLI(["history", "export", "--out", dir.file("again.json"), "--history", merged])
        #expect(code == 0 && out.contains("exported 2 runs"), "the failed imports changed nothing: \(out)")
    }

    @Test func theJUnitDestinationComesFromTheConfig() async throws {
        let dir = try TempDir()
        let config = dir.file("fanout.yml")
        try """
            history: \(dir.file("h.sqlite"))
            destinations:
              - { name: debug, configuration: debug }
              - { name: release, configuration: release }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        var (code, out, err) = try await runCLI(["history", "import", "--junit", xctestJUnit, "--config", config])
        #expect(code == 2 && err.contains("--destination"), "several destinations: say which: \(err)")
        (code, _, err) = try await runCLI(["history", "import", "--junit", xctestJUnit, "--config", config,
                                           "--destination", "linux"])
        #expect(code == 2 && err.contains("unknown destination 'linux'"), "\(err)")
        (code, out, err) = try await runCLI(["history", "import", "--junit", xctestJUnit, "--config", config,
                                             "--destination", "release"])
        #expect(code == 0, "\(err)")
        #expect(out.contains("imported 1 run") && out.contains(dir.file("h.sqlite")), "the config's history: \(out)")
        let (store, _) = try HistoryStore.open(at: dir.file("h.sqlite"))
        #expect(try store.timingHistory(destination: "release").classes.count == 50)
    }
}
