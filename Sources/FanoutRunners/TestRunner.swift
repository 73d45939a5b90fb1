import FanoutCore

/// Turns a test process's output into events as it arrives. Chunks may split lines anywhere.
public protocol OutputParser: Sendable {
    mutating func consume(stdout chunk: [UInt8]) -> [TestEvent]
    mutating func consume(stderr chunk: [UInt8]) -> [TestEvent]
    /// The process ended: flush whatever is pending.
    mutating func finish() -> [TestEvent]
    /// Files the tests attached that came back with the output (after `finish()`), by test.
    mutating func takeAttachments() -> [TestID: [AttachedFile]]
    /// What of the standard output consumed since the last call belongs in the unit's log, when the parser leaves
    /// something out (machine-readable payloads); nil: all of it.
    mutating func takeLog() -> [UInt8]?
}

extension OutputParser {
    public mutating func takeAttachments() -> [TestID: [AttachedFile]] { [:] }
    public mutating func takeLog() -> [UInt8]? { nil }
}

/// An adapter for one test framework: how to list its tests, the command that runs one unit, and the parser of
/// that command's output.
public protocol TestRunner: Sendable {
    var framework: Framework { get }
    /// The command that lists the tests of a built product, as they would run on `destination`.
    func listCommand(binary: String, destination: Destination) -> Command
    /// The suites found in the listing command's standard output.
    func parseListing(_ output: String) throws(ListingError) -> [TestSuite]
    /// The command that runs exactly the tests of `unit`, and nothing else.
    func command(for unit: WorkUnit, binary: String, destination: Destination) throws(RunnerError) -> Command
    func makeParser(for unit: WorkUnit) -> any OutputParser
}

public struct ListingError: Error, Sendable, CustomStringConvertible {
    public var framework: Framework
    public var reason: String

    public init(framework: Framework, reason: String) {
        self.framework = framework
        self.reason = reason
    }

    public var description: String { "could not read the \(framework.rawValue) test list: \(reason)" }
}

public struct RunnerError: Error, Sendable, CustomStringConvertible {
    public var reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}

/// The runners Fanout knows, by framework.
public enum Runners {
    public static func runner(for framework: Framework) -> any TestRunner {
        switch framework {
        case .xctest: XCTestRunner()
        case .swiftTesting: SwiftTestingRunner()
        case .xcodebuild: XcodebuildRunner()
        }
    }
}
