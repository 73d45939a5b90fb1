// swift-tools-version: 6.0
// Fanout: a distributed parallel test executor for Swift. The module map, who may import whom, and why:
// docs/ARCHITECTURE.md.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Fanout",
    // Built and tested on Linux (Debian 12, Swift 6.x), where CI runs. The macOS floor is what the APIs used need:
    // Synchronization's Mutex and Atomic are macOS 15 and later (Regex, Duration and Swift Testing need less). The
    // coordinator is written to build on macOS too (docs/macos.md), but no Mac has built or run it yet: that page
    // says what is unverified.
    platforms: [.macOS(.v15)],
    products: [
        // The one product users install. The benchmarks (fanout-bench) are an executable target of this package
        // only: `swift build --product fanout-bench` builds them here, and no package that depends on Fanout sees them.
        .executable(name: "fanout", targets: ["fanout"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    ],
    targets: [
        .target(name: "FanoutCore", swiftSettings: strict),
        .target(name: "FanoutRunners", dependencies: ["FanoutCore"], swiftSettings: strict),
        .target(name: "FanoutHistory", dependencies: [
            "FanoutCore", .product(name: "GRDB", package: "GRDB.swift"),
        ], swiftSettings: strict),
        .target(name: "FanoutReports", dependencies: ["FanoutCore"], swiftSettings: strict),
        // libssh2 from the system (pkg-config finds it): apt on Debian/Ubuntu, Homebrew on macOS. Only libssh2 is
        // linked; OpenSSL is reached through it (see fanout_crypto_init_without_atexit in shim.h).
        .systemLibrary(name: "CLibSSH2", pkgConfig: "libssh2",
                       providers: [.apt(["libssh2-1-dev"]), .brew(["libssh2"])]),
        .target(name: "FanoutSSH", dependencies: ["CLibSSH2"], swiftSettings: strict),
        // Not a target: Sources/FanoutObserve is C preloaded into test processes (selective testing observes what
        // they use at run time). SwiftPM would link the Swift runtime into it, and with it the runtime's crash
        // handlers into every process it enters, so scripts/build-observer.sh builds it with clang alone.
        // Queue mode's shared queue on PostgreSQL. libpq is loaded at run time (dlopen), not linked: fanout builds
        // and runs without it, and only --queue needs it (docs/ARCHITECTURE.md, "Why PostgreSQL").
        .target(name: "FanoutQueue", swiftSettings: strict),
        .target(name: "FanoutAgents", dependencies: [
            "FanoutCore", "FanoutSSH",
        ], swiftSettings: strict),
        .target(name: "FanoutCoordinator", dependencies: [
            "FanoutCore", "FanoutRunners", "FanoutHistory", "FanoutReports", "FanoutAgents", "FanoutQueue",
            .product(name: "Yams", package: "Yams"),
        ], swiftSettings: strict),
        // The CLI parses, calls the Coordinator and renders: reports through FanoutReports' writers.
        .executableTarget(name: "fanout", dependencies: [
            "FanoutCoordinator", "FanoutCore", "FanoutReports",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], swiftSettings: strict),
        // Benchmarks (not tests): generated suites, every alternative strategy, and large simulated fleets.
        .executableTarget(name: "fanout-bench", dependencies: [
            "FanoutCore", "FanoutAgents", "FanoutQueue",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], path: "Sources/FanoutBench", swiftSettings: strict),

        // Test doubles shared by test targets: a ScriptedTransport that plays scripted unit outputs.
        .target(name: "FanoutTestSupport", dependencies: ["FanoutCore", "FanoutAgents"], path: "Tests/FanoutTestSupport",
                swiftSettings: strict),
        .testTarget(name: "FanoutCoreTests", dependencies: ["FanoutCore"], swiftSettings: strict),
        .testTarget(name: "FanoutRunnersTests", dependencies: ["FanoutRunners", "FanoutCore"], swiftSettings: strict),
        .testTarget(name: "FanoutHistoryTests", dependencies: ["FanoutHistory", "FanoutCore", "FanoutTestSupport"], swiftSettings: strict),
        .testTarget(name: "FanoutAgentsTests", dependencies: ["FanoutAgents", "FanoutCore", "FanoutTestSupport"], swiftSettings: strict),
        .testTarget(name: "FanoutSSHTests", dependencies: ["FanoutSSH"], swiftSettings: strict),
        .testTarget(name: "FanoutQueueTests", dependencies: ["FanoutQueue", "FanoutTestSupport"], swiftSettings: strict),
        .testTarget(name: "FanoutReportsTests", dependencies: ["FanoutReports", "FanoutCore", "FanoutTestSupport"], swiftSettings: strict),
        // The Coordinator's fast tests: the dispatcher, the config, the run loop on scripted agents and a virtual
        // clock, and the module map's rules; no process, no agent, no fixture build (under a minute on its own:
        // `swift test --filter FanoutCoordinatorTests`).
        .testTarget(name: "FanoutCoordinatorTests", dependencies: [
            "FanoutCoordinator", "FanoutAgents", "FanoutCore", "FanoutHistory", "FanoutRunners", "FanoutTestSupport",
        ], swiftSettings: strict),
        .testTarget(name: "FanoutIntegrationTests", dependencies: [
            "FanoutCoordinator", "FanoutAgents", "FanoutCore", "FanoutRunners", "FanoutHistory", "FanoutReports",
            "FanoutSSH", "FanoutTestSupport", "FanoutQueue",
            .product(name: "Yams", package: "Yams"), // reads config/ci/github-actions.yml to run its steps
        ], swiftSettings: strict),
    ]
)
