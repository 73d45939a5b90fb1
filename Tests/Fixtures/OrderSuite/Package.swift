// swift-tools-version: 6.0
// OrderSuite: a fixture package for Fanout's order-dependence tools (`fanout bisect`, order checks under `--retries`,
// `--shuffle`). Its victims pass alone and fail after known polluters; every other test is innocent filler.
// No dependencies on purpose.
import PackageDescription

let package = Package(
    name: "OrderSuite",
    targets: [
        .testTarget(name: "OrderTests"),
    ]
)
