import Foundation

/// Stands in for slow I/O (database, network, fixtures): a deterministic wait, not CPU work,
/// so the suite's timing is stable and does not depend on how busy the machine is.
/// `DEMO_LATENCY_SCALE=0.05` shortens every wait (outcomes stay the same): for checks that need outcomes, not time.
func simulateLatency(_ seconds: Double) {
    Thread.sleep(forTimeInterval: seconds * latencyScale)
}

private let latencyScale: Double = {
    guard let text = ProcessInfo.processInfo.environment["DEMO_LATENCY_SCALE"], let scale = Double(text),
          scale.isFinite, scale >= 0 else { return 1 }
    return scale
}()

/// Switches that turn the green suite into a misbehaving one (see README.md).
enum DemoEnv {
    static func isSet(_ name: String) -> Bool {
        ProcessInfo.processInfo.environment[name] == "1"
    }
}
