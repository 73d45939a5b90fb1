/// A file a test attached (a UI test's failure screenshot), as it came back from the agent.
public struct AttachedFile: Sendable, Hashable {
    /// A file name safe on any file system: letters, digits, `.`, `-` and `_`, never starting with a dot.
    public var name: String
    public var bytes: [UInt8]

    public init(name: String, bytes: [UInt8]) {
        self.name = Self.safeName(name)
        self.bytes = bytes
    }

    public static func safeName(_ name: String) -> String {
        var out = String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" }.prefix(120))
        while out.hasPrefix(".") { out.removeFirst() }
        return out.isEmpty ? "attachment" : out
    }
}
