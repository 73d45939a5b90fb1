// swift-tools-version: 6.0
// Diamond: the fixture of selective testing (issue 24). A leaf library with a resource, two libraries on top of it,
// and three test targets: LeafTests (the leaf alone, with a fixture file it reads at run time), LeftTests (Left) and
// BothTests (Left and Right). Right also uses a product of a local package (Vendor/Tally). Changing a file must
// re-run exactly the test targets that can see it.
// Its tests pass unless an environment switch breaks them (DIAMOND_CRASH, DIAMOND_HANG: a file path that, when it
// exists, makes a test crash or block), so a run's verdict can change without any input of the package changing.
import PackageDescription

let package = Package(
    name: "Diamond",
    dependencies: [.package(path: "Vendor/Tally")],
    targets: [
        .target(name: "Leaf", resources: [.copy("Resources/greeting.txt")]),
        .target(name: "Left", dependencies: ["Leaf"]),
        .target(name: "Right", dependencies: ["Leaf", .product(name: "Tally", package: "Tally")]),
        .testTarget(name: "LeafTests", dependencies: ["Leaf"]),
        .testTarget(name: "LeftTests", dependencies: ["Left"]),
        .testTarget(name: "BothTests", dependencies: ["Left", "Right"]),
    ]
)
