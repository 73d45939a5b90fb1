import FanoutAgents
import FanoutCore
import FanoutRunners
import Foundation

/// Lists the tests of a built product, once per build, with each framework's runner.
public struct Discovery: Sendable {
    private let shell = LocalShell("discovery")
    /// Listings remembered between runs; nil lists every time.
    let cache: ListingCache?

    public init() { cache = nil }

    /// Listings are remembered beside the history at `historyPath` (``ListingCache``).
    public init(historyPath: String) { cache = ListingCache(historyPath: historyPath) }

    /// `testsList`: a listing made beforehand (an xcodebuild product's, on the Mac that built it), read instead of
    /// listing here.
    public func catalog(of product: TestProduct, destination: Destination, frameworks: [Framework] = Framework.swiftPM,
                        testsList: String? = nil) async throws(FanoutError) -> Catalog {
        // Each framework lists in a process of its own, all at once (a product's XCTest and Swift Testing listings
        // are two starts of the binary; in turn they cost the sum); the catalog keeps the frameworks' order.
        let listings = await withTaskGroup(of: (Int, Result<[TestSuite], FanoutError>).self) { group in
            for (index, framework) in frameworks.enumerated() {
                group.addTask { (index, await list(framework, of: product, destination: destination, testsList: testsList)) }
            }
            var listings = [Result<[TestSuite], FanoutError>?](repeating: nil, count: frameworks.count)
            for await (index, listing) in group { listings[index] = listing }
            return listings
        }
        cache?.save()
        var suites: [TestSuite] = []
        for listing in listings {
            suites += try listing?.get() ?? []
        }
        return Catalog(suites: suites)
    }

    /// One framework's tests of `product`: none when it has none (a product without Swift Testing tests).
    private func list(_ framework: Framework, of product: TestProduct, destination: Destination,
                      testsList: String?) async -> Result<[TestSuite], FanoutError> {
        let runner = Runners.runner(for: framework)
        if framework == .xcodebuild, let testsList {
            return Result { () throws(FanoutError) in try Self.read(testsList, runner: runner) }
        }
        var command = runner.listCommand(binary: product.binary, destination: destination)
        command.environment = destination.environment
        let key = cache == nil || product.members?.isEmpty == false
            ? nil : ListingCache.key(framework: framework, binary: product.binary, command: command)
        if let key, let known = cache?.listing(for: key), let suites = try? runner.parseListing(known) {
            return .success(suites)
        }
        let (ending, out, err) = await shell.capture(command, timeout: 600)
        let stdout = String(decoding: out, as: UTF8.self)
        switch (framework, ending) {
        case (_, .exited(0)):
            break
        case (.swiftTesting, .exited):
            // A product with no Swift Testing tests (or a toolchain without it) lists nothing: not an error. Only the
            // framework's own "no tests" (69) is remembered: another failure may not happen again.
            if let key, ending == .exited(69) { cache?.remember("", for: key) }
            return .success([])
        default:
            let tail = String(decoding: err, as: UTF8.self).split(separator: "\n").suffix(15).map(String.init)
            let hint = framework == .xcodebuild
                ? "Listing an .xctestrun needs Xcode 16 on this machine; elsewhere, make the list on the Mac that built it "
                    + "and give it as the destination's `tests_list` (see docs/apple-platforms.md)."
                : "Run `\(command)` by hand to see why."
            return .failure(FanoutError("listing the \(framework.rawValue) tests of \(product.binary) failed (\(ending))",
                                        hint: hint, exitCode: .infrastructure, details: tail))
        }
        do {
            let suites = try runner.parseListing(stdout)
            if let key { cache?.remember(stdout, for: key) }
            return .success(suites)
        } catch {
            return .failure(FanoutError("\(error)", hint: "Run `\(command)` by hand to see its output.", exitCode: .infrastructure))
        }
    }

    /// A listing file made beforehand.
    static func read(_ path: String, runner: any TestRunner) throws(FanoutError) -> [TestSuite] {
        let hint = "Make it on the Mac that built the product: xcodebuild test-without-building -xctestrun FILE -destination … "
            + "-enumerate-tests -test-enumeration-format json -test-enumeration-output-path \(path)"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FanoutError("cannot read the tests list \(path)", hint: hint)
        }
        do {
            return try runner.parseListing(String(decoding: data, as: UTF8.self))
        } catch {
            throw FanoutError("\(path): \(error)", hint: hint)
        }
    }
}
