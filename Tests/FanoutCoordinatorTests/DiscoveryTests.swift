import FanoutCoordinator
import FanoutCore
import FanoutRunners
import FanoutTestSupport
import Foundation
import Testing

/// Discovery lists a product's frameworks at once.
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
}
