// swift-tools-version: 6.0
// DemoSuite: a fixture package for Fanout. It imitates a real, long, unevenly
// timed test suite (XCTest + Swift Testing). No dependencies on purpose (TrapCatcher is its own small C target).
import PackageDescription

let package = Package(
    name: "DemoSuite",
    products: [
        .library(name: "DemoKit", targets: ["DemoKit"]),
    ],
    targets: [
        .target(name: "DemoKit"),
        // Catches a trap the way precondition-testing libraries do (signal handler + siglongjmp).
        .target(name: "TrapCatcher"),
        .testTarget(name: "DemoKitTests", dependencies: ["DemoKit", "TrapCatcher"]),
        .testTarget(name: "IntegrationTests", dependencies: ["DemoKit"]),
    ]
)
