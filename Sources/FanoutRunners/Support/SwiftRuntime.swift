import FanoutCore

/// What every Swift test process gets unless its destination says otherwise.
enum SwiftRuntime {
    /// A crash report a person can read in a test report: the crashed thread's frames with file:line, no
    /// registers, no image list, no colour, never waiting for a debugger (~20 lines instead of ~70).
    static let backtrace = "enable=yes,interactive=no,threads=crashed,registers=none,images=none,limit=30,top=5,color=no"

    static func environment(for destination: Destination) -> [String: String] {
        var env = destination.environment
        if env["SWIFT_BACKTRACE"] == nil { env["SWIFT_BACKTRACE"] = backtrace }
        return env
    }
}
