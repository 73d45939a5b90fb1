// swift-tools-version: 6.0
// RunTime: the fixture of selective testing's run-time inputs (issue 36). Its tests use what no target graph shows:
// - CLITests runs the package's own executable `greeter` from the products folder, with no dependency on it;
// - GoldenTests reads Golden/shout.txt, outside every target folder, by a path made from #filePath;
// - WordsTests uses its library only.
// A change to greeter must re-run CLITests, a change to the golden file GoldenTests, and neither WordsTests.
import PackageDescription

let package = Package(
    name: "RunTime",
    targets: [
        .target(name: "Words"),
        .executableTarget(name: "greeter"),
        .testTarget(name: "CLITests"),
        .testTarget(name: "GoldenTests", dependencies: ["Words"]),
        .testTarget(name: "WordsTests", dependencies: ["Words"]),
    ]
)
