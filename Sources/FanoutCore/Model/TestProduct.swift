/// A built test product: the binary and the files that must sit next to it.
public struct TestProduct: Sendable, Hashable {
    /// The `.xctest` executable.
    public var binary: String
    /// The folder the binary was built in (resources and other products live there).
    public var directory: String

    public init(binary: String) {
        self.binary = binary
        var dir = binary
        if let slash = dir.lastIndex(of: "/") { dir = String(dir[..<slash]) } else { dir = "." }
        self.directory = dir
    }
}
