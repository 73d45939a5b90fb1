@testable import FanoutCoordinator
import FanoutCore
import FanoutRunners
import FanoutTestSupport
import Foundation
import Testing

/// Discovery lists a product's frameworks at once, and remembers a listing while what it came from is unchanged.
@Suite(.timeLimit(.minutes(1))) struct DiscoveryTests {
    /// A stand-in test product (captured listings): its XCTest listing waits (at most 30 s) until its Swift Testing
    /// listing has started, and fails when that never happens. Listed in turn, as before, discovery fails.
    @Test func bothFrameworksAreListedAtOnce() async throws {
        let dir = try TempDir()
        let captured = repositoryRoot.appendingPathComponent("Tests/Fixtures/Captured").path
        let started = dir.file("swift-testing-listing-started"), binary = dir.file("FakePackageTests.xctest")
        let script = """
            #!/bin/sh
            case "$*" in
              *swift-testing*) : > \(ShellQuote.quote(started)); exec cat \(ShellQuote.quote(captured + "/swift-testing-list.txt")) ;;
              *--dump-tests-json*)
                i=0
                while [ ! -e \(ShellQuote.quote(started)) ]; do
                  i=$((i + 1))
                  if [ "$i" -gt 600 ]; then echo "the Swift Testing listing never started" >&2; exit 1; fi
                  sleep 0.05
                done
                exec cat \(ShellQuote.quote(captured + "/dump-tests.json")) ;;
            esac
            exit 64

            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: binary))
        chmod(binary, 0o755)
        let catalog = try await Discovery().catalog(of: TestProduct(binary: binary), destination: Destination(name: "local"))
        let xctest = try Runners.runner(for: .xctest).parseListing(
            String(contentsOfFile: captured + "/dump-tests.json", encoding: .utf8))
        let swiftTesting = try Runners.runner(for: .swiftTesting).parseListing(
            String(contentsOfFile: captured + "/swift-testing-list.txt", encoding: .utf8))
        #expect(!xctest.isEmpty && !swiftTesting.isEmpty)
        #expect(catalog == Catalog(suites: xctest + swiftTesting), "both listings, each whole")
    }

    /// A stand-in product that writes down each time it is listed: a second discovery of the same file reads the
    /// listing remembered beside the history; the binary written again (same bytes), a shared library beside it
    /// changed, or another environment, and it is listed again; a listing that failed is never remembered.
    @Test func aListingIsRememberedWhileItsFilesAndCommandAreTheSame() async throws {
        let dir = try TempDir()
        let captured = repositoryRoot.appendingPathComponent("Tests/Fixtures/Captured").path
        let product = dir.file("bin/FakePackageTests.xctest"), calls = dir.file("calls"), fail = dir.file("fail")
        try FileManager.default.createDirectory(atPath: dir.file("bin"), withIntermediateDirectories: true)
        let script = """
            #!/bin/sh
            echo "$*" >> \(ShellQuote.quote(calls))
            [ -e \(ShellQuote.quote(fail)) ] && exit 3
            case "$*" in
              *swift-testing*) exec cat \(ShellQuote.quote(captured + "/swift-testing-list.txt")) ;;
              *--dump-tests-json*) exec cat \(ShellQuote.quote(captured + "/dump-tests.json")) ;;
            esac
            exit 64

            """
        func write() throws {
            try? FileManager.default.removeItem(atPath: product)
            try Data(script.utf8).write(to: URL(fileURLWithPath: product))
            chmod(product, 0o755)
        }
        try write()
        func listings() throws -> Int {
            (try? String(contentsOfFile: calls, encoding: .utf8))?.split(separator: "\n").count ?? 0
        }
        let history = dir.file("h/history.sqlite")
        let local = Destination(name: "local")
        let first = try await Discovery(historyPath: history).catalog(of: TestProduct(binary: product), destination: local)
        #expect(try listings() == 2, "XCTest and Swift Testing, once each")
        #expect(FileManager.default.fileExists(atPath: dir.file("h/listing-cache.json")))
        let again = try await Discovery(historyPath: history).catalog(of: TestProduct(binary: product), destination: local)
        #expect(again == first)
        #expect(try listings() == 2, "remembered: the binary was not started again")

        try write()
        _ = try await Discovery(historyPath: history).catalog(of: TestProduct(binary: product), destination: local)
        #expect(try listings() == 4, "the binary written again (the same bytes): listed again")

        try Data("v1".utf8).write(to: URL(fileURLWithPath: dir.file("bin/libShared.so")))
        _ = try await Discovery(historyPath: history).catalog(of: TestProduct(binary: product), destination: local)
        #expect(try listings() == 6, "a shared library beside it is new: listed again")
        #expect(ListingCache(historyPath: history).count == 2, "one listing per framework: the older states are gone")

        let other = Destination(name: "local", environment: ["FLAG": "1"])
        _ = try await Discovery(historyPath: history).catalog(of: TestProduct(binary: product), destination: other)
        #expect(try listings() == 8, "another environment: listed again")
        _ = try await Discovery(historyPath: history).catalog(of: TestProduct(binary: product), destination: other)
        #expect(try listings() == 8)

        try Data().write(to: URL(fileURLWithPath: fail))
        try write()
        await #expect(throws: FanoutError.self) {
            try await Discovery(historyPath: history).catalog(of: TestProduct(binary: product), destination: local)
        }
        try FileManager.default.removeItem(atPath: fail)
        _ = try await Discovery(historyPath: history).catalog(of: TestProduct(binary: product), destination: local)
        #expect(try listings() == 12, "the failed listing was not remembered: listed again")
        _ = try await Discovery().catalog(of: TestProduct(binary: product), destination: local)
        #expect(try listings() == 14, "without a history, nothing is remembered")
    }
}
