import Foundation

/// Stands in for slow I/O (database, network, fixtures): a deterministic wait, not CPU work,
/// so the suite's timing is stable and does not depend on how busy the machine is.
func simulateLatency(_ seconds: Double) {
    Thread.sleep(forTimeInterval: seconds)
}

/// Switches that turn the green suite into a misbehaving one (see README.md).
enum DemoEnv {
    static func isSet(_ name: String) -> Bool {
        ProcessInfo.processInfo.environment[name] == "1"
    }
}
