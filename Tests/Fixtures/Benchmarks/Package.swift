// swift-tools-version: 6.0
// Benchmarks: the fixture of performance tests measured alone (issue 37). `SortBenchmarks` measures CPU work with
// XCTest's `measure` and is not named "performance": stable alone (each iteration takes about the same time), it
// fails XCTest's deviation rule beside the `Load*` classes, whose tests burn CPU in bursts (an iteration that meets a
// burst is slowed, one that does not is not: more than 10 % relative and 0.1 s of standard deviation).
import PackageDescription

let package = Package(
    name: "Benchmarks",
    targets: [
        .target(name: "Crunch"),
        .testTarget(name: "CrunchTests", dependencies: ["Crunch"]),
    ]
)
