/// A built test product: the binary and the files that must sit next to it.
public struct TestProduct: Sendable, Hashable {
    /// The `.xctest` executable, or an `.xctestrun` file (Apple platforms).
    public var binary: String
    /// The folder the binary was built in (resources and other products live there).
    public var directory: String

    /// The entries of `directory` that travel with the binary, when whoever made the product knows them (an
    /// `.xctestrun` names its folders); nil: the binary's usual neighbours (resources, libraries, executables).
    public var members: [String]?

    public init(binary: String, members: [String]? = nil) {
        self.binary = binary
        var dir = binary
        if let slash = dir.lastIndex(of: "/") { dir = String(dir[..<slash]) } else { dir = "." }
        self.directory = dir
        self.members = members
    }
}
