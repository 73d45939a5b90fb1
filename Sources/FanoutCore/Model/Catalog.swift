/// A test class or suite found in a built product, with its tests in the order the binary runs them.
public struct TestSuite: Hashable, Codable, Sendable {
    public var id: SuiteID
    public var framework: Framework
    public var tests: [String]

    public init(id: SuiteID, framework: Framework, tests: [String]) {
        self.id = id
        self.framework = framework
        self.tests = tests
    }

    public var testIDs: [TestID] { tests.map { TestID(suite: id, name: $0) } }
}

/// Everything discovery found in one test product.
public struct Catalog: Hashable, Codable, Sendable {
    public var suites: [TestSuite]

    public init(suites: [TestSuite]) {
        self.suites = suites.sorted { ($0.framework, $0.id) < ($1.framework, $1.id) }
    }

    public var testCount: Int { suites.reduce(0) { $0 + $1.tests.count } }

    public func suite(_ id: SuiteID, framework: Framework) -> TestSuite? {
        suites.first { $0.id == id && $0.framework == framework }
    }

    /// Keeps the suites whose `Module.Class` name passes `keep`; suites with no tests are dropped.
    public func filter(_ keep: (TestSuite) -> Bool) -> Catalog {
        Catalog(suites: suites.filter { !$0.tests.isEmpty && keep($0) })
    }
}
