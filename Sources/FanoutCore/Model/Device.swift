/// A device an xcodebuild destination runs its tests on: a simulator model and OS (`iPhone 16`, iOS 18.2), or the
/// Mac itself (`platform: macOS`). Each slot of a macOS agent gets a simulator of its own, created for the run.
public struct Device: Hashable, Codable, Sendable {
    /// xcodebuild's platform: `iOS Simulator`, `tvOS Simulator`, `watchOS Simulator`, `visionOS Simulator`, `macOS`.
    public var platform: String
    /// The device model (`iPhone 16`); empty for macOS.
    public var model: String
    /// The OS version (`18.2`); empty for macOS (the agent's own).
    public var os: String
    /// The simulator device type and runtime identifiers `xcrun simctl create` takes, when the names do not map
    /// (nil: derived from `model`, `platform` and `os`).
    public var deviceType: String?
    public var runtime: String?
    /// The simulator this slot runs on: set by the coordinator for each slot, never configured.
    public var udid: String?
    /// The tools on the agent (`xcodebuild`, `xcrun`): names looked up on the agent's PATH, or absolute paths.
    public var xcodebuild: String
    public var xcrun: String
    /// Erase the slot's simulator before every unit (a clean app state per unit), not only at creation.
    public var eraseBetweenUnits: Bool

    public init(platform: String, model: String = "", os: String = "", deviceType: String? = nil, runtime: String? = nil,
                udid: String? = nil, xcodebuild: String = "xcodebuild", xcrun: String = "xcrun",
                eraseBetweenUnits: Bool = false) {
        self.platform = platform
        self.model = model
        self.os = os
        self.deviceType = deviceType
        self.runtime = runtime
        self.udid = udid
        self.xcodebuild = xcodebuild
        self.xcrun = xcrun
        self.eraseBetweenUnits = eraseBetweenUnits
    }

    /// True when each slot needs a simulator of its own (every platform but macOS itself).
    public var isSimulator: Bool { platform.hasSuffix("Simulator") }

    /// `iPhone 16, iOS Simulator 18.2`: the device configuration results and baselines are kept under.
    public var identity: String {
        isSimulator ? "\(model), \(platform) \(os)" : platform
    }

    /// The OS name of a simulator runtime: `iOS` for `iOS Simulator`.
    public var osName: String {
        platform.hasSuffix(" Simulator") ? String(platform.dropLast(" Simulator".count)) : platform
    }

    /// `com.apple.CoreSimulator.SimRuntime.iOS-18-2`, the runtime identifier simctl lists (visionOS's runtimes are
    /// `xrOS-2-0`).
    public var runtimeIdentifier: String {
        let name = osName == "visionOS" ? "xrOS" : osName
        return runtime ?? "com.apple.CoreSimulator.SimRuntime.\(name)-" + os.split(separator: ".").joined(separator: "-")
    }

    /// `com.apple.CoreSimulator.SimDeviceType.iPhone-16`: the usual spelling of a model's identifier, letters and
    /// digits of its name joined by `-`. Only a guess for display (some models are spelled otherwise, e.g.
    /// `iPod-touch--7th-generation-`): simulators are created by the model's name, or `deviceType` when given.
    public var deviceTypeIdentifier: String {
        if let deviceType { return deviceType }
        var words: [String] = []
        var word = ""
        for c in model {
            if c.isLetter || c.isNumber { word.append(c) } else if !word.isEmpty { words.append(word); word = "" }
        }
        if !word.isEmpty { words.append(word) }
        return "com.apple.CoreSimulator.SimDeviceType." + words.joined(separator: "-")
    }

    /// xcodebuild's `-destination` value: the slot's own simulator by id once it has one, else by name and OS.
    public var destinationSpecifier: String {
        if let udid { return "platform=\(platform),id=\(udid)" }
        guard isSimulator else { return "platform=\(platform)" }
        return "platform=\(platform),name=\(model)" + (os.isEmpty ? "" : ",OS=\(os)")
    }
}
