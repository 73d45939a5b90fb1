// swift-tools-version: 6.0
// DatabaseSuite: a fixture package whose tests share a PostgreSQL database the way integration suites do: every test
// empties a table, fills it, waits and counts it, in the database its DATABASE_URL names (through the `psql` client).
// Run in parallel against one database they see each other's rows and fail; with a database per worker (Fanout's
// slot hooks and `${FANOUT_WORKER}`) they pass. No dependencies on purpose.
import PackageDescription

let package = Package(
    name: "DatabaseSuite",
    targets: [
        .testTarget(name: "DatabaseTests"),
    ]
)
