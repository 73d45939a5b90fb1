/// Where tests run: a device kind, toolchain, build configuration or environment. Results, timing history and
/// performance baselines are all kept per destination.
public struct Destination: Hashable, Codable, Sendable, CustomStringConvertible {
    public var name: String
    /// Environment variables passed to every test process of this destination.
    public var environment: [String: String]
    /// Extra arguments passed to the test binary before the selector.
    public var arguments: [String]

    /// The device the tests run on (an xcodebuild destination: a simulator model and OS, or a Mac); nil for a
    /// SwiftPM product, which runs on its agent itself.
    public var device: Device?

    public init(name: String, environment: [String: String] = [:], arguments: [String] = [], device: Device? = nil) {
        self.name = name
        self.environment = environment
        self.arguments = arguments
        self.device = device
    }

    /// The hardware class its performance baselines are kept under: the device's identity (model and OS, as Xcode
    /// keys baselines per device) when it runs on one, else the agent's own (nil).
    public var deviceClass: String? { device?.identity }

    /// The destination of the embedded default: this machine's local slots.
    public static let local = Destination(name: "local")

    public var description: String { name }
}
