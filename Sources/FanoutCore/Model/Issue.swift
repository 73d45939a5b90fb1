/// A place in a source file.
public struct SourceLocation: Hashable, Codable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int

    public init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    public var description: String { "\(file):\(line)" }
}

/// Something a test recorded or Fanout observed: an assertion failure, a thrown error, a crash, a time-out.
public struct Issue: Hashable, Codable, Sendable {
    public enum Kind: String, Codable, Sendable, Hashable {
        /// A failed assertion or expectation (`XCTAssert…`, `#expect`).
        case assertion
        /// An error thrown out of the test.
        case thrown
        /// An XCTest expectation that was not fulfilled in time (an ordinary test failure).
        case expectationTimeout = "expectation-timeout"
        /// The test process died while this test was running.
        case crash
        /// Fanout killed the unit because it ran past its time limit while this test was running.
        case timeout
        /// Anything else a framework reports as a failure, or a known issue that does not fail the test.
        case other
    }

    public var kind: Kind
    public var message: String
    public var location: SourceLocation?
    /// Issues that do not fail the test (Swift Testing known issues, warnings).
    public var isFailure: Bool

    public init(kind: Kind, message: String, location: SourceLocation? = nil, isFailure: Bool = true) {
        self.kind = kind
        self.message = message
        self.location = location
        self.isFailure = isFailure
    }
}
