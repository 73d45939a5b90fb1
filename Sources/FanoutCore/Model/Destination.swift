/// Where tests run: a device kind, toolchain, build configuration or environment. Results, timing history and
/// performance baselines are all kept per destination.
public struct Destination: Hashable, Codable, Sendable, CustomStringConvertible {
    public var name: String
    /// Environment variables passed to every test process of this destination.
    public var environment: [String: String]
    /// Extra arguments passed to the test binary before the selector.
    public var arguments: [String]

    public init(name: String, environment: [String: String] = [:], arguments: [String] = []) {
        self.name = name
        self.environment = environment
        self.arguments = arguments
    }

    /// The destination of the embedded default: this machine's local slots.
    public static let local = Destination(name: "local")

    public var description: String { name }
}
