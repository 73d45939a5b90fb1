/// The test framework a suite belongs to. It decides which runner lists, runs and parses it.
public enum Framework: String, Codable, Sendable, Hashable, CaseIterable, Comparable {
    case xctest
    case swiftTesting = "swift-testing"
    /// XCTest and Swift Testing tests of an Apple-platform test product (`.xctestrun`), run by `xcodebuild` on a
    /// simulator or a Mac.
    case xcodebuild

    /// The frameworks a SwiftPM test product (`<Package>PackageTests.xctest`) holds.
    public static let swiftPM: [Framework] = [.xctest, .swiftTesting]

    public static func < (lhs: Framework, rhs: Framework) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A test class (XCTest) or suite (Swift Testing), always qualified by its module:
/// class names repeat across test modules in real suites.
public struct SuiteID: Hashable, Codable, Sendable, Comparable, CustomStringConvertible {
    public var module: String
    /// The class or suite name. Nested Swift Testing suites use `/` between levels (`Outer/Inner`).
    public var name: String

    public init(module: String, name: String) {
        self.module = module
        self.name = name
    }

    /// `Module.Class`, the form filters match and XCTest selectors take.
    public var description: String { "\(module).\(name)" }

    /// The suite name of Swift Testing functions declared outside any suite, so they still belong to a class-like
    /// unit (`Module.(top level)/free()`).
    public static let swiftTestingTopLevel = "(top level)"

    public static func < (lhs: SuiteID, rhs: SuiteID) -> Bool {
        (lhs.module, lhs.name) < (rhs.module, rhs.name)
    }
}

/// One test method or test function: `Module.Class/testName`.
public struct TestID: Hashable, Codable, Sendable, Comparable, CustomStringConvertible {
    public var suite: SuiteID
    public var name: String

    public init(suite: SuiteID, name: String) {
        self.suite = suite
        self.name = name
    }

    public init(module: String, suite: String, name: String) {
        self.init(suite: SuiteID(module: module, name: suite), name: name)
    }

    public var description: String { "\(suite)/\(name)" }

    public static func < (lhs: TestID, rhs: TestID) -> Bool {
        (lhs.suite, lhs.name) < (rhs.suite, rhs.name)
    }
}
