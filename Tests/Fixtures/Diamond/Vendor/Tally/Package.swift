// swift-tools-version: 6.0
// Tally: a local (path) dependency of the Diamond fixture, so that a package dependency's change is tried too.
import PackageDescription

let package = Package(
    name: "Tally",
    products: [.library(name: "Tally", targets: ["Tally"])],
    targets: [.target(name: "Tally")]
)
