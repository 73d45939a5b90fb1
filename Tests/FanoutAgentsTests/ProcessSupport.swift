import Foundation

/// True once the process no longer exists or is a zombie waiting to be reaped (waits up to `seconds`).
func processIsGone(_ pid: pid_t, within seconds: Double = 3) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if kill(pid, 0) != 0 { return true }
        if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
           let close = stat.lastIndex(of: ")"), stat[stat.index(close, offsetBy: 2)] == "Z" { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return false
}

/// Runs `line` in a shell that leads its own session, as sshd starts every non-pty session: `setsid` on a
/// process that is not a group leader (Foundation's Process does not make one) calls setsid() without forking.
/// Returns how it ended (exit status or signal) and its standard output.
func runAsSessionLeader(_ line: String) async throws -> (status: Int32, signaled: Bool, stdout: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
    p.arguments = ["/bin/sh", "-c", line]
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    let data: Data = await withCheckedContinuation { c in
        DispatchQueue.global().async { c.resume(returning: out.fileHandleForReading.readDataToEndOfFile()) }
    }
    await withCheckedContinuation { c in DispatchQueue.global().async { p.waitUntilExit(); c.resume() } }
    return (p.terminationStatus, p.terminationReason == .uncaughtSignal, String(decoding: data, as: UTF8.self))
}
