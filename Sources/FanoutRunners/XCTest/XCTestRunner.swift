import FanoutCore
import Foundation

/// XCTest on Linux: lists with `--dump-tests-json`, runs a comma-separated selector given as the LAST argument
/// (only the last positional argument counts), reports on standard output.
public struct XCTestRunner: TestRunner {
    public init() {}

    public var framework: Framework { .xctest }

    public func listCommand(binary: String, destination: Destination) -> Command {
        Command(executable: binary, arguments: ["--dump-tests-json"])
    }

    public func parseListing(_ output: String) throws(ListingError) -> [TestSuite] {
        struct Node: Decodable {
            var name: String
            var tests: [Node]?
        }
        // The binary may print other lines before the JSON (a warning, a log line): read from the first brace.
        guard let start = output.firstIndex(of: "{") else {
            throw ListingError(framework: .xctest, reason: "no JSON in the output of --dump-tests-json")
        }
        guard !JSONNesting.exceedsLimit(output[start...]) else {
            throw ListingError(framework: .xctest, reason: "the output of --dump-tests-json nests deeper than a test list")
        }
        let root: Node
        do {
            root = try JSONDecoder().decode(Node.self, from: Data(output[start...].utf8))
        } catch {
            throw ListingError(framework: .xctest, reason: "the output of --dump-tests-json is not the expected JSON (\(error))")
        }
        // All tests → <binary>.xctest → Module.Class → testMethod
        var suites: [SuiteID: [String]] = [:]
        var order: [SuiteID] = []
        for bundle in root.tests ?? [] {
            for cls in bundle.tests ?? [] {
                // `Module.Class`: a name without either part can never be selected, nor can a nameless test.
                guard let dot = cls.name.firstIndex(of: "."), dot != cls.name.startIndex,
                      cls.name.index(after: dot) != cls.name.endIndex else { continue }
                let id = SuiteID(module: String(cls.name[..<dot]), name: String(cls.name[cls.name.index(after: dot)...]))
                if suites[id] == nil { order.append(id) }
                suites[id, default: []] += (cls.tests ?? []).map(\.name).filter { !$0.isEmpty }
            }
        }
        return order.map { TestSuite(id: $0, framework: .xctest, tests: suites[$0] ?? []) }
    }

    public func command(for unit: WorkUnit, binary: String, destination: Destination) throws(RunnerError) -> Command {
        guard unit.framework == .xctest else { throw RunnerError("XCTestRunner cannot run a \(unit.framework) unit") }
        guard unit.testCount > 0 else { throw RunnerError("unit \(unit.id) holds no test: a unit must select at least one") }
        return Command(executable: binary, arguments: destination.arguments + [Self.selector(for: unit)],
                       environment: SwiftRuntime.environment(for: destination))
    }

    /// `Mod.ClassA,Mod.ClassB/testX,Mod.ClassB/testY`: whole classes by name, parts of classes by method.
    public static func selector(for unit: WorkUnit) -> String {
        unit.items.flatMap { item -> [String] in
            item.isWholeSuite ? [item.suite.description] : item.tests.map { "\(item.suite)/\($0)" }
        }.joined(separator: ",")
    }

    public func makeParser(for unit: WorkUnit) -> any OutputParser {
        XCTestOutputParser(unit: unit)
    }
}
