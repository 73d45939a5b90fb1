import FanoutAgents
import FanoutCore
import FanoutRunners
import Foundation

/// Lists the tests of a built product, once per build, with each framework's runner.
public struct Discovery: Sendable {
    private let shell = LocalTransport(name: "discovery", slots: 1)

    public init() {}

    public func catalog(of product: TestProduct, destination: Destination,
                        frameworks: [Framework] = Framework.allCases) async throws(FanoutError) -> Catalog {
        var suites: [TestSuite] = []
        for framework in frameworks {
            let runner = Runners.runner(for: framework)
            var command = runner.listCommand(binary: product.binary)
            command.environment = destination.environment
            let (ending, out, err) = await shell.capture(command, timeout: 600)
            let stdout = String(decoding: out, as: UTF8.self)
            switch (framework, ending) {
            case (_, .exited(0)):
                break
            case (.swiftTesting, .exited):
                // A product with no Swift Testing tests (or a toolchain without it) lists nothing: not an error.
                continue
            default:
                let tail = String(decoding: err, as: UTF8.self).split(separator: "\n").suffix(15).map(String.init)
                throw FanoutError("listing the \(framework.rawValue) tests of \(product.binary) failed (\(ending))",
                                  hint: "Run `\(command)` by hand to see why.", exitCode: .infrastructure, details: tail)
            }
            do {
                suites += try runner.parseListing(stdout)
            } catch {
                throw FanoutError("\(error)", hint: "Run `\(command)` by hand to see its output.", exitCode: .infrastructure)
            }
        }
        return Catalog(suites: suites)
    }
}
