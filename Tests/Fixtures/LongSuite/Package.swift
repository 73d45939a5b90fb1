// swift-tools-version: 6.0
// LongSuite: tests that run long for good reasons (computing, blocking silently) and tests that hang (blocked
// forever, a busy infinite loop), each behind an environment switch, so Fanout's time limits can be tried on real
// processes. Every switch off: every test passes in a moment. FlakyTests: tests that fail with known probabilities,
// drawn from FANOUT_SEED (without it they pass).
import PackageDescription

let package = Package(
    name: "LongSuite",
    targets: [
        .testTarget(name: "LongTests"),
        .testTarget(name: "FlakyTests"),
    ]
)
