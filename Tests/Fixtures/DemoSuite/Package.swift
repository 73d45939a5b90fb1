// swift-tools-version: 6.0
// DemoSuite: a fixture package for Fanout. It imitates a real, long, unevenly
// timed test suite (XCTest + Swift Testing). No dependencies on purpose.
import PackageDescription

let package = Package(
    name: "DemoSuite",
    products: [
        .library(name: "DemoKit", targets: ["DemoKit"]),
    ],
    targets: [
        .target(name: "DemoKit"),
        .testTarget(name: "DemoKitTests", dependencies: ["DemoKit"]),
        .testTarget(name: "IntegrationTests", dependencies: ["DemoKit"]),
    ]
)
