import FanoutAgents
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the benchmark must stop if it is interrupted: the process groups it started and the fleets it brought up.
/// On SIGINT/SIGTERM/SIGHUP: SIGTERM to every group (a `fanout run` then stops its own tests and writes a partial
/// report), up to 3 s of grace, SIGKILL for what is left, `down.sh` for every fleet, then exit 128 + signal.
enum Interrupts {
    private struct State {
        var groups: Set<pid_t> = []
        /// fleet dir → its down.sh
        var fleets: [String: String] = [:]
    }
    private static let state = Mutex(State())
    /// Set once by `install`, before any other thread exists; kept only so the sources live on.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    static func track(_ pid: pid_t) { state.withLock { _ = $0.groups.insert(pid) } }
    static func untrack(_ pid: pid_t) { state.withLock { _ = $0.groups.remove(pid) } }
    static func trackFleet(dir: String, downScript: String) { state.withLock { $0.fleets[dir] = downScript } }
    static func untrackFleet(dir: String) { state.withLock { _ = $0.fleets.removeValue(forKey: dir) } }

    /// Installs the handlers once, at start-up.
    static func install() {
        let queue = DispatchQueue(label: "fanout-bench.signals")
        var installed: [any DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { stopEverything(signal: sig) }
            source.resume()
            installed.append(source)
        }
        sources = installed
    }

    private static func stopEverything(signal sig: Int32) {
        FileHandle.standardError.write(Data("\n[bench] interrupted: stopping what the benchmark started…\n".utf8))
        let groups = state.withLock { $0.groups }
        for g in groups { kill(-g, SIGTERM) }
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline, !state.withLock({ $0.groups.isEmpty }) { usleep(50_000) }
        LocalProcess.killAll()
        for (dir, down) in state.withLock({ $0.fleets }) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/bash")
            p.arguments = [down, "--dir", dir]
            try? p.run()
            p.waitUntilExit()
        }
        exit(128 + sig)
    }
}
